"""`build/<env>/rollout-state.json`: what a rollout did, so a stopped one resumes after its last done wave."""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tools.plan.stackfile import stack_files

STATE_FILE = "rollout-state.json"


@dataclass(frozen=True)
class Identity:
    """What was rolled out: a resume only skips waves done for the same commit and Pulumi files (the environment's
    and every stack's own)."""

    commit: str
    config_hash: str


def identity_of(project_dir: Path, env_name: str) -> Identity:
    """The commit, and the environment file with every stack's own file (`pulumi config set --secret -s <stack>`
    edits one without a commit; each stack reads its own)."""
    digest = hashlib.sha256((project_dir / f"Pulumi.{env_name}.yaml").read_bytes())
    for stack_file in stack_files(project_dir, env_name):
        digest.update(stack_file.name.encode() + b"\0" + stack_file.read_bytes())
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=project_dir, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return Identity(commit, digest.hexdigest())


@dataclass(frozen=True)
class Step:
    """One row of the summary table: a stack's preview or up, or a gate."""

    stack: str
    wave: str
    action: str
    ok: bool
    result: str
    seconds: float


@dataclass
class RolloutState:
    environment: str
    commit: str
    config_hash: str
    waves_done: list[str] = field(default_factory=list)
    stopped_at: str | None = None  # the wave the last run stopped in
    steps: list[Step] = field(default_factory=list)
    # The SLO gate's verdict per wave and gateway (tools/rollout/slo.py SloResult.to_json): measured and allowed
    # values, or why a region was not load-tested; never a key.
    slo: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> str:
        data = asdict(self)
        return json.dumps(
            {
                "environment": self.environment,
                "commit": self.commit,
                "configHash": self.config_hash,
                "wavesDone": self.waves_done,
                "stoppedAt": self.stopped_at,
                "steps": data["steps"],
                "slo": self.slo,
            },
            indent=2,
        )

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json() + "\n")

    def matches(self, identity: Identity) -> bool:
        return (self.commit, self.config_hash) == (identity.commit, identity.config_hash)


def load_state(path: Path) -> RolloutState | None:
    """The last run's state, or None when there is none (or it is not a state file)."""
    try:
        data = json.loads(path.read_text())
        return RolloutState(
            environment=data["environment"],
            commit=data["commit"],
            config_hash=data["configHash"],
            waves_done=list(data["wavesDone"]),
            stopped_at=data.get("stoppedAt"),
            steps=[Step(**s) for s in data.get("steps", [])],
            slo=list(data.get("slo", [])),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None

"""What the rollout asks of Pulumi, as a small protocol: the real one drives `pulumi.automation`, tests a fake."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from stacks.config import BOOTSTRAP_VARIABLE
from tools.policy_pack import PACK_DIR


@dataclass(frozen=True)
class StepResult:
    """The outcome of one `preview` or `up`: `summary` for the table, `detail` (the error) when it failed."""

    ok: bool
    summary: str = ""
    detail: str = ""


class StackOps(Protocol):
    def preview(self) -> StepResult: ...

    def up(self) -> StepResult: ...

    def bootstrap(self, targets: list[str]) -> StepResult:
        """`pulumi up --target` of these URNs with the program in its network mode (INFERENCE_PLATFORM_BOOTSTRAP=network:
        a network-first step, tools/rollout/bootstrap.py)."""
        ...

    def outputs(self) -> Mapping[str, Any]: ...


class Workspace(Protocol):
    def select_stack(self, name: str) -> StackOps: ...


def change_summary(changes: Mapping[Any, int] | None) -> str:
    """`{OpType.CREATE: 3, "same": 10}` -> `create 3, same 10`: what the engine reports per operation (a preview's
    keys are `OpType` members, whose str() is `OpType.CREATE`; an update's are plain strings)."""
    named = {getattr(op, "value", op): n for op, n in (changes or {}).items()}
    return ", ".join(f"{op} {n}" for op, n in sorted(named.items()) if n) or "no changes"


class PulumiStack:
    """One stack through the Automation API: previews and updates run the policy pack folder (`make policy-pack`),
    like the CI preview."""

    def __init__(self, *, stack: Any, policy_pack: Path, policy_config: Path, on_output: Callable[[str], None]):
        self._stack = stack
        self._policy = {"policy_packs": [str(policy_pack)], "policy_pack_configs": [str(policy_config)]}
        self._on_output = on_output

    def preview(self) -> StepResult:
        from pulumi.automation import CommandError

        try:
            result = self._stack.preview(on_output=self._on_output, **self._policy)
        except CommandError as exc:
            return StepResult(False, "preview failed", _last_line(str(exc)))
        return StepResult(True, change_summary(result.change_summary))

    def up(self) -> StepResult:
        return self._up()

    def bootstrap(self, targets: list[str]) -> StepResult:
        variables = self._stack.workspace.env_vars  # what the CLI, and so the program, runs with
        variables[BOOTSTRAP_VARIABLE] = "network"
        try:
            return self._up(target=targets)
        finally:
            variables.pop(BOOTSTRAP_VARIABLE, None)

    def _up(self, **targets: Any) -> StepResult:
        from pulumi.automation import CommandError

        try:
            result = self._stack.up(on_output=self._on_output, **self._policy, **targets)
        except CommandError as exc:
            return StepResult(False, "up failed", _last_line(str(exc)))
        ok = result.summary.result == "succeeded"
        return StepResult(ok, change_summary(result.summary.resource_changes), "" if ok else result.summary.message)

    def outputs(self) -> Mapping[str, Any]:
        return {key: output.value for key, output in self._stack.outputs().items()}


class PulumiWorkspace:
    """Stacks of the project directory; each derives its slice from its name, so none needs its own config."""

    def __init__(self, *, project_dir: Path, policy_config: Path, on_output: Callable[[str], None]):
        self._project_dir = project_dir
        self._policy_config = policy_config
        self._on_output = on_output

    def select_stack(self, name: str) -> StackOps:
        from pulumi import automation

        try:
            stack = automation.create_or_select_stack(stack_name=name, work_dir=str(self._project_dir))
        except (automation.CommandError, OSError) as exc:  # no CLI, no login, no backend
            return Unselectable(f"select stack {name}: {_last_line(str(exc))}")
        return PulumiStack(
            stack=stack,
            policy_pack=self._project_dir / PACK_DIR,
            policy_config=self._policy_config,
            on_output=self._on_output,
        )


@dataclass(frozen=True)
class Unselectable:
    """A stack the CLI could not select: its first step fails with the reason, so the rollout stops there."""

    reason: str

    def preview(self) -> StepResult:
        return StepResult(False, "not selected", self.reason)

    def up(self) -> StepResult:
        return StepResult(False, "not selected", self.reason)

    def bootstrap(self, targets: list[str]) -> StepResult:
        return StepResult(False, "not selected", self.reason)

    def outputs(self) -> Mapping[str, Any]:
        return {}


def _last_line(message: str) -> str:
    """The engine's error text ends with the reason; the table has room for one line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return lines[-1] if lines else message

"""`python -m tools.rehearsal ENV`: replay ENV's rollout on local control planes built from the pinned upstream
Go modules (`make rehearsal-tools`), write build/ENV/rehearsal.json; exit 1 when a check fails, 2 on invalid
input or missing binaries."""

from __future__ import annotations

import argparse
import faulthandler
import signal
import sys
from pathlib import Path

from rich.console import Console

from components.config.base import ConfigError
from components.config.stackfile import PlanInputError
from components.domain.waves import rollout_waves
from components.k8s.names import cluster_name
from tools.plan.engine import keep_heap_until_exit
from tools.plan.model import Plan
from tools.plan.runner import PROJECT_DIR, build_plan
from tools.plan.stackfile import input_error_lines, load_stack_config
from tools.rehearsal import cache, preflight
from tools.rehearsal.cloud import load_balancer_address
from tools.rehearsal.pki import TlsResources
from tools.rehearsal.runner import Rehearsal
from tools.rollout.__main__ import load_spec

EXIT_INVALID_INPUT = 2


def rehearsal_plan(project_dir: Path, env_name: str) -> Plan:
    """The environment's plan as `make plan` evaluates it, with working key material
    (the tls provider's resources computed), load balancer addresses as the rehearsal's cloud stand-in gives them,
    secret inputs in plain text, since the rehearsal applies them, and inputs set to None kept, as the engine
    hands them to the provider (a Helm value set to null deletes the chart's default)."""
    env = load_spec(project_dir, env_name)
    regions = {cluster_name(env_name, r): r for r in env.regions}

    def service(_typ: str, inputs: dict, provider: str) -> dict:
        spec, meta = inputs.get("spec") or {}, inputs.get("metadata") or {}
        region = regions.get(provider.rsplit("::", 1)[0].rsplit("::", 1)[-1])  # urn::id -> the provider name
        if spec.get("type") != "LoadBalancer" or region is None:
            return {}
        ingress = (
            {"ip": spec["loadBalancerIP"]}
            if spec.get("loadBalancerIP")
            else load_balancer_address(
                cloud=region.cloud,
                region=region.region,
                cluster=cluster_name(env_name, region),
                namespace=meta.get("namespace", "default"),
                name=meta.get("name", ""),
            )
        )
        return {"status": {"loadBalancer": {"ingress": [ingress]}}}

    return build_plan(
        load_stack_config(project_dir, env_name),
        project_dir,
        computed={"tls": TlsResources().outputs, "kubernetes:core/v1:Service": service},
        plain_secrets=True,
    )


def main(argv: list[str] | None = None, *, console: Console | None = None) -> int:
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>`: where a long rehearsal is
    parser = argparse.ArgumentParser(prog="rehearsal", description=__doc__)
    parser.add_argument("env", help="environment: reads Pulumi.<env>.yaml")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR)
    parser.add_argument("--until-wave", metavar="NAME", help="rehearse the rollout up to this wave (included)")
    args = parser.parse_args(argv)
    console = console or Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    if preflight.main() != 0:
        return EXIT_INVALID_INPUT
    missing = [name for name in cache.REQUIRED if not cache.binary_path(name).is_file()]
    if missing:
        print(
            f"error: {', '.join(missing)} not built in {cache.bin_dir()}: run `make rehearsal-tools` first",
            file=sys.stderr,
        )
        return EXIT_INVALID_INPUT
    try:
        plan = rehearsal_plan(args.project_dir, args.env)
    except (PlanInputError, ConfigError) as exc:
        for line in input_error_lines(exc, args.env):
            print(line, file=sys.stderr)
        return EXIT_INVALID_INPUT
    waves = [w.name for w in rollout_waves(plan.spec, args.env)]
    if args.until_wave is not None and args.until_wave not in waves:
        print(f"error: --until-wave {args.until_wave}: no such wave; the waves are {', '.join(waves)}", file=sys.stderr)
        return EXIT_INVALID_INPUT
    out_dir = args.project_dir / "build" / args.env
    return Rehearsal(args.env, plan=plan, out_dir=out_dir, console=console, until_wave=args.until_wave).run()


if __name__ == "__main__":
    keep_heap_until_exit()  # a one-shot process, as `python -m tools.plan`: each program run's heap lives until exit
    sys.exit(main())

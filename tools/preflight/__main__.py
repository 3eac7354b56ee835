"""`python -m tools.preflight ENV [--json]`: can this account deliver what Pulumi.<ENV>.yaml asks for?

Exit codes: 0 nothing failed (warnings allowed), 1 a check failed, 2 invalid config,
3 AWS could not be asked (credentials missing or expired, API unreachable, region not enabled).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from botocore.exceptions import ClientError
from rich.console import Console

from components.checks.loader import load_environment
from components.config.base import ConfigError
from components.config.model_catalog import read_model_catalog
from components.config.stackfile import PlanInputError
from stacks.config import namespace_values
from tools.plan.runner import PROJECT_DIR
from tools.plan.stackfile import input_error_lines, load_stack_config
from tools.preflight.aws_api import AwsUnavailable, ClientFactory, session_client_factory
from tools.preflight.render import report_tables
from tools.preflight.runner import run_preflight

EXIT_FAILED = 1
EXIT_INVALID_INPUT = 2
EXIT_AWS_UNAVAILABLE = 3


def main(argv: list[str] | None = None, client_for: ClientFactory | None = None) -> int:
    parser = argparse.ArgumentParser(prog="preflight", description=__doc__.splitlines()[0])
    parser.add_argument("env", nargs="?", default="dev", help="environment: reads Pulumi.<env>.yaml (default dev)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON (for CI)")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR)
    parser.add_argument(
        "--bucket-prefix",
        default=None,
        help="name prefix of the model buckets, <prefix>-<env>-<region>-models (default: modelStore.bucketPrefix)",
    )
    parser.add_argument("--profile", default=None, help="AWS profile (default: the standard credential chain)")
    args = parser.parse_args(argv)

    try:
        stack_config = load_stack_config(args.project_dir, args.env)
        env = load_environment(
            namespace_values(stack_config.project, stack_config.config),
            catalog_files=read_model_catalog(args.project_dir),
        )
    except (PlanInputError, ConfigError) as exc:
        for line in input_error_lines(exc, args.env):
            print(line, file=sys.stderr)
        return EXIT_INVALID_INPUT

    try:
        report = run_preflight(env, args.env, client_for or session_client_factory(args.profile), args.bucket_prefix)
    except AwsUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_AWS_UNAVAILABLE
    except ClientError as exc:  # e.g. OptInRequired: a region not enabled for the account
        error = exc.response.get("Error", {})
        print(f"error: AWS {exc.operation_name}: {error.get('Code')}: {error.get('Message')}", file=sys.stderr)
        return EXIT_AWS_UNAVAILABLE

    if args.json:
        print(json.dumps(report.to_json(), indent=2, default=str))
    else:
        Console(width=max(Console().width, 160)).print(report_tables(report))
    return EXIT_FAILED if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Dump the `vllm serve` argument parser as JSON on stdout: run by `tools.upgrade` under an interpreter where the
vLLM release being checked is importable (a scratch virtualenv with the wheel and its dependencies, or a test's
hand-made package tree on PYTHONPATH). It builds the parser exactly as `vllm serve` does
(vllm/entrypoints/cli/serve.py ServeSubcommand.subparser_init -> vllm/entrypoints/openai/cli_args.py
make_arg_parser, which derives most flags from the vllm/config dataclasses) and serves nothing.

Standard library only: it runs in that other interpreter, not in the project's venv.
"""

from __future__ import annotations

import argparse
import enum
import importlib
import json
import sys
from typing import Any


def _type_name(kind: Any) -> str | None:
    if kind is None:
        return None
    module = getattr(kind, "__module__", None)
    name = getattr(kind, "__qualname__", None) or repr(kind)
    return name if module in (None, "builtins") else f"{module}.{name}"


def _plain(value: Any) -> Any:
    """A JSON value for an argparse default: containers kept, an enum member its value, anything else its repr."""
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return repr(value)


def _group_of(parser: argparse.ArgumentParser) -> dict[int, str]:
    return {id(action): group.title or "" for group in parser._action_groups for action in group._group_actions}


def dump(parser: argparse.ArgumentParser) -> list[dict[str, Any]]:
    groups = _group_of(parser)
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        longs = [o for o in action.option_strings if o.startswith("--")]
        out.append(
            {
                "action": type(action).__name__,
                "choices": _plain(list(action.choices)) if action.choices is not None else None,
                "default": _plain(action.default),
                "deprecated": getattr(action, "deprecated", None) or None,
                "dest": action.dest,
                "group": groups.get(id(action), ""),
                "metavar": _plain(action.metavar),
                "name": longs[0][2:] if longs else action.dest,
                "nargs": action.nargs,
                "option_strings": list(action.option_strings),
                "required": action.required,
                "type": _type_name(action.type),
            }
        )
    return out


def main() -> int:
    # vLLM logs to stdout (its default logging config): keep stdout for the dump alone.
    out, sys.stdout = sys.stdout, sys.stderr
    # The package under test, imported by name: it is installed in the interpreter running this, not the project's.
    vllm = importlib.import_module("vllm")
    try:
        serve_module = importlib.import_module("vllm.entrypoints.cli.serve")
        argparse_utils = importlib.import_module("vllm.utils.argparse_utils")
    except ImportError as exc:
        version = getattr(vllm, "__version__", "?")
        print(f"error: vllm {version} has no `vllm serve` parser here: {exc}", file=sys.stderr)
        return 2
    # A host without a GPU resolves no device type; the parser builds DeviceConfig() for its defaults, which then
    # fails ("Failed to infer device type", vllm/config/device.py). The image runs on CUDA: say so to the platform.
    platform = importlib.import_module("vllm.platforms").current_platform
    forced = not getattr(platform, "device_type", "")
    if forced:
        platform.device_type = "cuda"
    root = argparse_utils.FlexibleArgumentParser(prog="vllm")
    serve = serve_module.ServeSubcommand().subparser_init(root.add_subparsers(dest="subparser"))
    used = f"{type(platform).__name__}(device_type={platform.device_type!r}{', forced' if forced else ''})"
    json.dump({"vllm_version": getattr(vllm, "__version__", None), "platform": used, "args": dump(serve)}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

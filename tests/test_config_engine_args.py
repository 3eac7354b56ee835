"""engineArgs values as vLLM v0.33.0's parser reads them: the catalog's value kinds against the vendored option
table, and the values that pass (each refused variant is in tests/bad_configs.py, category engine-args)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.catalog.engines import VLLM_FLAGS, VLLM_MINIMUMS, VLLM_VALUES
from components.checks.serving_checks import engine_value_issue

ARGS = Path(__file__).resolve().parents[1] / "conformance/upstream/vllm/v0.33.0/generated-vllm-serve-args.json"
# The parser's type of each kind (the vendored table's `type`, as `vllm serve` builds its parser).
TYPES = {
    "int": {"int", "vllm.engine.arg_utils.optional_type.<locals>._optional_type"},
    "float": {"float"},
    "tokens": {"vllm.utils.argparse_utils.human_readable_int"},
    # parse_reasoning_parser: the string, `none` (any case) read as unset (v0.33.0 vllm/engine/arg_utils.py L188-190)
    "str": {
        "str",
        "vllm.engine.arg_utils.optional_type.<locals>._optional_type",
        "vllm.engine.arg_utils.parse_reasoning_parser",
    },
    "json": {
        "vllm.engine.arg_utils._compute_kwargs.<locals>.parse_dataclass",
        "vllm.engine.arg_utils.parse_type.<locals>._parse_type",
        "vllm.engine.arg_utils.union_dict_and_str",
    },
}


def test_every_tunable_value_flag_has_its_parsers_kind():
    options = {a["name"]: a for a in json.loads(ARGS.read_text())["args"]}
    values = {flag for flag, kind in VLLM_FLAGS.tunable.items() if kind == "value"}
    assert set(VLLM_VALUES) == values
    for flag, kind in VLLM_VALUES.items():
        option = options[flag]
        if isinstance(kind, tuple):
            # upstream's choices, less None (the optional type's null, which a model never sets; v0.33.0's
            # arg_utils.py appends None itself where v0.27.1 appended the string "None")
            assert set(kind) == set(option["choices"]) - {None, "None"}, flag
        else:
            assert option["choices"] is None and option["type"] in TYPES[kind], flag


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("tokens", 8192),
        ("tokens", "16384"),
        ("int", 0),
        ("int", "-1"),  # max-logprobs -1: every logprob (vllm/config/model.py L286, ge=-1)
        ("float", 4),
        ("float", "2.5"),
        ("json", '{"level": 3}'),
        ("json", {"max_num_batched_tokens": 4096}),
        (("sha256", "xxhash"), "xxhash"),
    ],
)
def test_values_the_parser_takes(kind, value):
    assert engine_value_issue(kind, value) is None


def test_the_bounds_are_vllms_for_numbers_it_takes():
    # by hand from vLLM v0.33.0's pydantic Fields: cache.py L187 gt=0, parallel.py L236 ge=1, model.py L286 ge=-1,
    # scheduler.py L48 ge=1 and L79 ge=0, offload.py L23 ge=0
    assert VLLM_MINIMUMS == {
        "block-size": 1,
        "max-parallel-loading-workers": 1,
        "max-logprobs": -1,
        "max-num-batched-tokens": 1,
        "long-prefill-token-threshold": 0,
        "cpu-offload-gb": 0,
    }
    assert all(VLLM_VALUES[flag] in ("int", "tokens", "float") for flag in VLLM_MINIMUMS)
    assert engine_value_issue("int", 1, VLLM_MINIMUMS["block-size"]) is None
    assert engine_value_issue("int", 0, VLLM_MINIMUMS["block-size"]) == "takes a number at least 1, not 0"

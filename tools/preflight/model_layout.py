"""Which files a model prefix must hold for its engine to start, whatever the object store.

A Hugging Face-style checkpoint: `config.json`, a tokenizer (`tokenizer.json`, or a
SentencePiece `tokenizer.model` with its `tokenizer_config.json`) and weights. vLLM loads
`*.safetensors` (or legacy PyTorch `*.bin`); the Triton TensorRT-LLM backend loads built
`*.engine` files (its engine directory carries its own `config.json`) or the checkpoint.
Files are matched by name anywhere under the prefix, so nested layouts pass too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from posixpath import basename

_WEIGHT_SUFFIXES = {
    "vllm": (".safetensors", ".bin"),
    "triton": (".engine", ".safetensors", ".bin"),
}


@dataclass(frozen=True)
class LayoutVerdict:
    missing: list[str]  # required parts that are absent: the engine cannot start
    warnings: list[str]  # parts whose absence degrades the deployment
    objects: int
    total_bytes: int
    weight_bytes: int


def weight_suffixes(runtime: str) -> tuple[str, ...]:
    return _WEIGHT_SUFFIXES[runtime]


def check_layout(objects: Iterable[tuple[str, int]], runtime: str) -> LayoutVerdict:
    """`objects`: (key, size in bytes) under the model's prefix."""
    listed = list(objects)
    names = {basename(key) for key, _ in listed}
    suffixes = weight_suffixes(runtime)
    weight_bytes = sum(size for key, size in listed if key.endswith(suffixes))

    missing: list[str] = []
    warnings: list[str] = []
    if "config.json" not in names:
        missing.append("config.json")
    if "tokenizer.json" not in names:
        if "tokenizer.model" not in names:
            missing.append("tokenizer (tokenizer.json or tokenizer.model)")
        elif "tokenizer_config.json" not in names:
            missing.append("tokenizer_config.json (needed with tokenizer.model)")
    elif "tokenizer_config.json" not in names:
        warnings.append("no tokenizer_config.json: no chat template, /v1/chat/completions needs one")
    if not any(key.endswith(suffixes) for key, _ in listed):
        missing.append("weights (" + " or ".join(f"*{s}" for s in suffixes) + ")")
    return LayoutVerdict(missing, warnings, len(listed), sum(size for _, size in listed), weight_bytes)

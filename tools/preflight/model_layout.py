"""Which files a model prefix must hold for its engine to start, whatever the object store.

A Hugging Face-style checkpoint: `config.json`, a tokenizer (`tokenizer.json`, or a
SentencePiece `tokenizer.model` with its `tokenizer_config.json`) and weights. vLLM loads
`*.safetensors` (or legacy PyTorch `*.bin`); the Triton TensorRT-LLM backend loads built
`*.engine` files (its engine directory carries its own `config.json`) or the checkpoint.
Files are matched by name anywhere under the prefix, so nested layouts pass too, except what
Triton's OpenAI frontend reads at fixed places of the model repository
(components/serving/runtimes.py): the tokenizer at its root, and the entry model it serves under
the model's name, `<name>/config.pbtxt`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from posixpath import basename
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from components.config.workloads import ModelSpec

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


def check_layout(objects: Iterable[tuple[str, int]], model: ModelSpec) -> LayoutVerdict:
    """`objects`: (key, size in bytes) under the model's prefix (`model.weights_prefix`)."""
    listed = list(objects)
    relative = {key.removeprefix(model.weights_prefix) for key, _ in listed}
    names = {basename(key) for key in relative}
    triton = model.runtime == "triton"
    tokenizer_files, at = (
        ({key for key in relative if "/" not in key}, " at the repository root") if triton else (names, "")
    )
    suffixes = weight_suffixes(model.runtime)
    weight_bytes = sum(size for key, size in listed if key.endswith(suffixes))

    missing: list[str] = []
    warnings: list[str] = []
    if "config.json" not in names:
        missing.append("config.json")
    if "tokenizer.json" not in tokenizer_files:
        if "tokenizer.model" not in tokenizer_files:
            missing.append(f"tokenizer (tokenizer.json or tokenizer.model){at}")
        elif "tokenizer_config.json" not in tokenizer_files:
            missing.append(f"tokenizer_config.json{at} (needed with tokenizer.model)")
    elif "tokenizer_config.json" not in tokenizer_files:
        warnings.append(f"no tokenizer_config.json{at}: no chat template, /v1/chat/completions needs one")
    if not any(key.endswith(suffixes) for key, _ in listed):
        missing.append("weights (" + " or ".join(f"*{s}" for s in suffixes) + ")")
    if triton and f"{model.name}/config.pbtxt" not in relative:
        missing.append(f"{model.name}/config.pbtxt (the entry model, which clients call by the model's name)")
    return LayoutVerdict(missing, warnings, len(listed), sum(size for _, size in listed), weight_bytes)

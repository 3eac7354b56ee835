"""Which files a model prefix must hold for its engine to start, whatever the object store.

A Hugging Face-style checkpoint: `config.json`, a tokenizer (`tokenizer.json`, or a
SentencePiece `tokenizer.model` with its `tokenizer_config.json`) and weights.

vLLM loads with the Run:ai streamer (`--load-format runai_streamer`, components/serving/engine.py),
which reads `*.safetensors` at the model directory's root only (VLLM_STREAMER_READS_ROOT_SAFETENSORS,
components/catalog/upstream.py). So a vLLM model needs its config, tokenizer and `*.safetensors` at the
prefix's root; PyTorch `*.bin` pickles, or safetensors in a subdirectory only, are reported missing with
what was found. Subdirectories may hold the draft model and LoRA adapters.

The Triton TensorRT-LLM backend loads built `*.engine` files (its engine directory carries its own
`config.json`) or the checkpoint, matched by name anywhere under the prefix, except what Triton's
OpenAI frontend reads at fixed places of the model repository (components/serving/runtimes.py): the
tokenizer at its root, and the entry model it serves under the model's name, `<name>/config.pbtxt`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from posixpath import basename
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from components.config.workloads import ModelSpec

_WEIGHT_SUFFIXES = {
    "vllm": (".safetensors",),
    "triton": (".engine", ".safetensors", ".bin"),
}
# Weight files the streaming loader cannot read, named when they are all a vLLM prefix holds.
_UNSTREAMABLE_SUFFIXES = (".bin", ".pt", ".pth")


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
    root = {key for key in relative if "/" not in key}
    tokenizer_files, at = (root, " at the repository root") if triton else (root, " at the root")
    suffixes = weight_suffixes(model.runtime)
    weight_bytes = sum(size for key, size in listed if key.endswith(suffixes))

    missing: list[str] = []
    warnings: list[str] = []
    if "config.json" not in (names if triton else root):
        missing.append("config.json" if triton else "config.json at the root")
    if "tokenizer.json" not in tokenizer_files:
        if "tokenizer.model" not in tokenizer_files:
            missing.append(f"tokenizer (tokenizer.json or tokenizer.model){at}")
        elif "tokenizer_config.json" not in tokenizer_files:
            missing.append(f"tokenizer_config.json{at} (needed with tokenizer.model)")
    elif "tokenizer_config.json" not in tokenizer_files:
        warnings.append(f"no tokenizer_config.json{at}: no chat template, /v1/chat/completions needs one")
    if triton:
        if not any(key.endswith(suffixes) for key, _ in listed):
            missing.append("weights (" + " or ".join(f"*{s}" for s in suffixes) + ")")
    elif not any(key.endswith(suffixes) for key in root):
        missing.append("weights (*.safetensors at the root" + _found_instead(relative) + ")")
    if triton and f"{model.name}/config.pbtxt" not in relative:
        missing.append(f"{model.name}/config.pbtxt (the entry model, which clients call by the model's name)")
    return LayoutVerdict(missing, warnings, len(listed), sum(size for _, size in listed), weight_bytes)


def _found_instead(relative: set[str]) -> str:
    """What a vLLM prefix without root safetensors holds instead, for the message."""
    nested = sorted({key.rsplit("/", 1)[0] + "/" for key in relative if "/" in key and key.endswith(".safetensors")})
    pickles = sorted(key for key in relative if key.endswith(_UNSTREAMABLE_SUFFIXES))
    found = []
    if nested:
        found.append("safetensors only under " + ", ".join(nested) + ", which the streamer does not list")
    if pickles:
        found.append(f"{len(pickles)} PyTorch pickle file(s) such as {pickles[0]}, which the streamer cannot read")
    return ": found " + "; ".join(found) if found else ""

"""Architecture facts of the model families we ship presets for.

Each entry is taken from the model's `config.json` on the Hugging Face Hub (source noted);
parameter counts from the model card. These drive weight and KV-cache sizing.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ModelArchitecture:
    preset: str
    hf_repo: str
    params_billion: float
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    max_context: int
    experts: int = 0  # MoE: total experts (all resident in memory)
    # config.json `vocab_size`: a draft model proposes token ids of its target's vocabulary, so they must match.
    vocab_size: int = field(kw_only=True)
    # config.json `tie_word_embeddings`: the output head shares the input embedding's matrix (false for every
    # preset here: each has its own lm_head of vocab_size x hidden_size).
    tied_embeddings: bool = field(default=False, kw_only=True)

    @property
    def embedding_params(self) -> int:
        """The input embedding and the output head, which quantized checkpoints keep in 16 bits."""
        return self.vocab_size * self.hidden_size * (1 if self.tied_embeddings else 2)

    @property
    def params(self) -> float:
        return self.params_billion * 1e9


MODELS: dict[str, ModelArchitecture] = {
    m.preset: m
    for m in (
        # huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json
        ModelArchitecture(
            "llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct", 8.03, 32, 4096, 32, 8, 128, 131072, vocab_size=128256
        ),
        # huggingface.co/meta-llama/Llama-3.1-70B-Instruct/blob/main/config.json
        ModelArchitecture(
            "llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct", 70.6, 80, 8192, 64, 8, 128, 131072, vocab_size=128256
        ),
        # huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/config.json
        ModelArchitecture(
            "qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct", 7.62, 28, 3584, 28, 4, 128, 32768, vocab_size=152064
        ),
        # huggingface.co/Qwen/Qwen2.5-32B-Instruct/blob/main/config.json
        ModelArchitecture(
            "qwen2.5-32b", "Qwen/Qwen2.5-32B-Instruct", 32.8, 64, 5120, 40, 8, 128, 32768, vocab_size=152064
        ),
        # huggingface.co/Qwen/Qwen2.5-72B-Instruct/blob/main/config.json
        ModelArchitecture(
            "qwen2.5-72b", "Qwen/Qwen2.5-72B-Instruct", 72.7, 80, 8192, 64, 8, 128, 32768, vocab_size=152064
        ),
        # huggingface.co/mistralai/Mistral-7B-Instruct-v0.3/blob/main/config.json
        ModelArchitecture(
            "mistral-7b", "mistralai/Mistral-7B-Instruct-v0.3", 7.25, 32, 4096, 32, 8, 128, 32768, vocab_size=32768
        ),
        # huggingface.co/mistralai/Mixtral-8x7B-Instruct-v0.1/blob/main/config.json (8 experts, 2 active)
        ModelArchitecture(
            "mixtral-8x7b",
            "mistralai/Mixtral-8x7B-Instruct-v0.1",
            46.7,
            32,
            4096,
            32,
            8,
            128,
            32768,
            experts=8,
            vocab_size=32000,
        ),
    )
}

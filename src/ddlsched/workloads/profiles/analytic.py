"""Analytic profiles of GPT-style transformers (models no profile file covers).

Built from the architecture alone (Megatron-LM accounting, Narayanan et
al. 2021): a decoder of ``L`` blocks of hidden size ``h``, sequence ``s``,
vocabulary ``V``, mini-batch ``b`` samples, mixed precision (``2`` bytes
per parameter gradient and per activation element, fp16).

* embedding layer: ``(V + s) h`` parameters (token + position tables);
  forward time 0 (a lookup); output ``b s h`` elements.
* transformer block: ``12 h^2 + 13 h`` parameters (QKV ``3h^2 + 3h``,
  projection ``h^2 + h``, MLP ``8h^2 + 5h``, two LayerNorms ``4h``);
  forward FLOPs ``24 b s h^2 + 4 b s^2 h``; output ``b s h`` elements.
* head: final LayerNorm and the LM head ``V h + 2 h`` parameters (its own
  copy of the tied embedding, as in a pipeline's last stage); forward FLOPs
  ``2 b s h V``; output ``b s V`` logits.
* backward FLOPs = 2 x forward; time = FLOPs / ``throughput_flops``
  (default 50 TFLOP/s: 40 % of a V100's 125 TFLOP/s fp16 tensor-core peak,
  the GPU of the paper's simulations).

Configurations (``GPT_CONFIGS``): GPT 6.7B, 13B and 175B from Brown et al.
2020 (Table 2.1), with the paper's sequence length 512 (Sec. V-A) and its
mini-batches 32/32/16 (Table I); ``V = 50257``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ddlsched.workloads.profiles.base import Layer, ModelProfile

__all__ = ["DEFAULT_THROUGHPUT_FLOPS", "GPT_CONFIGS", "GptConfig", "gpt_profile"]

DEFAULT_THROUGHPUT_FLOPS = 50e12
BYTES_PER_VALUE = 2


@dataclass(frozen=True)
class GptConfig:
    """A GPT architecture: ``layers`` (``L``), ``hidden`` (``h``), ``heads`` (recorded only),
    mini-batch ``batch_size`` (``b``), ``seq_len`` (``s``) and ``vocab`` (``V``)."""

    layers: int
    hidden: int
    heads: int
    batch_size: int
    seq_len: int = 512
    vocab: int = 50257


GPT_CONFIGS: dict[str, GptConfig] = {
    "gpt-6.7b": GptConfig(layers=32, hidden=4096, heads=32, batch_size=32),
    "gpt-13b": GptConfig(layers=40, hidden=5140, heads=40, batch_size=32),
    "gpt-175b": GptConfig(layers=96, hidden=12288, heads=96, batch_size=16),
}


def gpt_profile(
    name: str = "gpt-175b",
    *,
    config: GptConfig | None = None,
    throughput_flops: float = DEFAULT_THROUGHPUT_FLOPS,
) -> ModelProfile:
    """The analytic profile of a GPT model (see the module docstring)."""
    cfg = config or GPT_CONFIGS[name]
    b, s, h, v = cfg.batch_size, cfg.seq_len, cfg.hidden, cfg.vocab
    act = b * s * h * BYTES_PER_VALUE

    def timed(flops_fwd: float) -> tuple[float, float]:
        return flops_fwd / throughput_flops, 2.0 * flops_fwd / throughput_flops

    layers = [Layer("embedding", 0.0, 0.0, (v + s) * h * BYTES_PER_VALUE, act)]
    block_fwd, block_bwd = timed(24.0 * b * s * h * h + 4.0 * b * s * s * h)
    for i in range(cfg.layers):
        layers.append(
            Layer(f"block{i}", block_fwd, block_bwd, (12 * h * h + 13 * h) * BYTES_PER_VALUE, act)
        )
    head_fwd, head_bwd = timed(2.0 * b * s * h * v)
    layers.append(
        Layer(
            "head",
            head_fwd,
            head_bwd,
            (v * h + 2 * h) * BYTES_PER_VALUE,
            b * s * v * BYTES_PER_VALUE,
        )
    )
    return ModelProfile(
        name=f"analytic/{name}",
        layers=tuple(layers),
        batch_size=b,
        input_bytes=float(b * s * 8),  # int64 token ids
        provenance={
            "source": "analytic (ddlsched.workloads.profiles.analytic)",
            "architecture": f"L={cfg.layers}, h={h}, heads={cfg.heads}, seq={s}, vocab={v}",
            "param_bytes": "(12 h^2 + 13 h) per block, (V + s) h embedding, V h + 2h head; x 2 B (fp16)",
            "fwd_s": f"FLOPs (24 b s h^2 + 4 b s^2 h per block, 2 b s h V head) / {throughput_flops:.3g} FLOP/s",
            "bwd_s": "2 x forward",
            "out_bytes": "b s h x 2 B (fp16 activations), b s V x 2 B logits after the head",
            "batch_size": "paper's Table I",
        },
    )

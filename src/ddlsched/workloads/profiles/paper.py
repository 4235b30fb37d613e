"""The A-SRPT paper's Table II profiles, rebuilt as far as the paper states them.

Every number the paper gives about Table II's inputs (Sec. V-A-1-b, Table I,
Sec. V-B-1-a, Sec. V-B-2-e) and what this module does with it:

* "We profiled all DNN models on a single NVIDIA V100 GPU" (Sec. V-B-1-a):
  VGG19's layer times come from PipeDream's VGG-16 profile, which was
  measured on V100s (PipeDream's clusters; the file does not name the GPU:
  **assumed**). Its 0.69 s per 128-image mini-batch is about 17 TFLOP/s of
  nominal work (2 x 15.5 GMAC x 3 per image), above a V100's 15.7 TFLOP/s
  fp32 peak, so cuDNN's Winograd convolutions (fewer real operations) or
  tensor cores were at work: the measured times are used as they are.
* Table I: VGG19 144M parameters, mini-batch 32; GPT-175B mini-batch 16;
  GPT 6.7B mini-batch 32.
* "For T5 and the three versions of GPT models that cannot be accommodated
  on a single GPU, we construct a smaller model consisting of three layers
  from the original model, which will be used for profiling with a token
  sequence length of 512" (Sec. V-A-1-b): the GPT profiles here are three
  transformer blocks (no embedding, no head) of the original width,
  sequence 512.
* Not stated by the paper, **assumed** here: the precision (fp32, 4 bytes
  per activation, gradient and parameter: PyTorch 2.1.1's default, which
  the paper used, and no mixed precision is mentioned); the GPT blocks'
  throughput (10 TFLOP/s fp32, 64 % of a V100's 15.7 TFLOP/s fp32 peak:
  large matrix products, no Winograd shortcut); that time
  and activation bytes scale linearly with the mini-batch (PipeDream
  profiled VGG-16 at 128 images; per-layer fixed costs are ignored); the
  job's GPU count and stage count (the paper's Table II gives neither: the
  ``table2`` preset keeps 16 GPUs, 4 stages for VGG19 and one block per
  stage, 3 stages, for the GPT slices).
* VGG19 from VGG-16: VGG19 adds one 3x3 convolution (with its ReLU) at the
  end of each of the blocks 3, 4 and 5 (Simonyan and Zisserman 2015,
  configurations D and E); each added layer pair copies the measured
  numbers of the block's last convolution and ReLU, whose shapes are the
  same. Parameters: 138.36M + 0.59M + 2 x 2.36M = 143.67M (Table I: 144M).

Known mismatch: the paper's Table II PITTs (88.11 ms VGG19, 10.14 ms
GPT-175B) cannot come from these inputs under Eqs. (4)-(7): one GPT-175B
block at mini-batch 16 and sequence 512 is 30 TFLOP forward, seconds on a
V100, and its 7.2 GB of fp32 parameters take seconds to AllReduce over a
10 Gbps NIC. Absolute PITTs are therefore not comparable; the relative gap
Heavy-Edge vs optimum on the same kind of stages is what this setting is for.
"""

from __future__ import annotations

from dataclasses import replace

from ddlsched.workloads.profiles.analytic import GPT_CONFIGS, gpt_profile
from ddlsched.workloads.profiles.base import Layer, ModelProfile
from ddlsched.workloads.profiles.pipedream import load_pipedream

__all__ = [
    "PAPER_BYTES_PER_VALUE",
    "PAPER_GPT_THROUGHPUT_FLOPS",
    "gpt_slice_profile",
    "vgg19_profile",
]

PAPER_BYTES_PER_VALUE = 4  # fp32 (assumed, see the module docstring)
PAPER_GPT_THROUGHPUT_FLOPS = 10e12  # fp32 V100, 64 % of peak (assumed)
VGG19_BATCH = 32  # Table I
#: VGG-16 layer index after which VGG19 repeats the (conv, ReLU) pair ending there.
_VGG19_REPEATS = (16, 23, 30)


def vgg19_profile(batch_size: int = VGG19_BATCH) -> ModelProfile:
    """VGG19 at ``batch_size`` images, derived from PipeDream's VGG-16 profile (docstring)."""
    vgg16 = load_pipedream("vgg16")
    base_batch = vgg16.batch_size or 128
    scale = batch_size / base_batch

    def scaled(layer: Layer, suffix: str = "") -> Layer:
        return Layer(
            layer.name + suffix,
            layer.fwd_s * scale,
            layer.bwd_s * scale,
            layer.param_bytes,
            layer.out_bytes * scale,
        )

    layers: list[Layer] = []
    for i, layer in enumerate(vgg16.layers):
        layers.append(scaled(layer))
        if i in _VGG19_REPEATS:
            conv, relu = vgg16.layers[i - 1], layer
            layers += [scaled(conv, " (VGG19 copy)"), scaled(relu, " (VGG19 copy)")]
    return ModelProfile(
        name="paper/vgg19",
        layers=tuple(layers),
        batch_size=batch_size,
        input_bytes=vgg16.input_bytes * scale,
        provenance={
            **vgg16.provenance,
            "source": f"derived from {vgg16.provenance.get('source', 'pipedream/vgg16')}",
            "layers": "VGG-16 plus a copy of the last (conv, ReLU) of blocks 3, 4 and 5",
            "fwd_s, bwd_s": f"PipeDream's ms / 1000 x {batch_size}/{base_batch} (linear in batch)",
            "out_bytes": f"PipeDream's activation bytes x {batch_size}/{base_batch}, fp32",
            "batch_size": "paper's Table I (VGG19: 32)",
        },
    )


def gpt_slice_profile(name: str = "gpt-175b", num_blocks: int = 3) -> ModelProfile:
    """``num_blocks`` transformer blocks of ``name`` in fp32 (the paper's profiling slice)."""
    cfg = replace(GPT_CONFIGS[name], layers=num_blocks)
    full = gpt_profile(name, config=cfg, throughput_flops=PAPER_GPT_THROUGHPUT_FLOPS)
    fp16_to_fp32 = PAPER_BYTES_PER_VALUE / 2
    blocks = tuple(
        replace(
            lay,
            param_bytes=lay.param_bytes * fp16_to_fp32,
            out_bytes=lay.out_bytes * fp16_to_fp32,
        )
        for lay in full.layers[1:-1]  # drop the embedding and the head
    )
    act = cfg.batch_size * cfg.seq_len * cfg.hidden * PAPER_BYTES_PER_VALUE
    return ModelProfile(
        name=f"paper/{name}-{num_blocks}blocks",
        layers=blocks,
        batch_size=cfg.batch_size,
        input_bytes=float(act),
        provenance={
            **full.provenance,
            "source": "analytic slice: the paper's 'three layers from the original model'",
            "param_bytes": "(12 h^2 + 13 h) per block x 4 B (fp32, assumed)",
            "fwd_s": f"FLOPs / {PAPER_GPT_THROUGHPUT_FLOPS:.3g} FLOP/s (fp32 V100, assumed)",
            "out_bytes": "b s h x 4 B (fp32 activations, assumed)",
            "input_bytes": "b s h x 4 B (hidden states from the previous block)",
        },
    )

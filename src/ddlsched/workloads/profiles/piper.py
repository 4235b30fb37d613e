"""Loader for Piper's profiled BERT (``profiles/piper/bert32a100.json``).

Source: msr-fiddle/piper, ``inputs/bert32a100.json`` (MIT); format in its
README: per node, per tensor-parallel degree, TMPCs with ``timePerSample``
(forward + backward compute latency per sample, seconds: Piper prints it
with unit "s" and divides byte counts by ``bandwidth`` in bytes/s),
``parameterSize`` (bytes of weights); edges with ``communicationCost``
(bytes per sample). We take tensor-parallel degree 1, TMPC ``vanilla``.
Choices:

* a mini-batch of ``batch_size`` samples (default 4, BERT-large's
  mini-batch in the paper's Table I): layer time = ``timePerSample x
  batch_size``, split 1:2 between forward and backward (the usual ratio;
  the file gives only the sum);
* cut bytes = ``communicationCost x batch_size`` of the producers
  crossing the cut (a producer's output is its largest out-edge cost; the
  attention-mask tensor feeding every layer crosses every cut once).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ddlsched.errors import InvalidInstanceError
from ddlsched.jsonio import read_json
from ddlsched.workloads.profiles.base import Layer, ModelProfile, cut_bytes
from ddlsched.workloads.profiles.pipedream import _toposort

__all__ = ["FORWARD_SHARE", "load_piper", "parse_piper"]

FORWARD_SHARE = 1.0 / 3.0


def parse_piper(data: Any, name: str, source: str = "<json>", batch_size: int = 4) -> ModelProfile:
    """Parse a Piper input file (already-decoded JSON)."""
    try:
        nodes = {int(n["id"]): n for n in data["nodes"]}
        edges = [
            (str(e["sourceId"]), str(e["destId"]), float(e["communicationCost"]))
            for e in data["edges"]
        ]
    except (TypeError, KeyError, ValueError):
        raise InvalidInstanceError(f"{source}: expected Piper 'nodes' and 'edges'") from None
    order = _toposort([str(i) for i in nodes], [(a, b) for a, b, _ in edges])
    out_size = {str(i): 0.0 for i in nodes}
    for src, _, cost in edges:
        out_size[src] = max(out_size[src], cost * batch_size)
    cuts = cut_bytes(order, out_size, [(a, b) for a, b, _ in edges])
    cuts[-1] = out_size[order[-1]]
    layers = []
    for i, node_id in enumerate(order):
        node = nodes[int(node_id)]
        try:
            tmpc = next(t for t in node["TMPCs"]["1"] if t["id"] == "vanilla")
        except (KeyError, StopIteration):
            raise InvalidInstanceError(
                f"{source}: node {node_id} has no vanilla TMPC for degree 1"
            ) from None
        total = float(tmpc["timePerSample"]) * batch_size
        layers.append(
            Layer(
                name=f"{node_id} {node.get('name', '')}".strip(),
                fwd_s=total * FORWARD_SHARE,
                bwd_s=total * (1.0 - FORWARD_SHARE),
                param_bytes=float(tmpc["parameterSize"]),
                out_bytes=cuts[i],
            )
        )
    return ModelProfile(
        name=f"piper/{name}",
        layers=tuple(layers),
        batch_size=batch_size,
        input_bytes=0.0,
        provenance={
            "source": f"{source} (msr-fiddle/piper, MIT)",
            "fwd_s, bwd_s": (
                f"timePerSample (s, fw+bw, degree 1, vanilla) x {batch_size} samples, "
                "split 1/3 forward, 2/3 backward (assumed)"
            ),
            "param_bytes": "parameterSize (bytes)",
            "out_bytes": f"communicationCost (bytes/sample) x {batch_size} of producers crossing the cut",
            "order": "topological order of the edges, ties by node id",
            "batch_size": "chosen: BERT-large mini-batch of the paper's Table I",
        },
    )


def load_piper(model: str = "bert32a100", path: Path | None = None, batch_size: int = 4):
    """Load ``profiles/piper/<model>.json`` (or ``path``)."""
    from ddlsched.datadir import data_file

    path = path or data_file("profiles", "piper", f"{model}.json")
    return parse_piper(read_json(path), model, str(path), batch_size=batch_size)

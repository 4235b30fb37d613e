"""Loader for dnn-partitioning layer graphs (``profiles/dnn-partitioning/<model>_training.json``).

Source: msr-fiddle/dnn-partitioning, ``throughput-inputs/LayerGraphs/*_training.json``
(MIT). Every layer appears twice, a forward node and a backward node
(``isBackwardNode``), sharing a ``colorClass``; nodes carry ``cpuLatency``
and ``fpgaLatency`` (the accelerator latency, one tenth of the CPU's in
these files) and ``size``; edges carry ``size`` (bytes) and ``cost``.
Choices (the files do not document units):

* ``fwd_s``/``bwd_s`` = ``fpgaLatency`` of the forward/backward node,
  read as milliseconds for one mini-batch (the accelerator the partitioner
  targets), / 1000;
* ``param_bytes`` = the node's ``size``, read as bytes of weights. For
  ``bert24`` this fits (54,579,200 B per layer, about 13.6 M fp32 values,
  BERT-large has 12.6 M); for the CNNs it is far larger than their weights
  (``resnet50`` sums to 19 GB), so ``size`` there is a memory footprint and
  these profiles' ``param_bytes`` overstate the AllReduce volume: prefer
  the PipeDream profiles of the same CNNs;
* cut bytes from the forward edges' ``size`` (a producer's output is
  the largest ``size`` among its forward out-edges);
* the mini-batch size is not stated (``batch_size = None``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ddlsched.errors import InvalidInstanceError
from ddlsched.jsonio import read_json
from ddlsched.workloads.profiles.base import Layer, ModelProfile, cut_bytes
from ddlsched.workloads.profiles.pipedream import _toposort

__all__ = ["load_dnn_partitioning", "parse_dnn_partitioning"]


def parse_dnn_partitioning(data: Any, name: str, source: str = "<json>") -> ModelProfile:
    """Parse a dnn-partitioning training layer graph (already-decoded JSON)."""
    try:
        nodes = data["nodes"]
        edges = data["edges"]
    except (TypeError, KeyError):
        raise InvalidInstanceError(f"{source}: expected 'nodes' and 'edges'") from None
    forward = {n["id"]: n for n in nodes if not n["isBackwardNode"]}
    backward_by_class = {n["colorClass"]: n for n in nodes if n["isBackwardNode"]}
    fwd_edges = [
        (str(e["sourceId"]), str(e["destId"]), float(e["size"]))
        for e in edges
        if e["sourceId"] in forward and e["destId"] in forward
    ]
    names = [str(i) for i in forward]
    order = _toposort(names, [(a, b) for a, b, _ in fwd_edges])
    out_size = dict.fromkeys(names, 0.0)
    for src, _, size in fwd_edges:
        out_size[src] = max(out_size[src], size)
    cuts = cut_bytes(order, out_size, [(a, b) for a, b, _ in fwd_edges])
    cuts[-1] = out_size[order[-1]]
    layers = []
    for i, node_id in enumerate(order):
        node = forward[int(node_id)]
        back = backward_by_class.get(node["colorClass"])
        layers.append(
            Layer(
                name=str(node.get("name", node_id)),
                fwd_s=float(node["fpgaLatency"]) / 1000.0,
                bwd_s=0.0 if back is None else float(back["fpgaLatency"]) / 1000.0,
                param_bytes=float(node["size"]),
                out_bytes=cuts[i],
            )
        )
    return ModelProfile(
        name=f"dnn-partitioning/{name}",
        layers=tuple(layers),
        batch_size=None,
        input_bytes=0.0,
        provenance={
            "source": f"{source} (msr-fiddle/dnn-partitioning, MIT)",
            "fwd_s, bwd_s": "fpgaLatency of the forward / backward node (read as ms) / 1000",
            "param_bytes": "node size (bytes of weights)",
            "out_bytes": "forward edge size (bytes) of the producers crossing the cut",
            "order": "topological order of the forward edges, ties by node id",
            "batch_size": "not stated in the file",
        },
    )


def load_dnn_partitioning(model: str, path: Path | None = None) -> ModelProfile:
    """Load ``profiles/dnn-partitioning/<model>_training.json`` (or ``path``)."""
    from ddlsched.datadir import data_file

    path = path or data_file("profiles", "dnn-partitioning", f"{model}_training.json")
    return parse_dnn_partitioning(read_json(path), model, str(path))

"""Loader for PipeDream profiles (``profiles/pipedream/<model>/graph.txt``).

Source: msr-fiddle/pipedream, ``profiler/*/profiles/<model>/graph.txt``
(MIT). Node lines read ``nodeN -- <module> -- forward_compute_time=<ms>,
backward_compute_time=<ms>, activation_size=<bytes>, parameter_size=<bytes>``;
edge lines ``\\tnodeA -- nodeB``. Times are milliseconds for one mini-batch
(converted to seconds); ``activation_size`` is the node's output for the
mini-batch and ``parameter_size`` its weights, both in bytes (the VGG-16
``Conv2d(3, 64)`` has 1,792 parameters and ``parameter_size = 7168``:
fp32); a multi-output node lists its outputs' sizes as ``[a; b; c]``, summed
here. The graph is linearised in topological order (ties by node number);
cut activations follow :func:`~ddlsched.workloads.profiles.base.cut_bytes`.
The mini-batch size is not in the file: for ImageNet models it is derived
from the ``Input`` node's activation (``3 x 224 x 224`` fp32 per sample,
128 for VGG-16), otherwise left unknown.
"""

from __future__ import annotations

import heapq
import re
from pathlib import Path

from ddlsched.errors import InvalidInstanceError
from ddlsched.textin import read_text
from ddlsched.workloads.profiles.base import Layer, ModelProfile, cut_bytes

__all__ = ["load_pipedream", "parse_pipedream"]

_ATTR = re.compile(r"(\w+)=(\[[^\]]*\]|[-+0-9.eE]+)")
_IMAGENET_SAMPLE_BYTES = 3 * 224 * 224 * 4
#: The largest graph.txt read (bytes; PipeDream's are below 100 kB).
MAX_GRAPH_BYTES = 64 * 1024 * 1024


def _number(text: str) -> float:
    """A number, or the sum of a bracketed ``[a; b; c]`` list (a multi-output node)."""
    if text.startswith("["):
        return sum(float(x) for x in text.strip("[]").split(";") if x.strip())
    return float(text)


def _node_number(name: str) -> int:
    digits = re.sub(r"\D", "", name)
    return int(digits) if digits else 0


def parse_pipedream(text: str, name: str, source: str = "<text>") -> ModelProfile:
    """Parse the text of a PipeDream ``graph.txt``."""
    nodes: dict[str, dict[str, float]] = {}
    kinds: dict[str, str] = {}
    edges: list[tuple[str, str]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.strip().split(" -- ")
        if line.startswith("\t") or (len(parts) == 2 and "=" not in line):
            if len(parts) != 2:
                raise InvalidInstanceError(f"{source}:{lineno}: bad edge line {line!r}")
            edges.append((parts[0].strip(), parts[1].strip()))
            continue
        if len(parts) < 3:
            raise InvalidInstanceError(f"{source}:{lineno}: bad node line {line!r}")
        attrs = {k: _number(v) for k, v in _ATTR.findall(parts[-1])}
        missing = {
            "forward_compute_time",
            "backward_compute_time",
            "activation_size",
            "parameter_size",
        } - set(attrs)
        if missing:
            raise InvalidInstanceError(f"{source}:{lineno}: missing {sorted(missing)}")
        nodes[parts[0]] = attrs
        kinds[parts[0]] = " -- ".join(parts[1:-1])
    for src, dst in edges:
        if src not in nodes or dst not in nodes:
            raise InvalidInstanceError(f"{source}: edge {src} -- {dst} names an unknown node")
    order = _toposort(list(nodes), edges)
    out_size = {n: nodes[n]["activation_size"] for n in order}
    cuts = cut_bytes(order, out_size, edges)
    cuts[-1] = out_size[order[-1]]  # the model's output (enters no formula)
    layers = tuple(
        Layer(
            name=f"{n} {kinds[n]}",
            fwd_s=nodes[n]["forward_compute_time"] / 1000.0,
            bwd_s=nodes[n]["backward_compute_time"] / 1000.0,
            param_bytes=nodes[n]["parameter_size"],
            out_bytes=cuts[i],
        )
        for i, n in enumerate(order)
    )
    first = order[0]
    input_bytes = out_size[first] if kinds[first].startswith("Input") else 0.0
    batch, batch_note = None, "not stated in graph.txt"
    if kinds[first] == "Input" and input_bytes and input_bytes % _IMAGENET_SAMPLE_BYTES == 0:
        batch = int(input_bytes // _IMAGENET_SAMPLE_BYTES)
        batch_note = (
            f"derived: Input activation {input_bytes:.0f} B / (3*224*224*4 B per sample) = {batch}"
        )
    return ModelProfile(
        name=f"pipedream/{name}",
        layers=layers,
        batch_size=batch,
        input_bytes=input_bytes,
        provenance={
            "source": f"{source} (msr-fiddle/pipedream, MIT)",
            "fwd_s, bwd_s": "forward_compute_time, backward_compute_time (ms) / 1000",
            "param_bytes": "parameter_size (bytes, fp32)",
            "out_bytes": "activation_size (bytes per mini-batch) of the producers crossing the cut",
            "order": "topological order of the graph's edges, ties by node number",
            "batch_size": batch_note,
        },
    )


def _toposort(names: list[str], edges: list[tuple[str, str]]) -> list[str]:
    indegree = dict.fromkeys(names, 0)
    succ: dict[str, list[str]] = {n: [] for n in names}
    for src, dst in set(edges):
        succ[src].append(dst)
        indegree[dst] += 1
    heap = [(_node_number(n), n) for n in names if indegree[n] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, n = heapq.heappop(heap)
        order.append(n)
        for m in succ[n]:
            indegree[m] -= 1
            if indegree[m] == 0:
                heapq.heappush(heap, (_node_number(m), m))
    if len(order) != len(names):
        raise InvalidInstanceError("profile graph has a cycle")
    return order


def load_pipedream(model: str, path: Path | None = None) -> ModelProfile:
    """Load ``profiles/pipedream/<model>/graph.txt`` from the data directory (or ``path``)."""
    from ddlsched.datadir import data_file

    path = path or data_file("profiles", "pipedream", model, "graph.txt")
    text = read_text(path, max_bytes=MAX_GRAPH_BYTES, what="a PipeDream graph.txt")
    return parse_pipedream(text, model, str(path))

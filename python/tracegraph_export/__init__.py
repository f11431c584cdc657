"""Writes PyTorch models in tracegraph's exported format (JSON + safetensors),
for models that never become TorchScript: ``torch.export`` programs and fx
traces (``program.py`` says how each is read). Pure Python over torch.

    from tracegraph_export import export, module_graph
    export(model, (torch.randn(1, 1, 44, 44, 44),), "out/unet")   # out/unet.json + out/unet.safetensors
    nodes, output = module_graph(model, (x,))                      # the seed's (nodes, output) view

What is written runs on tracegraph's backends (LibTorch and XNNPACK) and its
output activation, optimizer and web page read it like a TorchScript model's.
"""
from __future__ import annotations

import json
import os

from .program import AtenGraph, ExportError, aten_graph
from .writer import document, safetensors_bytes

__all__ = ["export", "module_graph", "aten_graph", "AtenGraph", "ExportError"]

# Ops whose clip bounds the module_graph view shows: op -> (min argument, max argument, their defaults).
_CLIPS = {"clamp": ("min", "max", None, None), "clip": ("min", "max", None, None),
          "hardtanh": ("min_val", "max_val", -1.0, 1.0)}


def export(model, example_inputs=None, path="model", *, name=None, method="auto") -> dict:
    """Writes ``path + ".json"`` and ``path + ".safetensors"`` (a trailing
    ".json" in ``path`` is dropped); returns the JSON document.

    ``model`` is a torch module (read by ``torch.export``, else by an fx
    trace), an ``ExportedProgram``, or the path of a ``.pt2`` file; a module
    needs ``example_inputs``, a tuple of tensors; ``method`` chooses how a
    module is read ("auto": torch.export, else an fx trace; "export"; "fx").
    """
    base = os.fspath(path)
    if base.endswith(".json"):
        base = base[: -len(".json")]
    weights_file = os.path.basename(base) + ".safetensors"
    ag = aten_graph(model, example_inputs, method)
    doc, weights = document(ag, name or os.path.basename(base), weights_file,
                            {"source": type(model).__name__ if not isinstance(model, (str, os.PathLike)) else os.fspath(model)})
    os.makedirs(os.path.dirname(os.path.abspath(base)), exist_ok=True)
    with open(base + ".safetensors", "wb") as f:
        f.write(safetensors_bytes(weights))
    with open(base + ".json", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return doc


def view_of(doc: dict):
    """The seed's ``(nodes, output)`` view of an exported document: each node
    ``{"op", "inputs", "outputs"}`` with a clip's ``min`` and ``max`` where
    they are constants, ``output`` the name of the value the model returns."""
    names = {v["id"]: v["name"] for v in doc["graph"]["values"]}
    nodes = []
    for n in doc["graph"]["nodes"]:
        entry = {"op": n["op"], "inputs": [names[i] for i in n["inputs"]], "outputs": [names[i] for i in n["outputs"]]}
        base = n["op"].split(".")[1] if n["op"].startswith("aten.") else n["op"]
        if base.rstrip("_") in _CLIPS:
            lo, hi, lo_default, hi_default = _CLIPS[base.rstrip("_")]
            attrs = n.get("attributes", {})
            for key, arg, default in (("min", lo, lo_default), ("max", hi, hi_default)):
                value = attrs.get(arg, {}).get("value", default)
                if isinstance(value, (int, float)):
                    entry[key] = float(value)
        nodes.append(entry)
    outputs = doc["graph"]["outputs"]
    return nodes, (names[outputs[0]] if outputs else None)


def module_graph(model, example_inputs=None):
    """``(nodes, output)`` of ``model`` as ``export`` reads it; None when it cannot be read."""
    try:
        doc, _ = document(aten_graph(model, example_inputs), "main", "")
    except ExportError:
        return None
    return view_of(doc)

"""Hands PyTorch models to tracegraph, for models that never become
TorchScript. A module ``torch.export`` reads is saved as the ``.pt2`` archive
torch writes (``torch.export.save``), which tracegraph's own C++ reader opens
natively and in the browser (one reader of torch's program format, in C++);
a module ``torch.export`` refuses is read by an fx trace and written in
tracegraph's exported format (JSON + safetensors; ``program.py`` says how).
Pure Python over torch.

    from tracegraph.export import export
    export(model, (torch.randn(1, 1, 44, 44, 44),), "out/unet")   # out/unet.pt2, or out/unet.json + .safetensors

(``tracegraph.module_graph(model)`` gives the seed's ``(nodes, output)`` view,
``tracegraph.trace(model, args)`` a TracedGraph in process.)

What is written runs on tracegraph's backends (LibTorch and XNNPACK) and its
output activation, optimizer and web page read it like a TorchScript model's.
"""
from __future__ import annotations

import dataclasses
import json
import os

import torch
from torch.utils import _pytree as pytree

from .program import AtenGraph, ExportError, aten_graph
from .writer import document, safetensors_bytes

__all__ = ["export", "Exported", "aten_graph", "AtenGraph", "ExportError"]

@dataclasses.dataclass
class Exported:
    """What ``export`` wrote."""
    path: str             # the model file: PATH.pt2, or PATH.json (its weights beside it in PATH.safetensors)
    reader: str           # "torch.export" (a .pt2) or "fx" (the exported format)
    out_spec: str | None  # the outputs' tree spec as torch's pytree.treespec_dumps writes it


def _spec_json(spec) -> str | None:
    return None if spec is None else json.dumps(json.loads(pytree.treespec_dumps(spec)))


def export(model, example_inputs=None, path="model", *, name=None, method="auto", decompose=False) -> Exported:
    """Writes ``model`` for tracegraph under ``path`` (a trailing ".pt2" or
    ".json" is dropped) and says what it wrote.

    ``model`` is a torch module or an ``ExportedProgram``; a module needs
    ``example_inputs``, a tuple of tensors. ``method`` chooses how a module is
    read: "auto" (torch.export, else an fx trace), "export" or "fx" (that one
    alone). A program is saved as ``path + ".pt2"``, as torch.export gives it
    or, with ``decompose``, in core ATen (``run_decompositions()``); an fx
    trace as ``path + ".json"`` and ``path + ".safetensors"``, its graph named
    ``name`` (default: the file's name). A ``.pt2`` file needs no export:
    tracegraph opens it as it is.
    """
    if method not in ("auto", "export", "fx"):
        raise ExportError(f"method must be 'auto', 'export' or 'fx', not {method!r}")
    base = os.fspath(path)
    for suffix in (".pt2", ".json"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    if isinstance(model, (str, os.PathLike)):
        raise ExportError(f"{os.fspath(model)}: a saved program needs no export; tracegraph reads it as it is "
                          "(tracegraph inspect/run FILE, loadModel in JavaScript, the page's Open)")
    program, export_error = None, None
    if isinstance(model, torch.export.ExportedProgram):
        program = model
    elif not isinstance(model, torch.nn.Module):
        raise ExportError(f"expected a torch module or an ExportedProgram, got {type(model).__name__}")
    elif example_inputs is None:
        raise ExportError("a module needs example inputs (a tuple of tensors) to be exported")
    elif method != "fx" and not isinstance(model, torch.jit.ScriptModule):
        try:
            with torch.no_grad():
                program = torch.export.export(model.eval(), tuple(example_inputs))
        except Exception as e:  # torch.export's many refusals; the fx path may still read it
            if method == "export":
                raise ExportError(f"torch.export cannot export {type(model).__name__}: {_first_line(e)}") from e
            export_error = e
    os.makedirs(os.path.dirname(os.path.abspath(base)), exist_ok=True)
    if program is not None:
        if decompose:
            program = program.run_decompositions()
        torch.export.save(program, base + ".pt2")
        return Exported(base + ".pt2", "torch.export", _spec_json(program.call_spec.out_spec))
    try:
        ag = aten_graph(model, example_inputs)
    except ExportError as e:
        if export_error is not None:
            raise ExportError(f"cannot trace {type(model).__name__}: torch.export: {_first_line(export_error)}; fx: {_first_line(e.__cause__ or e)}") from e
        raise
    weights_file = os.path.basename(base) + ".safetensors"
    doc, weights = document(ag, name or os.path.basename(base), weights_file, {"source": type(model).__name__})
    with open(base + ".safetensors", "wb") as f:
        f.write(safetensors_bytes(weights))
    with open(base + ".json", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return Exported(base + ".json", "fx", _spec_json(ag.out_spec))


def _first_line(e) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__

"""trace(): a live torch module as a TracedGraph, read by the core's own readers."""
from __future__ import annotations

import io
from typing import Any

from . import _core
from ._traced_graph import TracedGraph


def trace(module: Any, args: tuple, kwargs: dict | None = None) -> TracedGraph:
    """Records ``module(*args, **kwargs)`` into a TracedGraph, in this process.

    ``torch.export`` records it (in eval mode, as the exporter does; the
    module's mode is restored after) and the core's ``.pt2`` reader reads the
    program from memory; a module ``torch.export`` refuses is recorded by an
    fx trace (``tracegraph.export``'s other path) into the exported format.
    ``in_spec`` is the structure of ``(args, kwargs)``, ``out_spec`` that of
    the result. The graph is not finalized. Needs torch.
    """
    import torch

    from .export.program import ExportError, aten_graph
    from .export.writer import document, safetensors_bytes

    if not isinstance(args, tuple):
        args = (args,)
    kwargs = dict(kwargs or {})
    if isinstance(module, torch.export.ExportedProgram):
        return _from_program(module)
    if not isinstance(module, torch.nn.Module):
        raise _core.InvalidArgumentError(f"trace takes a torch module or an ExportedProgram, not {type(module).__name__}")
    was_training = module.training
    module.eval()
    try:
        export_error = None
        if not isinstance(module, torch.jit.ScriptModule):
            try:
                with torch.no_grad():
                    return _from_program(torch.export.export(module, args, kwargs))
            except _core.Error:
                raise
            except Exception as e:  # torch.export's many refusals: the fx path may read it
                export_error = e
        if kwargs:
            raise _core.UnsupportedError(f"trace: torch.export cannot export {type(module).__name__} "
                                         f"({_first_line(export_error)}), and the fx path takes positional inputs only")
        try:
            ag = aten_graph(module, args)
        except ExportError as e:
            why = f"torch.export: {_first_line(export_error)}; " if export_error else ""
            raise _core.UnsupportedError(f"trace: cannot record {type(module).__name__}: {why}fx: {e}") from e
        doc, weights = document(ag, type(module).__name__, "weights.safetensors", {"source": type(module).__name__})
        import json
        return TracedGraph(_core.load_exported(json.dumps(doc), safetensors_bytes(weights), "<trace>", "<trace>.safetensors"))
    finally:
        module.train(was_training)


def _from_program(program) -> TracedGraph:
    import torch
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    return TracedGraph(_core.load_bytes(buffer.getvalue(), "<torch.export>", []))


def _first_line(e) -> str:
    text = str(e).strip() if e is not None else ""
    return text.splitlines()[0] if text else type(e).__name__

"""output_activation: what a model applies last, so that no one applies a second sigmoid."""
from __future__ import annotations

import os
from typing import Any

from . import _core
from ._traced_graph import TracedGraph, load


def output_activation(model: Any, output: str | None = None):
    """What the model applies last to its output, from the core's analysis.

    - ``output_activation(nodes, output)`` or ``output_activation((nodes, output))``:
      the ``(nodes, output)`` view of :func:`module_graph`; one ``Activation``.
    - ``output_activation(traced_graph)``, or a path or bytes of a model file:
      one ``Activation`` per graph output, in order (a list).

    An ``Activation`` has ``kind`` ("none", "sigmoid", "tanh", "softmax",
    "log_softmax", "relu", "clip", "per_channel", "unknown"), ``dim``, ``min``,
    ``max``, ``channels`` (per channel range), ``after`` (range-keeping ops
    applied after it: "upsample_bilinear2d"), the ``node`` and ``op`` that
    apply it; ``str()`` reads "sigmoid, then upsample_bilinear2d". "unknown"
    is an answer: the analysis never claims what it cannot see.
    """
    if output is not None or (isinstance(model, tuple) and len(model) == 2 and isinstance(model[0], list)):
        nodes, out = (model, output) if output is not None else model
        if out is None:
            raise _core.InvalidArgumentError("output_activation: the view names no output (module_graph found none)")
        return _core.view_activation(list(nodes), [out])[0]
    if isinstance(model, TracedGraph):
        return model._model.output_activation()
    if isinstance(model, (str, os.PathLike, bytes, bytearray, memoryview)):
        return load(model)._model.output_activation()
    if model is None:
        raise _core.InvalidArgumentError("output_activation: no graph (module_graph returns None for a model it cannot read)")
    raise _core.InvalidArgumentError(
        f"output_activation takes a (nodes, output) view, a TracedGraph or a model file, not {type(model).__name__}"
        " (a torch module: module_graph(model) first)")

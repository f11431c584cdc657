"""network_geometry: what a blockwise predictor needs of a network, read from its graph."""
from __future__ import annotations

import os
from typing import Any

from . import _core
from ._traced_graph import TracedGraph, load


def network_geometry(model: Any) -> list:
    """The geometry of the network, per graph output and spatial input, from the core's analysis.

    ``model`` is a TracedGraph, or a path or the bytes of a model file. One
    ``OutputGeometry`` per (output, spatial input of rank 3 to 5: N, C, then
    1 to 3 spatial dims), outputs in order; an empty list when the graph has
    no spatial input. An ``OutputGeometry`` has ``output`` and ``input`` (value
    names) and ``axes``, one ``AxisGeometry`` per spatial dim of the input:

    - ``dim`` (2 for D of N, C, D, H, W) and ``known``; an unknown axis names
      ``unknown_node``, ``unknown_op`` and ``unknown_reason`` (the analysis
      never guesses);
    - the accepted input sizes: ``accepts(n)``, ``valid_sizes_str()`` ("44 + 8k",
      "16k, k >= 1", "44 or 45"), ``lattice`` (``first`` and ``step`` when
      they are exactly first + step * k; else None), ``smallest()``;
    - ``output_size(n)``: the output size for input size n, None where n is refused;
    - output voxel i's centre lies at input coordinate ``offset + stride * i``
      (``Rational``: exact, ``str()`` "1/4", ``float()``, ``== 8``);
      ``context_before()`` and ``context_after(n)``: the input voxels cut
      before the output's first voxel and after its last;
    - ``reach`` (``Rational``): output voxel i depends on the input voxels
      within it of its centre (the receptive field's radius); ``edge_effects``:
      an op on the way pads or clamps at an edge; ``halo()``: the input voxels a
      block reads beyond its context per side for outputs equal to the whole
      run's (0 for a valid network; what ``tracegraph.blockwise`` reads);
    - ``nonlocal_nodes``: nodes whose values depend on the whole axis.

    ``tracegraph.geometry_json(geometry)`` writes what ``tracegraph inspect --json``
    gives as its "geometry".
    """
    return _model_of(model, "network_geometry").network_geometry()


def geometry_json(geometry: list, indent: int = -1) -> str:
    """The geometry as JSON, as the CLI's ``inspect --json`` writes it under "geometry"."""
    return _core.geometry_json(list(geometry), indent)


def _model_of(model: Any, what: str) -> "_core.Model":
    if isinstance(model, TracedGraph):
        return model._model
    if isinstance(model, (str, os.PathLike, bytes, bytearray, memoryview)):
        return load(model)._model
    if model is None:
        raise _core.InvalidArgumentError(f"{what}: no graph")
    raise _core.InvalidArgumentError(f"{what} takes a TracedGraph or a model file, not {type(model).__name__}")

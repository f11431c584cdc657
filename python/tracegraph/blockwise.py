"""tracegraph.blockwise: a model predicted over a large volume, block by block.

The network's geometry (:func:`tracegraph.network_geometry`: accepted input
sizes, offset, stride, context) sizes the blocks; the schedulers are
borrowed (daisy's ``run_blockwise``, Dask's ``map_blocks`` on a
``distributed`` cluster, or a plain loop in this process), and each of them
calls one pure function of a block: read its window of the input, normalise,
run the model, apply the activation the model lacks, write the block into
the output zarr, and mark the block done. Design notes: docs are in
python/README.md ("Blockwise prediction").

    import tracegraph.blockwise as bw
    bw.predict("unet.pt2", "raw.zarr", "pred.zarr", scheduler="daisy", num_workers=2,
               normalize="dtype", activation="sigmoid")
"""
from __future__ import annotations

import atexit
import dataclasses
import functools
import hashlib
import itertools
import json
import math
import os
import pathlib
import shutil
import sys
import threading
import time
import warnings
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from . import _core
from ._traced_graph import TracedGraph, load

__all__ = ["predict", "plan", "Plan", "AxisPlan", "Progress", "PredictResult", "DoubleActivationError",
           "open_input", "ACTIVATIONS"]

ACTIVATIONS = ("sigmoid", "tanh", "relu", "softmax")


class DoubleActivationError(_core.InvalidArgumentError):
    """The caller asked for an activation the model already applies (a second sigmoid)."""


# ---- the plan: blocks from the geometry --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class AxisPlan:
    """One spatial axis of a blockwise run, in input voxels unless said otherwise.

    Output voxel ``I`` of the whole-volume grid lies at input coordinate
    ``offset + stride * I``; the output array holds ``I`` in
    ``[out_start, out_start + out_size)``, cut in blocks of ``block`` output
    voxels (the zarr chunk). A block whose first output voxel is ``I0`` runs the
    model on ``input_size`` input voxels starting at ``stride * I0 - before``
    (``I0`` taken down to a multiple of the stride's denominator),
    where ``before`` is ``halo`` unless the window is moved to stay inside
    ``[0, shift_limit)`` (a multiple of ``unit``, so the network's pooling
    grid never moves) and takes the run's output voxels from ``before / stride`` on.
    """
    dim: int             # the axis of the model's input (2 for D of N, C, D, H, W)
    size: int            # the input volume's size on this axis
    input_size: int      # n: the model's input per block (an accepted size)
    output_size: int     # m: the model's output for n
    block: int           # B: output voxels written per block
    halo: int            # input voxels read before and after a block beyond its context
    offset: Fraction
    stride: Fraction
    unit: int            # window starts move by multiples of it (the size rule's period, the lattice's step, the stride's numerator)
    out_start: int       # the output array's first voxel on the whole-volume grid
    out_size: int
    shift_limit: int     # windows are moved inside [0, shift_limit) when the block allows it

    @property
    def blocks(self) -> int:
        return -(-self.out_size // self.block)

    def window(self, k: int) -> tuple[int, int, int]:
        """Block k: (window start in input voxels, the run's first output voxel to keep, output voxels kept)."""
        first = self.out_start + k * self.block
        kept = min(self.block, self.out_size - k * self.block)
        base = first - first % self.stride.denominator  # a window starts on a whole input voxel
        skip = first - base
        start = int(self.stride * base)
        before = self.halo
        most = int((self.output_size - kept - skip) * self.stride) // self.unit * self.unit
        if start - before + self.input_size > self.shift_limit:  # near the far end: move the window back
            before = max(before, -(-(start + self.input_size - self.shift_limit) // self.unit) * self.unit)
        before = min(before, most)
        if start - before < 0:  # near the start: move it forward (this side wins when both apply)
            before = max(0, start // self.unit * self.unit)
        return start - before, int(before / self.stride) + skip, kept


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a blockwise run does, from the geometry: per axis an :class:`AxisPlan`,
    the output's channels, voxel size and translation (world units, per axis)."""
    axes: tuple
    channels: int
    input_channels: int
    output_name: str
    input_name: str
    voxel_size: tuple        # the output's, world units per voxel
    translation: tuple       # the world position of the output's voxel 0 (its centre)
    input_voxel_size: tuple
    input_offset: tuple

    @property
    def block_shape(self) -> tuple:
        return tuple(a.block for a in self.axes)

    @property
    def output_shape(self) -> tuple:
        return (self.channels,) + tuple(a.out_size for a in self.axes)

    @property
    def grid(self) -> tuple:
        return tuple(a.blocks for a in self.axes)

    def block_indices(self):
        return itertools.product(*(range(n) for n in self.grid))

    def fingerprint(self) -> dict:
        return {"axes": [[a.input_size, a.block, a.halo, a.out_start, a.out_size] for a in self.axes],
                "channels": self.channels}


def _frac(r) -> Fraction:
    return Fraction(int(r.num), int(r.den))


def _per_axis(value, n: int, what: str) -> list | None:
    if value is None:
        return None
    if np.isscalar(value):
        return [value] * n
    value = list(value)
    if len(value) != n:
        raise _core.InvalidArgumentError(f"{what}: {len(value)} values for {n} spatial axes")
    return value


def _accepted_from(axis, lowest: int, name: str) -> int:
    """The smallest input size the axis accepts at or above ``lowest``."""
    lattice = axis.lattice
    if lattice is not None:
        first, step = int(lattice.first), int(lattice.step)
        return first if lowest <= first else first + -(-(lowest - first) // step) * step
    smallest = axis.smallest()
    for n in range(max(lowest, smallest or 1), max(lowest, smallest or 1) + 4096):
        if axis.accepts(n):
            return n
    raise _core.InvalidArgumentError(f"{name}: axis {axis.dim} accepts no input size from {lowest} on "
                                     f"(sizes {axis.valid_sizes_str()})")


def plan(model: Any, input_shape: Sequence[int], *, block_shape: Sequence[int] | int | None = None,
         halo: Sequence[int] | int | None = None, roi: Any = None, voxel_size: Sequence[float] | None = None,
         offset: Sequence[float] | None = None, output: int | str = 0) -> Plan:
    """The blocks of a run of ``model`` over an input of ``input_shape`` (its
    spatial axes, channels first where the model takes several), from the
    network's geometry. See :func:`predict` for the arguments."""
    g = _graph_of(model)
    name = g.graph.name or "model"
    geometry = _core_geometry(g, output, name)
    axes = geometry.axes
    nsp = len(axes)
    values = g.graph.values
    in_shape = values[geometry.input]["shape"]
    out_shape = values[geometry.output]["shape"]
    input_channels = int(in_shape[1]) if in_shape else 1
    channels = int(out_shape[1]) if out_shape and len(out_shape) == nsp + 2 else 1
    shape = list(input_shape)
    if len(shape) == nsp + 1:
        if shape[0] != input_channels:
            raise _core.ShapeMismatchError(f"{name}: input %{geometry.input} takes {input_channels} channels, the array "
                                           f"has {shape[0]} (shape {tuple(shape)})")
        shape = shape[1:]
    elif len(shape) != nsp or input_channels != 1:
        raise _core.ShapeMismatchError(f"{name}: input %{geometry.input} has {nsp} spatial axes and {input_channels} "
                                       f"channel(s): the array's shape {tuple(input_shape)} is neither")
    blocks = _per_axis(block_shape, nsp, "block_shape")
    # The network's own (AxisGeometry.halo(): how far a padding's effects
    # reach past the context), unless the caller says otherwise.
    halos = [a.halo() if a.known else 0 for a in axes] if halo is None else [int(h) for h in _per_axis(halo, nsp, "halo")]
    vsize = [float(v) for v in (_per_axis(voxel_size, nsp, "voxel_size") or [1.0] * nsp)]
    vorigin = [float(v) for v in (_per_axis(offset, nsp, "offset") or [0.0] * nsp)]
    roi_start, roi_size = _roi_of(roi, shape, name)

    plans, out_vsize, out_origin = [], [], []
    for i, a in enumerate(axes):
        what = f"{name}: axis {a.dim}"
        if not a.known:
            raise _core.UnsupportedError(f"{what} is unknown to the geometry ({a.unknown_node}: {a.unknown_reason}): "
                                         "it cannot be cut in blocks")
        if a.nonlocal_nodes:
            raise _core.UnsupportedError(f"{what} depends on the whole axis (node {a.nonlocal_nodes[0]}): "
                                         "it cannot be cut in blocks")
        off, stride = _frac(a.offset), _frac(a.stride)
        # The size rule's period (a pooling by 2 twice: 4) is the shift that keeps the network's pooling grid;
        # the accepted sizes' step and the stride's numerator too.
        step = int(a.lattice.step) if a.lattice is not None else 1
        unit = math.lcm(max(int(a.period), 1), step, stride.numerator)
        halo_i = -(-halos[i] // unit) * unit
        # Block sizes B whose shift B * stride is a whole multiple of the unit keep the pooling grid in place.
        quantum = next(q for q in range(1, unit * stride.denominator + 1)
                       if (q * stride).denominator == 1 and int(q * stride) % unit == 0)
        extra = int(Fraction(2 * halo_i) / stride) + stride.denominator - 1  # the halo, and a fractional start
        if blocks is None:
            n = _accepted_from(a, max(64, a.smallest() or 1), what)
            while a.output_size(n) - extra < quantum:
                n = _accepted_from(a, n + 1, what)
            b = (a.output_size(n) - extra) // quantum * quantum
        else:
            b = int(blocks[i])
            if b <= 0 or b % quantum:
                raise _core.InvalidArgumentError(
                    f"{what}: a block of {b} output voxels moves the network's grid (stride {stride}, sizes "
                    f"{a.valid_sizes_str()}): use a multiple of {quantum}")
            n = _accepted_from(a, a.smallest() or 1, what)
            while a.output_size(n) < b + extra:
                n = _accepted_from(a, n + 1, what)
        m = a.output_size(n)
        # The output grid: voxels whose footprint (stride wide, centred at off + stride * I) lies in the ROI's
        # footprint [r0 - 1/2, r1 - 1/2]; the first starts a block whose window keeps the whole volume's grid.
        r0, r1 = roi_start[i], roi_start[i] + roi_size[i]
        lo = math.ceil((Fraction(2 * r0 - 1, 2) + stride / 2 - off) / stride)
        hi = math.floor((Fraction(2 * r1 - 1, 2) - stride / 2 - off) / stride)
        ref = math.ceil((Fraction(-1, 2) + stride / 2 - off) / stride)  # the whole volume's first output voxel
        if (lo - ref) % quantum:
            if roi is None:
                lo -= (lo - ref) % quantum
            else:
                fits = [r for r in range(max(0, r0 - 4 * unit), r0 + 4 * unit)
                        if (math.ceil((Fraction(2 * r - 1, 2) + stride / 2 - off) / stride) - ref) % quantum == 0]
                raise _core.InvalidArgumentError(
                    f"{what}: the region of interest starts at {r0}, off the network's block grid (stride {stride}, "
                    f"sizes {a.valid_sizes_str()}): start it at one of {fits[:4]}")
        if hi < lo:
            raise _core.InvalidArgumentError(f"{what}: the region of interest ({r1 - r0} voxels) holds no output voxel")
        start_ref = int(stride * (ref - ref % stride.denominator))
        limit = start_ref + -(-(shape[i] - start_ref) // unit) * unit
        plans.append(AxisPlan(dim=int(a.dim), size=int(shape[i]), input_size=int(n), output_size=int(m), block=int(b),
                              halo=halo_i, offset=off, stride=stride, unit=unit, out_start=int(lo),
                              out_size=int(hi - lo + 1), shift_limit=int(limit)))
        out_vsize.append(vsize[i] * float(stride))
        out_origin.append(vorigin[i] + vsize[i] * float(off + stride * lo))
    return Plan(axes=tuple(plans), channels=channels, input_channels=input_channels, output_name=geometry.output,
                input_name=geometry.input, voxel_size=tuple(out_vsize), translation=tuple(out_origin),
                input_voxel_size=tuple(vsize), input_offset=tuple(vorigin))


def _core_geometry(g: TracedGraph, output: int | str, name: str):
    geometry = g._model.network_geometry()
    if not geometry:
        raise _core.UnsupportedError(f"{name}: no spatial input (N, C, then 1 to 3 spatial axes): nothing to cut in blocks")
    if isinstance(output, str):
        found = [o for o in geometry if o.output == output]
        if not found:
            raise _core.NotFoundError(f"{name}: no output %{output} with a geometry "
                                      f"(the outputs: {', '.join('%' + o.output for o in geometry)})")
        return found[0]
    if not 0 <= output < len(geometry):
        raise _core.OutOfRangeError(f"{name}: output {output} of {len(geometry)}")
    return geometry[output]


def _roi_of(roi, shape, name):
    if roi is None:
        return [0] * len(shape), list(shape)
    start, size = (list(map(int, roi[0])), list(map(int, roi[1])))
    if len(start) != len(shape) or len(size) != len(shape):
        raise _core.InvalidArgumentError(f"{name}: the region of interest needs {len(shape)} axes, not {len(start)}")
    for i, (s, z, n) in enumerate(zip(start, size, shape)):
        if s < 0 or z <= 0 or s + z > n:
            raise _core.OutOfRangeError(f"{name}: the region of interest on spatial axis {i} ({s} to {s + z}) "
                                        f"leaves the volume (0 to {n})")
    return start, size


# ---- inputs and outputs --------------------------------------------------------------------------------------------

def open_input(source: Any):
    """The input array and its metadata (voxel size, offset or None each): a
    zarr path (v2 or v3; an OME-NGFF group gives its first dataset and its
    scale and translation; funlib's ``resolution`` / ``offset`` attributes
    also count), or anything array-like with ``shape``, ``dtype`` and
    ``__getitem__`` (numpy, a zarr or tensorstore array, an N5 dataset
    opened by another library)."""
    if isinstance(source, (str, os.PathLike)):
        import zarr
        node = zarr.open(os.fspath(source), mode="r")
        if isinstance(node, zarr.Group):
            scale, translation, path = _ngff_first(dict(node.attrs))
            if path is None:
                raise _core.InvalidArgumentError(f"{os.fspath(source)}: a zarr group without OME-NGFF multiscales: "
                                                 "name the array (group/array)")
            return node[path], scale, translation
        attrs = dict(node.attrs)
        return node, attrs.get("resolution"), attrs.get("offset")
    for need in ("shape", "dtype", "__getitem__"):
        if not hasattr(source, need):
            raise _core.InvalidArgumentError(f"blockwise input: a zarr path or an array-like, not {type(source).__name__} "
                                             f"(no {need})")
    return source, None, None


def _ngff_first(attrs):
    ms = (attrs.get("ome") or attrs).get("multiscales")
    if not ms:
        return None, None, None
    ds = ms[0]["datasets"][0]
    scale = translation = None
    for t in ds.get("coordinateTransformations", []):
        if t["type"] == "scale":
            scale = t["scale"]
        elif t["type"] == "translation":
            translation = t["translation"]
    return scale, translation, ds["path"]


def _create_output(path: str, plan: Plan, zarr_format: int, dtype, axis_names):
    """The output group: OME-NGFF multiscales (0.4 in zarr v2, 0.5 in v3) over one dataset "0" whose chunks are the blocks."""
    import zarr
    root = zarr.open_group(path, mode="a", zarr_format=zarr_format)
    shape, chunks = plan.output_shape, (plan.channels,) + plan.block_shape
    if "0" in root:
        arr = root["0"]
        if tuple(arr.shape) != shape or tuple(arr.chunks) != chunks:
            raise _core.InvalidArgumentError(f"{path}/0 exists with shape {tuple(arr.shape)} and chunks {tuple(arr.chunks)}"
                                             f", this run writes {shape} in {chunks}: remove it or choose another output")
        return arr
    arr = root.create_array("0", shape=shape, chunks=chunks, dtype=dtype, fill_value=0)
    axes = [{"name": "c", "type": "channel"}] + [{"name": n, "type": "space"} for n in axis_names]
    multiscales = [{"name": "prediction", "axes": axes, "datasets": [{"path": "0", "coordinateTransformations": [
        {"type": "scale", "scale": [1.0] + list(plan.voxel_size)},
        {"type": "translation", "translation": [0.0] + list(plan.translation)}]}]}]
    if zarr_format == 2:
        multiscales[0]["version"] = "0.4"
        root.attrs.update({"multiscales": multiscales})
    else:
        root.attrs.update({"ome": {"version": "0.5", "multiscales": multiscales}})
    return arr


# ---- one block: the pure function the schedulers call -------------------------------------------------------------

@dataclasses.dataclass
class _Spec:
    """Everything a worker needs, picklable: the model (a path, or the exported format's document and weights),
    the input (a zarr path, or the array itself), the output path, the plan and the per-dataset settings."""
    model_path: str | None
    model_document: str | None
    model_weights: bytes | None
    model_key: str
    settings_key: str
    input_path: str | None
    input_array: Any
    output_path: str
    plan: Plan
    backend: str
    threads: int
    normalize: Any
    activation: str | Callable | None
    padding: str


class _Worker:
    """One model load per worker process: the graph finalized at the blocks' input size."""

    def __init__(self, spec: _Spec):
        import zarr
        self.spec = spec
        if spec.model_path is not None:
            g = load(spec.model_path)
        else:
            g = TracedGraph(_core.load_exported(spec.model_document, spec.model_weights, "<blockwise>", "<weights>"))
        p = spec.plan
        shape = [1, p.input_channels] + [a.input_size for a in p.axes]
        if spec.backend == "libtorch":
            g.set_backend("libtorch")
        else:
            g.set_input_shapes([shape])
        g.finalize(threads=spec.threads)
        self.graph = g
        self.index = g.output_names.index(p.output_name)
        self.input = spec.input_array if spec.input_path is None else open_input(spec.input_path)[0]
        self.output = zarr.open_group(spec.output_path, mode="r+")["0"]
        self.done = _done_dir(spec.output_path)

    def process(self, block: tuple) -> int:
        """Block ``block`` (its index per axis): read, normalise, run, activate, write, mark done. Its output voxels."""
        p, spec = self.spec.plan, self.spec
        windows = [a.window(k) for a, k in zip(p.axes, block)]
        x = _read_window(self.input, p, [w[0] for w in windows], spec.padding, spec.normalize)
        (y,) = [self.graph.run([x[None]])[self.index]]
        y = np.asarray(y)[0]
        y = y[(slice(None),) + tuple(slice(w[1], w[1] + w[2]) for w in windows)]
        y = _activate(y, spec.activation)
        target = (slice(None),) + tuple(slice(k * a.block, k * a.block + w[2]) for a, k, w in zip(p.axes, block, windows))
        self.output[target] = y.astype(self.output.dtype, copy=False)
        (self.done / _block_name(block)).touch()
        return int(np.prod([w[2] for w in windows]))


def _read_window(array, p: Plan, starts, padding: str, normalize) -> np.ndarray:
    """The input over [start, start + input_size) per axis, channels first, float32 and normalised; the voxels
    outside the volume are zeros of the normalised input ("zero") or the volume mirrored ("reflect", numpy's)."""
    lead = () if array.ndim == len(p.axes) else (slice(None),)
    ranges = [np.arange(s, s + a.input_size) for s, a in zip(starts, p.axes)]
    if padding == "reflect":
        idx = [_reflect(r, a.size) for r, a in zip(ranges, p.axes)]
        lo = [int(i.min()) for i in idx]
        box = np.asarray(array[lead + tuple(slice(l, int(i.max()) + 1) for l, i in zip(lo, idx))])
        x = _normalized(box, normalize)
        if not lead:
            x = x[None]
        return np.ascontiguousarray(x[(slice(None),) + np.ix_(*[i - l for i, l in zip(idx, lo)])])
    inside = [(max(int(r[0]), 0), min(int(r[-1]) + 1, a.size)) for r, a in zip(ranges, p.axes)]
    x = np.zeros((p.input_channels,) + tuple(a.input_size for a in p.axes), np.float32)
    if all(b > e for e, b in inside):
        box = np.asarray(array[lead + tuple(slice(e, b) for e, b in inside)])
        box = _normalized(box, normalize)
        x[(slice(None),) + tuple(slice(e - s, b - s) for (e, b), s in zip(inside, starts))] = box if lead else box[None]
    return x


def _reflect(i: np.ndarray, n: int) -> np.ndarray:
    if n == 1:
        return np.zeros_like(i)
    period = 2 * (n - 1)
    i = np.mod(i, period)
    return np.where(i >= n, period - i, i)


def _normalized(box: np.ndarray, normalize) -> np.ndarray:
    if normalize is None:
        return box.astype(np.float32, copy=False)
    if callable(normalize):
        return np.asarray(normalize(box.astype(np.float32)), np.float32)
    scale, shift = normalize
    return (box.astype(np.float32) * np.float32(scale) + np.float32(shift)).astype(np.float32, copy=False)


def _activate(y: np.ndarray, activation) -> np.ndarray:
    if activation is None:
        return y
    if callable(activation):
        return np.asarray(activation(y), np.float32)
    if activation == "sigmoid":
        return (1.0 / (1.0 + np.exp(-y.astype(np.float64)))).astype(np.float32)
    if activation == "tanh":
        return np.tanh(y)
    if activation == "relu":
        return np.maximum(y, 0)
    if activation == "softmax":  # over the channels
        e = np.exp(y - y.max(axis=0, keepdims=True))
        return e / e.sum(axis=0, keepdims=True)
    raise _core.InvalidArgumentError(f"activation '{activation}': one of {', '.join(ACTIVATIONS)}, or a callable")


# Per worker process: the loaded models, by model key and plan.
_WORKERS: dict = {}
_WORKERS_LOCK = threading.Lock()
atexit.register(_WORKERS.clear)  # the graphs go before the interpreter does (nanobind reports what outlives it)


def _worker_for(spec: _Spec) -> _Worker:
    key = (spec.settings_key, spec.output_path)
    with _WORKERS_LOCK:
        w = _WORKERS.get(key)
        if w is None:
            w = _WORKERS[key] = _Worker(spec)
        return w


def _done_dir(output_path: str) -> pathlib.Path:
    return pathlib.Path(output_path) / ".tracegraph_blocks"


def _block_name(block) -> str:
    return "_".join(map(str, block))


def _daisy_worker(spec: _Spec) -> None:
    """A daisy worker process: one model load, then the blocks daisy hands it."""
    import daisy
    w = _worker_for(spec)
    client = daisy.Client()
    while True:
        with client.acquire_block() as block:
            if block is None:
                break
            w.process(tuple(int(o) // b for o, b in zip(block.write_roi.offset, spec.plan.block_shape)))


def _daisy_check(done: str, block_shape, block) -> bool:
    return (pathlib.Path(done) / _block_name(int(o) // b for o, b in zip(block.write_roi.offset, block_shape))).exists()


def _dask_block(spec: _Spec, block_id=None) -> np.ndarray:
    """A Dask task: one block (its index is the task's chunk index); its voxel count, 0 when it was done before."""
    if (_done_dir(spec.output_path) / _block_name(block_id)).exists():
        return np.zeros((1,) * len(block_id), np.int64)
    return np.full((1,) * len(block_id), _worker_for(spec).process(tuple(block_id)), np.int64)


# ---- progress -------------------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Progress:
    """What a progress callback receives: blocks done of all (``skipped`` of them were done before this run),
    voxels written in this run, seconds, output voxels per second."""
    done: int
    total: int
    skipped: int
    voxels: int
    seconds: float

    @property
    def voxels_per_second(self) -> float:
        return self.voxels / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        return (f"blocks {self.done}/{self.total} ({self.skipped} done before), "
                f"{self.voxels_per_second:,.0f} voxels/s, {self.seconds:.1f} s")


class _Reporter:
    """Counts done markers (every scheduler writes them) and reports: to stderr, or to a callback."""

    def __init__(self, spec: _Spec, total: int, skipped: int, progress, interval: float = 1.0):
        self.done_dir, self.plan = _done_dir(spec.output_path), spec.plan
        self.total, self.skipped, self.progress, self.interval = total, skipped, progress, interval
        self.start = time.perf_counter()
        self.stop = threading.Event()
        self.before = set(os.listdir(self.done_dir)) if self.done_dir.is_dir() else set()
        self.thread = None

    def snapshot(self) -> Progress:
        names = {n for n in os.listdir(self.done_dir) if not n.startswith(".")}
        new = names - self.before
        voxels = sum(_block_voxels(self.plan, tuple(map(int, n.split("_")))) for n in new)
        return Progress(len(names), self.total, self.skipped, voxels, time.perf_counter() - self.start)

    def report(self, final: bool = False) -> Progress:
        p = self.snapshot()
        if callable(self.progress):
            self.progress(p)
        elif self.progress:
            print(f"\r[tracegraph.blockwise] {p}", end="\n" if final else "", file=sys.stderr, flush=True)
        return p

    def __enter__(self):
        if self.progress:
            self.thread = threading.Thread(target=self._loop, daemon=True)
            self.thread.start()
        return self

    def _loop(self):
        while not self.stop.wait(self.interval):
            self.report()

    def __exit__(self, *exc):
        self.stop.set()
        if self.thread:
            self.thread.join()
        return False


def _block_voxels(plan: Plan, block) -> int:
    return int(np.prod([min(a.block, a.out_size - k * a.block) for a, k in zip(plan.axes, block)]))


@dataclasses.dataclass
class PredictResult:
    """What :func:`predict` did: the plan, the blocks it ran and those done before
    (a resumed run skips them), the output array (``output``: path and dataset "0"),
    the seconds it took and the output voxels it wrote per second."""
    plan: Plan
    output: str
    blocks: int
    ran: int
    skipped: int
    seconds: float
    voxels_per_second: float


# ---- predict -------------------------------------------------------------------------------------------------------

def predict(model: Any, input: Any, output: str | os.PathLike, *, block_shape: Sequence[int] | int | None = None,
            scheduler: str = "daisy", num_workers: int = 1, client: Any = None, backend: str = "xnnpack",
            threads: int = 1, normalize: Any = None, activation: str | Callable | None = None, halo: Any = None,
            padding: str = "zero", roi: Any = None, voxel_size: Sequence[float] | None = None,
            offset: Sequence[float] | None = None, output_index: int | str = 0, zarr_format: int = 3,
            dtype: Any = np.float32, progress: bool | Callable[[Progress], None] = True) -> PredictResult:
    """Predict ``model`` over ``input`` into the zarr group ``output``, block by block.

    - ``model``: a model file (``.pt2``, TorchScript, exported ``.json``) or a
      :class:`TracedGraph`. Its geometry sizes the blocks; an axis the analysis
      cannot follow is refused by name.
    - ``input``: a zarr path (v2 or v3; an OME-NGFF group's first dataset) or
      an array-like (``shape``, ``dtype``, ``__getitem__``: numpy, zarr,
      tensorstore, an N5 dataset another library opened); spatial axes,
      channels first where the model takes several. An in-memory array is
      copied to each worker process.
    - ``output``: a zarr group written with OME-NGFF ``multiscales`` (0.4 in
      zarr v2, 0.5 in v3: ``zarr_format``) and one array "0" of shape
      ``(channels, *spatial)`` chunked by the blocks; scale and translation
      from ``voxel_size`` and ``offset`` (the world position of input voxel
      0; read from the input's metadata when not given) and the network's
      stride and offset.
    - ``block_shape``: output voxels per block and axis (the chunks); a
      multiple of the network's grid (a valid UNet's lattice step, an
      upsampling's 2); None chooses blocks of about 64 input voxels.
    - ``halo``: input voxels read beyond a block's own context, per side.
      None (the default) takes the network's own (the geometry's ``halo()``:
      a same-padded network cuts no context but sees zeros at its window's
      edge, as far as its receptive field reaches; a valid one needs none),
      so that every output equals the whole-volume run's; 0 reads none.
    - ``padding``: the input beyond the volume: "zero" (zeros of the
      normalised input) or "reflect" (numpy's). A window is moved inside the
      volume where the block allows it (by whole steps of the network's
      grid), so edge blocks read no more padding than a whole-volume run.
    - ``normalize``: per dataset, never per block: None (float32 as read),
      ``(scale, shift)`` (``x * scale + shift``), "dtype" (an integer
      dtype's range to [0, 1]), or a pointwise callable on float32.
    - ``activation``: applied once: None, "sigmoid", "tanh", "relu",
      "softmax" (over channels) or a callable. A model that already ends in
      an activation (``tracegraph.output_activation``) is refused a second
      one: :class:`DoubleActivationError` names it.
    - ``scheduler``: "daisy" (``run_blockwise``, ``num_workers`` processes),
      "dask" (``client``, a ``distributed.Client``; without one, a
      ``LocalCluster`` of ``num_workers`` processes for this call) or "local"
      (this process). Each worker loads the model once, on ``backend``
      ("xnnpack" or "libtorch") with ``threads`` threads.
    - Resume: a block is marked done (``OUTPUT/.tracegraph_blocks``) once
      written; a run over the same output skips the blocks done before.
    - ``progress``: True prints blocks done and voxels/s to stderr; a
      callable receives :class:`Progress`.
    """
    g = _graph_of(model)
    name = g.graph.name or "model"
    array, meta_scale, meta_offset = open_input(input)
    geometry = g._model.network_geometry()
    nsp = len(geometry[0].axes) if geometry else 0
    spatial_meta = lambda v: None if v is None else list(v)[-nsp:]  # noqa: E731 (NGFF lists the channel axis too)
    voxel_size = voxel_size if voxel_size is not None else spatial_meta(meta_scale)
    offset = offset if offset is not None else spatial_meta(meta_offset)
    if scheduler not in ("daisy", "dask", "local"):
        raise _core.InvalidArgumentError(f"scheduler '{scheduler}': daisy, dask or local")
    if backend not in ("xnnpack", "libtorch"):
        raise _core.InvalidArgumentError(f"backend '{backend}': xnnpack or libtorch")
    if padding not in ("zero", "reflect"):
        raise _core.InvalidArgumentError(f"padding '{padding}': zero or reflect")
    p = plan(g, array.shape, block_shape=block_shape, halo=halo, roi=roi, voxel_size=voxel_size, offset=offset,
             output=output_index)
    activation = _check_activation(g, p, activation, name)
    normalize = _normalizer(normalize, array.dtype)

    output = os.fspath(output)
    axis_names = ["z", "y", "x"][-len(p.axes):]
    _create_output(output, p, zarr_format, dtype, axis_names)
    key = _model_key(model, g)
    done = _done_dir(output)
    settings = _reset_markers(done, {"model": key, "plan": p.fingerprint(), "normalize": repr(normalize),
                                     "activation": repr(activation), "padding": padding, "backend": backend})
    model_path = os.fspath(model) if isinstance(model, (str, os.PathLike)) else None
    document = weights = None
    if model_path is None:
        document, weights = g._model.serialize()
    spec = _Spec(model_path=model_path, model_document=document, model_weights=weights, model_key=key,
                 settings_key=hashlib.sha256(settings.encode()).hexdigest(), input_path=os.fspath(input) if isinstance(input, (str, os.PathLike)) else None,
                 input_array=None if isinstance(input, (str, os.PathLike)) else array, output_path=output, plan=p,
                 backend=backend, threads=threads, normalize=normalize, activation=activation, padding=padding)
    blocks = list(p.block_indices())
    finished = {n for n in os.listdir(done) if not n.startswith(".")}
    todo = [b for b in blocks if _block_name(b) not in finished]
    skipped = len(blocks) - len(todo)
    reporter = _Reporter(spec, len(blocks), skipped, progress)
    start = time.perf_counter()
    with reporter:
        if todo:
            if scheduler == "local":
                try:
                    for b in todo:
                        _worker_for(spec).process(b)
                finally:
                    _WORKERS.pop((spec.settings_key, spec.output_path), None)
            elif scheduler == "daisy":
                _run_daisy(spec, name, num_workers)
            else:
                _run_dask(spec, client, num_workers)
    final = reporter.report(final=True) if progress else reporter.snapshot()
    left = [b for b in blocks if not (done / _block_name(b)).exists()]
    if left:
        raise _core.InternalError(f"{name}: {len(left)} of {len(blocks)} blocks were not written (block {left[0]} "
                                  f"first); run again to finish them")
    seconds = time.perf_counter() - start
    return PredictResult(plan=p, output=output, blocks=len(blocks), ran=len(todo), skipped=skipped, seconds=seconds,
                         voxels_per_second=final.voxels / seconds if seconds > 0 else 0.0)


def _run_daisy(spec: _Spec, name: str, num_workers: int) -> None:
    import daisy
    import daisy.logging
    from funlib.geometry import Roi
    p = spec.plan
    nd = len(p.axes)
    daisy.logging.set_log_basedir(None)  # worker output to the console, not ./daisy_logs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # daisy advises its own markers over check_function: ours serve Dask too
        task = daisy.Task(
            f"tracegraph_{spec.model_key[:12]}", Roi((0,) * nd, tuple(a.out_size for a in p.axes)),
            Roi((0,) * nd, p.block_shape), Roi((0,) * nd, p.block_shape),
            process_function=functools.partial(_daisy_worker, spec),
            check_function=functools.partial(_daisy_check, str(_done_dir(spec.output_path)), p.block_shape),
            read_write_conflict=False, fit="shrink", max_workers=int(num_workers), max_retries=1, timeout=None)
        states = daisy.run_blockwise([task], progress=False, summary=False, return_states=True, host="127.0.0.1")
    for s in states.values():
        if s.failed_count or s.orphaned_count:
            raise _core.InternalError(f"{name}: daisy could not run {s.failed_count + s.orphaned_count} block(s): "
                                      f"{s.first_worker_error or s.last_worker_error}")


def _run_dask(spec: _Spec, client, num_workers: int) -> None:
    import dask
    import dask.array as da
    p = spec.plan
    chunks = tuple((1,) * n for n in p.grid)
    counts = da.map_blocks(_dask_block, dask.delayed(spec, pure=True), chunks=chunks, dtype=np.int64,
                           meta=np.empty((0,) * len(chunks), np.int64))
    if client is not None:
        client.compute(counts.sum()).result()
        return
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=int(num_workers), threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as c:
        c.compute(counts.sum()).result()


def _check_activation(g: TracedGraph, p: Plan, activation, name: str):
    if activation is None:
        return None
    if isinstance(activation, str) and activation not in ACTIVATIONS:
        raise _core.InvalidArgumentError(f"activation '{activation}': one of {', '.join(ACTIVATIONS)}, or a callable")
    own = g._model.output_activation()[g.output_names.index(p.output_name)]
    if own.kind not in ("none", "unknown"):
        asked = activation if isinstance(activation, str) else getattr(activation, "__name__", "a callable")
        raise DoubleActivationError(f"{name}: output %{p.output_name} already ends in {own.kind} (node {own.node}): "
                                    f"a second {asked} is refused (leave activation=None)")
    return activation


def _normalizer(normalize, dtype):
    if normalize is None or callable(normalize):
        return normalize
    if isinstance(normalize, str):
        if normalize != "dtype":
            raise _core.InvalidArgumentError(f"normalize '{normalize}': \"dtype\", (scale, shift) or a callable")
        dt = np.dtype(dtype)
        if dt.kind not in "ui":
            raise _core.InvalidArgumentError(f"normalize 'dtype' maps an integer range to [0, 1]: the input is {dt}")
        info = np.iinfo(dt)
        return (1.0 / (float(info.max) - float(info.min)), -float(info.min) / (float(info.max) - float(info.min)))
    scale, shift = normalize
    return (float(scale), float(shift))


def _model_key(model, g: TracedGraph) -> str:
    h = hashlib.sha256()
    if isinstance(model, (str, os.PathLike)):
        with open(model, "rb") as f:  # in chunks: a model of gigabytes is not held whole a second time
            for chunk in iter(lambda: f.read(1 << 24), b""):
                h.update(chunk)
        return h.hexdigest()
    document, weights = g._model.serialize()
    h.update(document.encode())
    h.update(weights)
    return h.hexdigest()


def _reset_markers(done: pathlib.Path, settings: dict) -> str:
    """Keep the done markers of a run with the same settings; forget those of another."""
    record = done / ".settings.json"
    text = json.dumps(settings, sort_keys=True)
    if done.is_dir() and (not record.is_file() or record.read_text() != text):
        shutil.rmtree(done)
    done.mkdir(parents=True, exist_ok=True)
    record.write_text(text)
    return text


def _graph_of(model: Any) -> TracedGraph:
    if isinstance(model, TracedGraph):
        return model
    if isinstance(model, (str, os.PathLike, bytes, bytearray, memoryview)):
        return load(model)
    raise _core.InvalidArgumentError(f"blockwise: a TracedGraph or a model file, not {type(model).__name__}"
                                     " (a torch module: tracegraph.trace(module, args) first)")

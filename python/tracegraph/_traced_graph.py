"""TracedGraph: a model's graph with the structure of its inputs and outputs,
read from a file or traced, that runs on the XNNPACK backend."""
from __future__ import annotations

import dataclasses
import os
import threading
from typing import Any, Mapping, Sequence

import numpy as np

from . import _core
from ._tree import TreeSpec

# numpy's name for each dtype the core names.
_NUMPY_DTYPES = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16, "int64": np.int64, "int32": np.int32,
    "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_, "complex64": np.complex64,
}


@dataclasses.dataclass(frozen=True)
class Node:
    """One node of a graph: its name, op (the format's own: ``aten::conv3d``,
    ``aten.conv3d.default``), the SDK's canonical op (``conv``, ``sigmoid``,
    or None), the names of the values it reads and writes, its constant
    arguments, its FLOPs where the shapes are known (the core's count), the
    path of the innermost module whose forward made it (``module``:
    "encoder.blocks.0.attn"; None for the root module's own nodes or where the
    file names none), and that module's frames from the outermost
    (``module_path``: [("encoder", "Encoder"), ...])."""
    name: str
    op: str
    canonical: str | None
    inputs: list
    outputs: list
    attributes: dict
    flops: float | None
    module: str | None = None
    module_path: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class DefaultsOptions:
    """Which default transforms ``optimize()`` runs: only ``enabled`` (when not
    empty), less ``disabled``; ``verify_each`` checks the graph after each;
    ``rewrite_budget`` stops after that many rewrites in all."""
    enabled: Sequence[str] = ()
    disabled: Sequence[str] = ()
    verify_each: bool = True
    rewrite_budget: int | None = None


class Graph:
    """The graph of a TracedGraph, read-only: nodes in order, values by name
    (dtype, shape, constant or not, producer), inputs and outputs, and the
    exported format's JSON document (``document()``, no weights)."""

    def __init__(self, model: "_core.Model"):
        self._model = model

    @property
    def name(self) -> str:
        return self._model.name

    @property
    def nodes(self) -> list[Node]:
        return [Node(**n) for n in self._model.nodes()]

    @property
    def values(self) -> dict:
        return self._model.values()

    @property
    def input_names(self) -> list[str]:
        return self._model.input_names

    @property
    def output_names(self) -> list[str]:
        return self._model.output_names

    def document(self, indent: int = -1) -> str:
        return self._model.document(indent)

    def dump(self) -> str:
        return self._model.dump()

    def __len__(self) -> int:
        return len(self._model.nodes())

    def __repr__(self) -> str:
        return f"<tracegraph.Graph {self.name!r}: {len(self)} nodes>"


class TracedGraph:
    """The result of :func:`trace` or :func:`load`: the recorded graph as
    :attr:`graph`, the structure of the traced inputs and outputs, and the
    graph's own surface (run, input_names, output_names, nodes, ...) reachable
    directly on this object.

    ``run`` takes the flattened tensor inputs positionally (a list) or by name
    (a dict) and returns the graph's output list; calling the object takes the
    traced input structure and returns the traced output structure. The graph
    arrives as recorded: ``optimize()``, ``to()`` and ``finalize()`` reach it
    through this object, and only a finalized graph runs.

    Arrays: numpy arrays (or anything numpy reads) in, numpy arrays out; torch
    tensors in, torch tensors out (sharing the result's memory). An input is
    converted where it must be, with a copy: a non-contiguous array made
    contiguous, a torch tensor on another device copied to the CPU, and a
    float64 array given for a float32 input (or one whose dtype the graph
    does not say: a TorchScript file read without LibTorch) cast to float32
    (numpy's ``astype``); any other dtype that differs from the input's is a
    DtypeMismatchError naming the input. Runs of one graph may come from
    several threads: they take turns, with the GIL released while each runs.
    """

    def __init__(self, model: "_core.Model"):
        self._model = model
        self._lock = threading.Lock()
        self._backend = "xnnpack"
        self._runner = None  # the LibTorch backend's, from finalize() on
        self._where = "cpu"
        self._input_dtypes = None  # {input name: dtype or None}, read once (values() walks the whole graph)
        self.graph = Graph(model)
        spec = model.in_spec_json
        self._in_spec = TreeSpec.from_json(spec) if spec is not None else None
        self._out_spec = TreeSpec.from_json(model.out_spec_json)

    # ---- the structure ------------------------------------------------------
    @property
    def in_spec(self) -> TreeSpec | None:
        """The pytree structure of the traced (args, kwargs); None when the trace ran against a signature alone."""
        return self._in_spec

    @property
    def out_spec(self) -> TreeSpec:
        """The pytree structure of the traced result."""
        return self._out_spec

    # The graph's own surface, reachable directly on this object.
    input_names = property(lambda self: self.graph.input_names, doc="The graph's input names, in signature order.")
    output_names = property(lambda self: self.graph.output_names, doc="The graph's output names, in order.")
    nodes = property(lambda self: self.graph.nodes, doc="The graph's nodes, in order (Node).")

    @property
    def device(self) -> str:
        if self._backend == "libtorch":
            return self._runner.device if self._runner else self._where
        return self._model.device

    @property
    def backend(self) -> str:
        """The backend that runs the graph: "xnnpack" (the default) or "libtorch"."""
        return self._backend

    def set_backend(self, name: str) -> None:
        """Chooses the backend before finalize(): "xnnpack" (CPU, needs nothing)
        or "libtorch" (CPU and CUDA; needs the torch this package was built
        against, and UnsupportedError says why where it cannot load)."""
        if self.is_finalized():
            raise _core.InvalidArgumentError("set_backend: the graph is finalized")
        if name not in ("xnnpack", "libtorch"):
            raise _core.InvalidArgumentError(f"set_backend: no backend '{name}' (xnnpack, libtorch)")
        if name == "libtorch":
            from ._libtorch_backend import extension
            extension()
        self._backend = name

    # ---- readying it --------------------------------------------------------
    def set_input_shapes(self, shapes: Sequence[Sequence[int]]) -> None:
        """Gives the inputs these shapes (one per input, in order) and forgets
        the shapes computed from them (inferred again at finalize()). Before finalize()."""
        self._model.set_input_shapes([list(map(int, s)) for s in shapes])
        self._input_dtypes = None

    def optimize(self, transforms: Sequence[Any] | None = None, max_num_iterations: int | None = None, *,
                 defaults: DefaultsOptions | Mapping | None = None) -> "_core.OptimizeReport":
        """optimize(transforms=None, max_num_iterations=None, *, defaults=None) -> OptimizeReport

        Run the graph optimizer on the recorded graph; max_num_iterations None
        takes the graph's default cap. ``transforms``: names (or objects with a
        ``name``) from :func:`tracegraph.transform_names`; None runs the
        defaults, as ``defaults`` chooses. An unknown name is NotFoundError.
        """
        if isinstance(defaults, Mapping):
            defaults = DefaultsOptions(**defaults)
        d = defaults or DefaultsOptions()
        names = None if transforms is None else [t if isinstance(t, str) else t.name for t in transforms]
        with self._lock:
            self._input_dtypes = None
            return self._model.optimize(names, max_num_iterations, list(d.enabled), list(d.disabled),
                                        bool(d.verify_each), d.rewrite_budget)

    def to(self, where: Any) -> None:
        """Choose where the graph runs ("cpu"), or move a finalized graph. The
        XNNPACK backend runs on the CPU: "cuda" is UnsupportedError at once, an
        unknown name InvalidArgumentError. A ``torch.device`` is read by its name."""
        where = str(where)
        if self._backend != "libtorch":
            self._model.to(where)
        elif self._runner is not None:
            self._runner.to(where)
        else:
            _core.parse_device(where)  # an unknown name is InvalidArgumentError here too
            self._where = where

    def finalize(self, *, threads: int = 1, profile: bool = False, memory_budget: int = 0,
                 conv_algorithm: str = "fastest") -> None:
        """finalize() -> None

        Ready the graph to run; calling it again changes nothing. ``threads``:
        0 for every core; ``profile`` records each node's time (``profile()``);
        ``memory_budget`` caps the bytes a plan may take (0: the machine's
        memory); ``conv_algorithm``: "fastest", "direct", "winograd", "winograd4".
        """
        with self._lock:
            if self._backend == "libtorch":
                if self._runner is None:
                    from ._libtorch_backend import extension
                    document, weights = self._model.serialize()
                    runner = extension().Runner(document, weights, self._model.name or "graph")
                    runner.to(self._where)
                    runner.finalize()
                    self._runner = runner
                return
            self._model.finalize(int(threads), bool(profile), int(memory_budget), conv_algorithm)

    def is_finalized(self) -> bool:
        """True once :meth:`finalize` ran; a trace returns a graph that is not finalized yet."""
        return self._runner is not None or self._model.is_finalized()

    # ---- running it ---------------------------------------------------------
    def run(self, inputs: Sequence[Any] | Mapping[str, Any]) -> list:
        """run(inputs) -> list[Tensor]

        Run the traced graph on flat tensor inputs and return its flat outputs:
        a sequence feeds the inputs in signature order, a mapping feeds them by
        input name. __call__ is the structured form.
        """
        if self._backend == "libtorch":
            return self._run_libtorch(inputs)
        if self._input_dtypes is None:
            values = self._model.values()
            self._input_dtypes = {n: values[n]["dtype"] for n in self._model.input_names if n in values}
        dtypes = self._input_dtypes
        if isinstance(inputs, Mapping):
            torch_out = any(_is_torch(v) for v in inputs.values())
            arrays = {str(k): _as_array(v, dtypes.get(str(k)), f"input '{k}'") for k, v in inputs.items()}
            outputs = self._model.run_named(arrays)
        else:
            if _is_array_like(inputs):
                raise _core.InvalidArgumentError("run() takes a list of inputs (or a dict by name), not one array: "
                                                 "run([x])")
            inputs = list(inputs)
            torch_out = any(_is_torch(v) for v in inputs)
            names = self._model.input_names
            arrays = [_as_array(v, dtypes.get(names[i]) if i < len(names) else None, f"input {i}")
                      for i, v in enumerate(inputs)]
            outputs = self._model.run(arrays)
        return _to_torch(outputs) if torch_out else outputs

    def _run_libtorch(self, inputs):
        import torch
        import torch.utils.dlpack as dlpack
        if self._runner is None:
            raise _core.NotFinalizedError("run: finalize() the graph first")
        names = self._model.input_names
        if isinstance(inputs, Mapping):
            unknown = [k for k in inputs if k not in names]
            if unknown:
                raise _core.NotFoundError(f"run: no input %{unknown[0]} (the inputs are {', '.join('%' + n for n in names)})")
            missing = [n for n in names if n not in inputs]
            if missing:
                raise _core.InvalidArgumentError(f"run: input %{missing[0]} is missing")
            inputs = [inputs[n] for n in names]
        inputs = list(inputs)
        torch_out = any(_is_torch(v) for v in inputs)
        tensors = [(v if _is_torch(v) else torch.from_numpy(np.ascontiguousarray(v))).detach().contiguous() for v in inputs]
        outputs = [dlpack.from_dlpack(c) for c in self._runner.run([dlpack.to_dlpack(t) for t in tensors])]
        return outputs if torch_out else [o.cpu().numpy() for o in outputs]

    def __call__(self, *args, **kwargs):
        """The traced input structure in, the traced output structure out."""
        if self._in_spec is None:
            flat = list(args)
            if kwargs:
                raise _core.InvalidArgumentError("this graph was made from a signature alone: it takes no keyword arguments")
        else:
            flat = self._in_spec.flatten((args, kwargs))
        return self._out_spec.unflatten(self.run(flat))

    def profile(self) -> list[dict]:
        """Per-node times of the last run (with ``finalize(profile=True)``): node, op, milliseconds, engine, flops."""
        return self._model.profile()

    def __repr__(self) -> str:
        state = "finalized" if self.is_finalized() else "not finalized"
        return f"<tracegraph.TracedGraph {self.graph.name!r}: {len(self.graph)} nodes, {state}>"


def load(source: str | os.PathLike | bytes | bytearray | memoryview,
         input_shapes: Sequence[Sequence[int]] | None = None, *,
         weights: str | os.PathLike | bytes | None = None) -> TracedGraph:
    """A model from a file or its bytes: a torch.export archive (``.pt2``), a
    TorchScript file (``.ts``/``.pt``, traced or scripted), or an exported
    graph (its ``.json`` path; the weights file it names, beside it, unless
    ``weights`` gives the safetensors file or its bytes). ``input_shapes``, one
    per input, let the TorchScript reader follow scripted code that branches on
    them, and are the graph's input shapes after. Not finalized."""
    shapes = [[int(d) for d in s] for s in input_shapes] if input_shapes else []
    if weights is not None:
        path = os.fspath(source)
        text = _read(path).decode("utf-8", errors="surrogateescape")
        if isinstance(weights, (bytes, bytearray, memoryview)):
            data, weights_name = bytes(weights), "<weights>"
        else:
            weights_name = os.fspath(weights)
            data = _read(weights_name)
        g = TracedGraph(_core.load_exported(text, data, path, weights_name))
    elif isinstance(source, (bytes, bytearray, memoryview)):
        return TracedGraph(_core.load_bytes(bytes(source), "<bytes>", shapes))
    else:
        return TracedGraph(_core.load_path(os.fspath(source), shapes))
    if shapes:
        g.set_input_shapes(shapes)
    return g


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise _core.IoError(f"{path}: cannot be read ({e.strerror or e})") from e


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach") and hasattr(x, "numpy")


def _is_array_like(x) -> bool:
    return isinstance(x, np.ndarray) or _is_torch(x)


def _as_array(x, dtype: str | None, what: str) -> np.ndarray:
    """``x`` as a C-contiguous numpy array the core borrows (the conversions TracedGraph's doc lists)."""
    if _is_torch(x):
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        x = t.contiguous().numpy()
    a = np.asarray(x)
    want = _NUMPY_DTYPES.get(dtype or "")
    if want is None and a.dtype == np.float64:
        a = a.astype(np.float32)  # an input of no known dtype (TorchScript read without LibTorch) takes float32
    elif want is not None and a.dtype != want:
        if a.dtype == np.float64 and want == np.float32:
            a = a.astype(np.float32)
        else:
            raise _core.DtypeMismatchError(f"{what}: expected {dtype}, got {a.dtype} (tracegraph casts float64 to float32, "
                                           "nothing else: cast it first)")
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)  # (ascontiguousarray makes a 0-d array 1-d)


def _to_torch(outputs: list) -> list:
    import torch
    return [torch.from_numpy(o) for o in outputs]

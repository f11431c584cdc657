"""tracegraph: read, inspect and run PyTorch models with the tracegraph core.

The surface the seeds define, in their names::

    import tracegraph
    g = tracegraph.load("unet.pt2")                 # .pt2, .ts/.pt (TorchScript), or an exported graph's .json
    tracegraph.output_activation(g)                 # [Activation(sigmoid)]: what each output applies last
    tracegraph.network_geometry(g)                  # per output and spatial axis: valid sizes, offset, stride, context
    tracegraph.module_tree(g)                       # the module hierarchy: node counts, parameters, FLOPs, repeats
    g.finalize()                                    # ready to run (XNNPACK, on the CPU)
    outputs = g.run([x])                            # flat numpy arrays in, flat list out
    y = g(x)                                        # the traced structure in and out

    g = tracegraph.trace(module, (x,))              # a live torch module (torch.export, else an fx trace)
    nodes, output = tracegraph.module_graph(model)  # the (nodes, output) view an inference server reads
    tracegraph.blockwise.predict(g, "raw.zarr", "pred.zarr", scheduler="daisy", num_workers=2)  # block by block

Running needs numpy only; ``trace``, ``module_graph`` of a live module and
``tracegraph.export`` need torch. Errors are :class:`Error` subclasses
(``ParseError``, ``NotFinalizedError``, ...) whose ``.code`` is the core's
code and whose message is the one the C++ and JavaScript APIs give.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

# Names resolved on first use, so that ``tracegraph.export`` (pure Python over
# torch) imports without the compiled core.
_LAZY = {
    "load": "._traced_graph",
    "TracedGraph": "._traced_graph",
    "Graph": "._traced_graph",
    "Node": "._traced_graph",
    "DefaultsOptions": "._traced_graph",
    "TreeSpec": "._tree",
    "output_activation": "._activation",
    "module_graph": "._module_graph",
    "network_geometry": "._geometry",
    "geometry_json": "._geometry",
    "module_tree": "._module_tree",
    "ModuleTree": "._module_tree",
    "ModuleGroup": "._module_tree",
    "OutputGeometry": "._core",
    "AxisGeometry": "._core",
    "Rational": "._core",
    "trace": "._tracing",
    "Activation": "._core",
    "OptimizeReport": "._core",
    "instruction_set": "._core",
    "lowered_ops": "._core",
    "transform_names": "._core",
}

__all__ = sorted(_LAZY) + ["Error", "blockwise", "export"]


def __getattr__(name: str):
    if name == "blockwise":  # a module of its own: tracegraph.blockwise.predict
        value = importlib.import_module(".blockwise", __name__)
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    elif name == "Error" or name.endswith("Error"):
        core = importlib.import_module("._core", __name__)
        if not hasattr(core, name):
            raise AttributeError(f"module 'tracegraph' has no attribute '{name}'")
        value = getattr(core, name)
    else:
        raise AttributeError(f"module 'tracegraph' has no attribute '{name}'")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))

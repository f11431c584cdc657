"""A module as one functional graph of core ATen ops, by an fx trace: for a
module ``torch.export`` refuses (``export`` saves what it reads as a ``.pt2``,
which tracegraph's C++ reader opens; this is the other path).

An fx ``symbolic_trace`` in which ``torch.nn``'s own modules and TorchScript
submodules stay whole (a ``Sequential(scripted_unet, nn.Sigmoid())``), then
traced down to core ATen ops with ``make_fx`` on the example inputs, with
in-place ops and views made functional. A forward that branches on its
input's values cannot be traced this way: the error says so.
"""
from __future__ import annotations

import dataclasses

import torch
from torch.utils import _pytree as pytree


class ExportError(Exception):
    """A model this exporter cannot write; the message names the node or op."""


@dataclasses.dataclass
class AtenGraph:
    graph: torch.fx.Graph              # call_function nodes are core ATen OpOverloads or operator.getitem
    constants: dict[str, torch.Tensor]  # get_attr node name -> its tensor
    user_inputs: list[str]             # placeholder names of the flattened inputs, in order
    in_spec: pytree.TreeSpec | None
    out_spec: pytree.TreeSpec | None
    reader: str                        # "fx"


def aten_graph(model, example_inputs=None) -> AtenGraph:
    """The fx trace of ``model`` (a torch module) on ``example_inputs``."""
    if not isinstance(model, torch.nn.Module):
        raise ExportError(f"expected a torch module, got {type(model).__name__}")
    if example_inputs is None:
        raise ExportError("a module needs example inputs (a tuple of tensors) to be traced")
    try:
        return _from_fx(model.eval(), tuple(example_inputs))
    except ExportError:
        raise
    except Exception as e:
        raise ExportError(f"cannot trace {type(model).__name__}: {_first_line(e)}") from e


def _first_line(e) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


class _Tracer(torch.fx.Tracer):
    """torch.nn's modules and TorchScript submodules stay whole (make_fx goes into them)."""

    def is_leaf_module(self, m, qualname):
        return isinstance(m, torch.jit.ScriptModule) or super().is_leaf_module(m, qualname)


def _mutable(value):
    """fx's immutable_dict / immutable_list as the dict / list they stand for
    (their pytree type names are fx's own, which no tree spec reader knows)."""
    if isinstance(value, dict):
        return {k: _mutable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mutable(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_mutable(v) for v in value)
    return value


def _decompositions():
    """torch.export's own table, less its upsampling entries: make_fx would
    turn a resize into index arithmetic, where torch.export keeps the resize op
    (both backends run it whole)."""
    table = torch.export.default_decompositions().materialize()
    return {op: fn for op, fn in table.items() if "upsample" not in str(op)}


def _from_fx(model, args) -> AtenGraph:
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.func import functionalize

    if isinstance(model, torch.fx.GraphModule):
        module = model
    elif isinstance(model, torch.jit.ScriptModule):
        module = model  # a TorchScript module as a whole: make_fx runs its interpreter on proxies
    else:
        module = torch.fx.GraphModule(model, _Tracer().trace(model))
    with torch.no_grad():
        traced = make_fx(functionalize(module, remove="mutations_and_views"),
                         decomposition_table=_decompositions())(*args)
    graph = traced.graph
    graph.eliminate_dead_code()  # decompositions leave buffers no one reads (a batch norm's statistics)
    constants = {n.name: getattr(traced, n.target).detach() for n in graph.nodes if n.op == "get_attr"}
    user_inputs = [n.name for n in graph.nodes if n.op == "placeholder"]
    _, in_spec = pytree.tree_flatten((args, {}))
    output = next(n for n in graph.nodes if n.op == "output")
    _, out_spec = pytree.tree_flatten(_mutable(output.args[0]))
    return AtenGraph(graph, constants, user_inputs, in_spec, out_spec, "fx")

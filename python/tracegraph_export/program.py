"""A model as one functional graph of core ATen ops, from either source.

- A ``torch.export`` program (``torch.export.export(model, args)``, or a
  ``.pt2`` file from ``torch.export.save``): its graph after
  ``run_decompositions()`` (core ATen), with parameters, buffers and lifted
  constants as weights and its call spec's ``in_spec`` / ``out_spec``.
- Any other module (or one ``torch.export`` refuses): an fx
  ``symbolic_trace`` in which ``torch.nn``'s own modules and TorchScript
  submodules stay whole (a ``Sequential(scripted_unet, nn.Sigmoid())``), then
  traced down to core ATen ops with ``make_fx`` on the example inputs, with
  in-place ops and views made functional. A forward that branches on its
  input's values cannot be traced this way: the error says so.
"""
from __future__ import annotations

import dataclasses
import os

import torch
from torch.utils import _pytree as pytree


class ExportError(Exception):
    """A model this exporter cannot write; the message names the node or op."""


@dataclasses.dataclass
class AtenGraph:
    graph: torch.fx.Graph              # call_function nodes are core ATen OpOverloads or operator.getitem
    constants: dict[str, torch.Tensor]  # placeholder or get_attr node name -> its tensor
    user_inputs: list[str]             # placeholder names of the flattened inputs, in signature order
    in_spec: pytree.TreeSpec | None
    out_spec: pytree.TreeSpec | None
    reader: str                        # "torch.export" or "fx"


def aten_graph(model, example_inputs=None, method: str = "auto") -> AtenGraph:
    """The graph of ``model`` (a module, an ExportedProgram, or a ``.pt2`` path).

    ``method`` for a module: "auto" (torch.export, else the fx trace),
    "export" or "fx" (that one alone)."""
    if method not in ("auto", "export", "fx"):
        raise ExportError(f"method must be 'auto', 'export' or 'fx', not {method!r}")
    if isinstance(model, (str, os.PathLike)):
        model = torch.export.load(os.fspath(model))
    if isinstance(model, torch.export.ExportedProgram):
        return _from_program(model)
    if not isinstance(model, torch.nn.Module):
        raise ExportError(f"expected a torch module, an ExportedProgram or a .pt2 path, got {type(model).__name__}")
    if example_inputs is None:
        raise ExportError("a module needs example inputs (a tuple of tensors) to be exported")
    args = tuple(example_inputs)
    model = model.eval()
    export_error = None
    if method != "fx" and not isinstance(model, torch.jit.ScriptModule):
        try:
            with torch.no_grad():
                program = torch.export.export(model, args)
            return _from_program(program)
        except Exception as e:  # torch.export's many refusals; the fx path may still read it
            if method == "export":
                raise ExportError(f"torch.export cannot export {type(model).__name__}: {_first_line(e)}") from e
            export_error = e
    try:
        return _from_fx(model, args)
    except Exception as e:
        why = f"torch.export: {_first_line(export_error)}; " if export_error else ""
        raise ExportError(f"cannot trace {type(model).__name__}: {why}fx: {_first_line(e)}") from e


def _first_line(e) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def _from_program(program) -> AtenGraph:
    from torch.export.graph_signature import InputKind, OutputKind

    program = program.run_decompositions()
    signature = program.graph_signature
    placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
    constants, user_inputs = {}, []
    for spec, node in zip(signature.input_specs, placeholders):
        if spec.kind == InputKind.USER_INPUT:
            if not isinstance(node.meta.get("val"), torch.Tensor):
                raise ExportError(f"input {node.name} is not a tensor ({type(node.meta.get('val')).__name__})")
            user_inputs.append(node.name)
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            table = program.state_dict if spec.target in program.state_dict else program.constants
            constants[node.name] = table[spec.target].detach()
        else:
            raise ExportError(f"input {node.name} is a {spec.kind.name}, which the format cannot hold")
    for spec in signature.output_specs:
        if spec.kind != OutputKind.USER_OUTPUT:
            raise ExportError(f"the program writes {spec.target} ({spec.kind.name}): export the model in eval() mode")
    return AtenGraph(program.graph, constants, user_inputs, program.call_spec.in_spec, program.call_spec.out_spec,
                     "torch.export")


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

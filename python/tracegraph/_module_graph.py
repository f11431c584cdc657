"""module_graph: the graph a torch model computes, for its output activation.

``module_graph(model)`` reads the graph of what an inference server runs, as
:func:`tracegraph.output_activation` takes it: ``(nodes, output)``, each node
``{"op", "inputs", "outputs"}`` (a clip's ``min`` and ``max`` where they are
constants), ``output`` the name of the value the model returns. The op names
are the format's own; the core's op table reads them.

- A TorchScript module: its graph with every submodule's call inlined, as the
  core's TorchScript reader reads the module's archive (its constants and
  attribute reads, the weights, are values no node writes; a list built for
  ``aten::cat`` is the cat's inputs); where that reader needs the input shapes
  (scripted code that branches on them), torch's own ``inlined_graph``.
- A torch.export program, or a module with an fx graph of its own (an
  ExportedProgram's ``module()``, ``torch.export.unflatten``'s): that graph
  (a program as the core's ``.pt2`` reader reads it), each submodule called
  with a graph of its own inlined.
- Any other module: a torch.fx symbolic trace, torch.nn's own modules and
  TorchScript submodules left whole and read as above (a module as the op it
  computes: ``nn.Sigmoid`` as ``aten::sigmoid``, ``nn.ReLU6`` as a clip to
  [0, 6]). A forward that branches on its input's values cannot be traced:
  no graph.
- A TracedGraph, or a model file's path: its graph, as the core reads it.

An in-place op (``aten::sigmoid_``, ``x.sigmoid_()``) changes the value it is
given, and a traced graph goes on reading that value by its old name
(``x.sigmoid_(); return x`` returns the name the sigmoid was given): each later
read of it is read as the in-place op's output instead.

torch is imported when a live module is first read.
"""
from __future__ import annotations

import io
import logging
import os
from typing import Any

from . import _core
from ._traced_graph import TracedGraph, load

logger = logging.getLogger(__name__)

# torch.nn modules left whole by the symbolic trace, read as the aten op each
# computes; a clip's bounds as (min, max) or the module's attribute names.
_MODULE_OPS = {
    "Sigmoid": "sigmoid", "Tanh": "tanh", "ReLU": "relu", "Softmax": "softmax", "Softmax2d": "softmax",
    "LogSoftmax": "log_softmax", "LeakyReLU": "leaky_relu", "ELU": "elu", "GELU": "gelu", "SiLU": "silu",
    "Mish": "mish", "Softplus": "softplus", "Hardsigmoid": "hardsigmoid", "Hardswish": "hardswish",
    "PReLU": "prelu", "LogSigmoid": "log_sigmoid", "Identity": "clone", "Flatten": "flatten",
    "Dropout": "dropout", "Dropout1d": "dropout", "Dropout2d": "dropout", "Dropout3d": "dropout",
    "Linear": "linear", "Conv1d": "conv1d", "Conv2d": "conv2d", "Conv3d": "conv3d",
    "ConvTranspose1d": "conv_transpose1d", "ConvTranspose2d": "conv_transpose2d", "ConvTranspose3d": "conv_transpose3d",
    "BatchNorm1d": "batch_norm", "BatchNorm2d": "batch_norm", "BatchNorm3d": "batch_norm",
    "InstanceNorm1d": "instance_norm", "InstanceNorm2d": "instance_norm", "InstanceNorm3d": "instance_norm",
    "GroupNorm": "group_norm", "LayerNorm": "layer_norm",
    "MaxPool1d": "max_pool1d", "MaxPool2d": "max_pool2d", "MaxPool3d": "max_pool3d",
    "AvgPool1d": "avg_pool1d", "AvgPool2d": "avg_pool2d", "AvgPool3d": "avg_pool3d",
    "AdaptiveAvgPool1d": "adaptive_avg_pool1d", "AdaptiveAvgPool2d": "adaptive_avg_pool2d",
    "AdaptiveAvgPool3d": "adaptive_avg_pool3d", "AdaptiveMaxPool2d": "adaptive_max_pool2d",
    "ReLU6": "hardtanh", "Hardtanh": "hardtanh",
}
_UPSAMPLE = {"nearest": "upsample_nearest2d", "bilinear": "upsample_bilinear2d", "linear": "upsample_linear1d",
             "trilinear": "upsample_trilinear3d", "bicubic": "upsample_bicubic2d", "nearest-exact": "_upsample_nearest_exact2d"}
# clip ops of call_function / call_method nodes: (min argument, max argument, their defaults)
_CLIPS = {"clamp": ("min", "max", None, None), "clip": ("min", "max", None, None),
          "clamp_": ("min", "max", None, None), "clip_": ("min", "max", None, None),
          "hardtanh": ("min_val", "max_val", -1.0, 1.0), "hardtanh_": ("min_val", "max_val", -1.0, 1.0),
          "relu6": (None, None, 0.0, 6.0)}


def module_graph(model: Any):
    """``(nodes, output)`` of ``model``, a torch module, a torch.export program,
    a TracedGraph or a model file's path; None when it cannot be read."""
    try:
        view = _view(model)
    except Exception as e:  # the seed's contract: no graph rather than an exception
        logger.info("module_graph: cannot read %s: %s", type(model).__name__, e)
        return None
    return view


def _view(model):
    if isinstance(model, TracedGraph):
        nodes, output, _ = model._model.module_graph()
        return nodes, output
    if isinstance(model, (str, os.PathLike)):
        return _view(load(model))
    import torch
    if isinstance(model, torch.export.ExportedProgram):
        buffer = io.BytesIO()
        torch.export.save(model, buffer)
        return _view(load(buffer.getvalue()))
    if isinstance(model, torch.jit.ScriptModule):
        nodes, output, _ = _torchscript_view(model)
        return nodes, output
    if isinstance(model, torch.fx.GraphModule):
        return _fx_view(model, model.graph)
    if isinstance(model, torch.nn.Module):
        class Tracer(torch.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return isinstance(m, torch.jit.ScriptModule) or super().is_leaf_module(m, qualname)
        graph = Tracer().trace(model)
        return _fx_view(model, graph)
    raise TypeError(f"not a torch module, program or model file: {type(model).__name__}")


def _torchscript_view(module):
    """(nodes, output, the forward's input names) of a TorchScript module."""
    import torch
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    try:
        g = load(buffer.getvalue())
    except _core.NeedsInputShapesError:
        nodes, output = _inlined_graph_view(module)
        return nodes, output, [i.debugName() for i in list(module.inlined_graph.inputs())[1:]]
    nodes, output = _view(g)
    return nodes, output, g.input_names


def _inlined_graph_view(module):
    """torch's own ``inlined_graph`` of a scripted module, for code the core reads only with input shapes."""
    graph = module.inlined_graph
    lists = {}
    constants = {}
    alias = {}
    nodes = []
    for n in graph.nodes():
        kind = n.kind()
        outs = [o.debugName() for o in n.outputs()]
        if kind == "prim::Constant":
            if outs:
                try:
                    constants[outs[0]] = n.output().toIValue()
                except Exception:
                    pass
            continue
        if kind == "prim::GetAttr":
            continue
        ins = [alias.get(i.debugName(), i.debugName()) for i in n.inputs()]
        if kind == "prim::ListConstruct":
            lists[outs[0]] = ins
            continue
        flat = []
        for i in ins:
            flat.extend(lists.get(i, [i]))
        entry = {"op": kind, "inputs": flat, "outputs": outs}
        base = kind.split("::")[-1]
        if base in _CLIPS:
            _clip_bounds(entry, base, {}, [constants.get(i) for i in ins[1:3]])
        nodes.append(entry)
        if _inplace(base) and ins:
            alias[ins[0]] = outs[0] if outs else ins[0]
    ret = list(graph.return_node().inputs())
    if not ret:
        return nodes, None
    out = alias.get(ret[0].debugName(), ret[0].debugName())
    for n in nodes:  # a tuple or list the model returns: its first element
        if n["outputs"] == [out] and n["op"] in ("prim::TupleConstruct", "prim::ListConstruct") and n["inputs"]:
            out = n["inputs"][0]
    return nodes, out


def _inplace(base: str) -> bool:
    return base.endswith("_") and not base.startswith("__")


def _clip_bounds(entry, base, kwargs, positional):
    lo_name, hi_name, lo_default, hi_default = _CLIPS[base]
    lo = kwargs.get(lo_name, positional[0] if len(positional) > 0 and positional[0] is not None else lo_default)
    hi = kwargs.get(hi_name, positional[1] if len(positional) > 1 and positional[1] is not None else hi_default)
    if isinstance(lo, (int, float)) and not isinstance(lo, bool):
        entry["min"] = float(lo)
    if isinstance(hi, (int, float)) and not isinstance(hi, bool):
        entry["max"] = float(hi)


def _fx_view(root, graph):
    """The view of an fx graph: call_function, call_method and call_module nodes."""
    import torch
    nodes = []
    alias = {}

    def name_of(a):
        return alias.get(a.name, a.name)

    def tensor_inputs(args, kwargs):
        flat, _ = torch.utils._pytree.tree_flatten((args, kwargs))
        return [name_of(a) for a in flat if isinstance(a, torch.fx.Node)]

    output = None
    for n in graph.nodes:
        if n.op in ("placeholder", "get_attr"):
            continue
        if n.op == "output":
            flat, _ = torch.utils._pytree.tree_flatten(n.args[0])
            firsts = [a for a in flat if isinstance(a, torch.fx.Node)]
            output = name_of(firsts[0]) if firsts else None
            continue
        ins = tensor_inputs(n.args, n.kwargs)
        if n.op == "call_module":
            sub = root.get_submodule(n.target)
            if isinstance(sub, torch.jit.ScriptModule):
                nodes.extend(_inline_script(sub, n.name, ins))
                continue
            entry = {"op": _module_op(sub), "inputs": ins, "outputs": [n.name]}
            cls = type(sub).__name__
            if cls == "ReLU6":
                entry.update(min=0.0, max=6.0)
            elif cls == "Hardtanh":
                entry.update(min=float(sub.min_val), max=float(sub.max_val))
            nodes.append(entry)
            if getattr(sub, "inplace", False) and ins:
                alias[ins[0]] = n.name
            continue
        if n.op == "call_function":
            target = n.target
            if isinstance(target, torch._ops.OpOverload):
                op = str(target)  # "aten.sigmoid.default"
                base = target._schema.name.split("::")[-1]
            else:  # torch.sigmoid, F.relu, operator.add: the aten op of that name
                base = getattr(target, "__name__", str(target))
                if base == "getitem":  # x[:, :1], a tuple's element: a view, read through
                    base = "slice"
                elif base == "interpolate":
                    base = _UPSAMPLE.get(n.kwargs.get("mode", "nearest"), "upsample")
                op = f"aten::{base}"
        else:  # call_method
            base = str(n.target)
            op = f"aten::{base}"
        entry = {"op": op, "inputs": ins, "outputs": [n.name]}
        if base in _CLIPS:
            positional = [a if not isinstance(a, torch.fx.Node) else None for a in n.args[1:3]]
            _clip_bounds(entry, base, dict(n.kwargs), positional)
        nodes.append(entry)
        inplace = _inplace(base) or n.kwargs.get("inplace") is True
        if inplace and ins:
            alias[ins[0]] = n.name
    return nodes, output


def _module_op(sub) -> str:
    cls = type(sub).__name__
    if cls in ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"):
        mode = getattr(sub, "mode", "nearest")
        return f"aten::{_UPSAMPLE.get(mode, 'upsample_' + mode)}"
    if cls in _MODULE_OPS:
        return f"aten::{_MODULE_OPS[cls]}"
    return f"{type(sub).__module__}.{cls}"  # a module the view cannot name: its class


def _inline_script(sub, prefix, inputs):
    """A TorchScript submodule's view inlined: its values renamed under the
    calling node's name, its inputs the call's, its output the call's."""
    nodes, output, arg_names = _torchscript_view(sub)
    rename = dict(zip(arg_names, inputs))
    outs_written = {o for n in nodes for o in n["outputs"]}
    graph_inputs = list(dict.fromkeys(i for n in nodes for i in n["inputs"] if i not in outs_written))
    for n in nodes:
        for o in n["outputs"]:
            rename[o] = prefix if o == output else f"{prefix}.{o}"
    for v in graph_inputs:
        rename.setdefault(v, f"{prefix}.{v}")
    out = []
    for n in nodes:
        m = dict(n)
        m["inputs"] = [rename.get(i, i) for i in n["inputs"]]
        m["outputs"] = [rename.get(o, o) for o in n["outputs"]]
        out.append(m)
    return out

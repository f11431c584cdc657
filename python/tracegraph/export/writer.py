"""An AtenGraph in tracegraph's exported format (docs/format.md): the JSON
document and its safetensors weights.

Each ATen node keeps its op name as torch writes it (``aten.convolution.default``);
its tensor arguments become inputs, listed by schema argument in ``arg_names``,
and its other arguments attributes named after the schema argument, as the
C++ TorchScript reader writes them. A node whose outputs are read through
``operator.getitem`` (``max_pool2d_with_indices``, a batch norm's three
results) becomes one node with one output per element.
"""
from __future__ import annotations

import json
import math
import operator
import struct

import torch
from torch.utils import _pytree as pytree

from .program import AtenGraph, ExportError

_DTYPES = {  # torch dtype -> (the format's name, safetensors' name)
    torch.float32: ("float32", "F32"), torch.float64: ("float64", "F64"), torch.float16: ("float16", "F16"),
    torch.bfloat16: ("bfloat16", "BF16"), torch.int64: ("int64", "I64"), torch.int32: ("int32", "I32"),
    torch.int16: ("int16", "I16"), torch.int8: ("int8", "I8"), torch.uint8: ("uint8", "U8"), torch.bool: ("bool", "BOOL"),
    torch.complex64: ("complex64", "C64"),
}
# c10::ScalarType, c10::Layout and c10::MemoryFormat codes: what a schema's
# ScalarType / Layout / MemoryFormat argument holds as an int in TorchScript.
_SCALAR_TYPES = {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4, torch.float16: 5,
                 torch.float32: 6, torch.float64: 7, torch.complex64: 9, torch.bool: 11, torch.bfloat16: 15}
_LAYOUTS = {torch.strided: 0}
_MEMORY_FORMATS = {torch.contiguous_format: 0, torch.preserve_format: 1, torch.channels_last: 2,
                   torch.channels_last_3d: 3}


def _float(x: float):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _attribute(value, where: str):
    """A constant argument as {"type", "value"}, or None where the format has no kind for it."""
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, int):
        return {"type": "int", "value": value}
    if isinstance(value, float):
        return {"type": "float", "value": _float(value)}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    if isinstance(value, torch.dtype):
        if value not in _SCALAR_TYPES:
            raise ExportError(f"{where}: dtype {value} is not one the format holds")
        return {"type": "int", "value": _SCALAR_TYPES[value]}
    if isinstance(value, torch.layout) and value in _LAYOUTS:
        return {"type": "int", "value": _LAYOUTS[value]}
    if isinstance(value, torch.memory_format) and value in _MEMORY_FORMATS:
        return {"type": "int", "value": _MEMORY_FORMATS[value]}
    if isinstance(value, torch.device):
        return {"type": "string", "value": str(value)}
    if isinstance(value, (list, tuple)):
        items = list(value)
        if all(isinstance(x, bool) for x in items) and items:
            return {"type": "bools", "value": items}
        if all(isinstance(x, int) and not isinstance(x, bool) for x in items):
            return {"type": "ints", "value": items}
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in items):
            return {"type": "floats", "value": [_float(float(x)) for x in items]}
        if all(isinstance(x, str) for x in items):
            return {"type": "strings", "value": items}
    raise ExportError(f"{where}: a constant of type {type(value).__name__} ({value!r}) the format cannot hold")


def _type_of(val, where: str) -> dict:
    if not isinstance(val, torch.Tensor):
        raise ExportError(f"{where}: produces a {type(val).__name__}, not a tensor")
    if val.dtype not in _DTYPES:
        raise ExportError(f"{where}: dtype {val.dtype} is not one the format holds")
    try:
        shape = [int(d) for d in val.shape]
    except (TypeError, ValueError) as e:  # a symbolic size
        raise ExportError(f"{where}: shape {list(val.shape)} is not static") from e
    return {"dtype": _DTYPES[val.dtype][0], "shape": shape}


def _bind(node: torch.fx.Node):
    """(schema argument, value) for each argument the node passes, by schema order."""
    schema = node.target._schema
    out = []
    for i, arg in enumerate(schema.arguments):
        if i < len(node.args) and not arg.kwarg_only:
            out.append((arg, node.args[i]))
        elif arg.name in node.kwargs:
            out.append((arg, node.kwargs[arg.name]))
    if len(node.args) > len([a for a in schema.arguments if not a.kwarg_only]):
        raise ExportError(f"node {node.name} ({node.target}): more arguments than its schema has")
    return out


def document(ag: AtenGraph, name: str, weights_file: str, metadata: dict | None = None):
    """(the JSON document as a dict, [(key, tensor)] for the safetensors file)."""
    values, nodes, weights = [], [], []
    ids: dict[torch.fx.Node, list[int]] = {}  # fx node -> the ids of its values (one per output)
    names: set[str] = set()

    def new_value(value_name: str, val, where: str, constant: str | None = None) -> int:
        base, k = value_name, 1
        while value_name in names:
            value_name, k = f"{base}.{k}", k + 1
        names.add(value_name)
        v = {"id": len(values), "name": value_name, **_type_of(val, where)}
        if constant is not None:
            v["constant"] = constant
        values.append(v)
        return v["id"]

    fx_nodes = list(ag.graph.nodes)
    placeholders = {n.name: n for n in fx_nodes if n.op in ("placeholder", "get_attr")}
    # The canonical order: graph inputs, then constants, then node outputs in node order.
    inputs = []
    for input_name in ag.user_inputs:
        n = placeholders[input_name]
        ids[n] = [new_value(n.name, n.meta["val"], f"input {n.name}")]
        inputs.append(ids[n][0])
    for n in fx_nodes:
        if n.op in ("placeholder", "get_attr") and n not in ids:
            if n.name not in ag.constants:
                raise ExportError(f"{n.op} {n.name}: neither an input nor a weight")
            t = ag.constants[n.name]
            ids[n] = [new_value(n.name, t, f"weight {n.name}", constant=n.name)]
            weights.append((n.name, t))
    # getitem readers name the outputs they pick.
    picked: dict[tuple[torch.fx.Node, int], str] = {}
    for n in fx_nodes:
        if n.op == "call_function" and n.target is operator.getitem:
            picked.setdefault((n.args[0], n.args[1]), n.name)

    outputs = []
    for n in fx_nodes:
        if n.op in ("placeholder", "get_attr"):
            continue
        if n.op == "output":
            for leaf in pytree.tree_leaves(n.args[0]):
                if not isinstance(leaf, torch.fx.Node) or leaf not in ids or len(ids[leaf]) != 1:
                    raise ExportError(f"output {leaf}: not a tensor the graph computes")
                outputs.append(ids[leaf][0])
            continue
        if n.op != "call_function":
            raise ExportError(f"node {n.name}: {n.op} {n.target} is not an ATen call (the graph was not lowered)")
        if n.target is operator.getitem:
            src, index = n.args
            ids[n] = [ids[src][index]]
            continue
        if not isinstance(n.target, torch._ops.OpOverload):
            raise ExportError(f"node {n.name}: calls {n.target}, which is not an ATen operator")
        where = f"node {n.name} ({n.target})"
        if n.meta.get("val") is None and not n.users:
            continue  # torch's own checks while tracing (aten._assert_tensor_metadata, ...): they produce nothing
        node_inputs, arg_names, attributes = [], [], {}
        for arg, value in _bind(n):
            if isinstance(value, torch.fx.Node):
                node_inputs.append(ids[value][0])
                arg_names.append(arg.name)
            elif isinstance(value, (list, tuple)) and any(isinstance(x, torch.fx.Node) for x in value):
                if not all(isinstance(x, torch.fx.Node) or x is None for x in value):
                    raise ExportError(f"{where}: argument '{arg.name}' mixes tensors and constants")
                for x in value:
                    if x is not None:
                        node_inputs.append(ids[x][0])
                        arg_names.append(arg.name)
                if any(x is None for x in value):  # Tensor?[] (aten.index.Tensor): which positions hold a tensor
                    attributes[arg.name] = {"type": "bools", "value": [x is not None for x in value]}
            elif value is not None:
                attributes[arg.name] = _attribute(value, f"{where} argument '{arg.name}'")
        if node_inputs:
            attributes["arg_names"] = {"type": "strings", "value": arg_names}
        overload = n.target._schema.overload_name
        if overload:
            attributes["overload"] = {"type": "string", "value": overload}
        val = n.meta.get("val")
        vals = list(val) if isinstance(val, (tuple, list)) else [val]
        out_ids = []
        for i, v in enumerate(vals):
            value_name = n.name if len(vals) == 1 else picked.get((n, i), f"{n.name}.{i}")
            out_ids.append(new_value(value_name, v, where))
        ids[n] = out_ids
        nodes.append({"id": len(nodes), "name": n.name, "op": str(n.target), "inputs": node_inputs,
                      "outputs": out_ids, "attributes": attributes})

    def spec_json(spec):
        return None if spec is None else json.loads(pytree.treespec_dumps(spec))

    doc = {
        "format": "tracegraph",
        "schema_version": 1,
        "metadata": {"reader": ag.reader, "torch_version": torch.__version__, **(metadata or {})},
        "weights": weights_file,
        "graph": {"name": name, "values": values, "nodes": nodes, "inputs": inputs, "outputs": outputs},
        "in_spec": spec_json(ag.in_spec),
        "out_spec": spec_json(ag.out_spec),
    }
    return doc, weights


def safetensors_bytes(tensors) -> bytes:
    """Standard safetensors, header padded to 8 bytes, tensors in the given order."""
    header, blobs, offset = {}, [], 0
    for key, t in tensors:
        t = t.detach().to("cpu").resolve_conj().contiguous()
        if t.dtype not in _DTYPES:
            raise ExportError(f"weight {key}: dtype {t.dtype} is not one the format holds")
        raw = t.view(torch.int16) if t.dtype == torch.bfloat16 else t  # numpy has no bfloat16
        data = raw.numpy().tobytes()
        header[key] = {"dtype": _DTYPES[t.dtype][1], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)

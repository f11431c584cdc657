#!/usr/bin/python3
"""Makes the TorchScript test models with real PyTorch (the torch the native
build links, from bootstrap's venv) and, beside each, what the C++ tests assert
about it:

  NAME.ts                the TorchScript module (torch.jit.trace or torch.jit.script)
  NAME.io.safetensors    a seeded input ("input.0", ...) and the module's own
                         outputs for it ("output.0", ...), flattened like pytrees
  NAME.expected.json     facts: input shapes, the output activation per output
                         (known by construction), the output tree spec in the
                         format of PyTorch's treespec_dumps, and per-op counts of
                         the frozen, inlined TorchScript graph

Usage: make_test_models.py OUT_DIR [--only NAME,...] [--old]. Deterministic:
seeded weights and inputs. Skips models whose files are newer than this script.
With --old (run by Debian's torch 1.13, /usr/bin/python3), it makes the models
of OLD_FORMAT as NAME_torch113: real files of the older TorchScript format,
from the same seeded weights, that the reader must read and run the same.
"""
import json
import os
import struct
import sys
import warnings
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
# torch 2.x says at each call that TorchScript is deprecated: these are TorchScript tests.
warnings.filterwarnings("ignore", category=FutureWarning, module="torch")

# ---------------------------------------------------------------- models --


def crop3d(x, target_shape: list[int]):
    """Center-crops the spatial dims of x to target_shape (valid-convolution skips)."""
    d0 = (x.shape[2] - target_shape[2]) // 2
    d1 = (x.shape[3] - target_shape[3]) // 2
    d2 = (x.shape[4] - target_shape[4]) // 2
    return x[:, :, d0:d0 + target_shape[2], d1:d1 + target_shape[3], d2:d2 + target_shape[4]]


def crop2d(x, target_shape: list[int]):
    d0 = (x.shape[2] - target_shape[2]) // 2
    d1 = (x.shape[3] - target_shape[3]) // 2
    return x[:, :, d0:d0 + target_shape[2], d1:d1 + target_shape[3]]


class ConvPass3d(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.net = nn.Sequential(nn.Conv3d(cin, cout, 3), nn.ReLU(inplace=True),
                                 nn.Conv3d(cout, cout, 3), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.net(x)


class UNet3d(nn.Module):
    """A cellmap-style 3D UNet: valid 3x3x3 convolutions, ReLU(inplace=True),
    max-pool, transposed-conv upsampling, crop + cat skips, a 1x1x1 head."""

    def __init__(self, cin=1, base=4, cout=1):
        super().__init__()
        self.down0 = ConvPass3d(cin, base)
        self.pool = nn.MaxPool3d(2)
        self.down1 = ConvPass3d(base, base * 2)
        self.up = nn.ConvTranspose3d(base * 2, base, 2, stride=2)
        self.up0 = ConvPass3d(base * 2, base)
        self.head = nn.Conv3d(base, cout, 1)

    def forward(self, x):
        f0 = self.down0(x)
        f1 = self.down1(self.pool(f0))
        u = self.up(f1)
        skip = crop3d(f0, u.shape)
        return self.head(self.up0(torch.cat([skip, u], 1)))


class UNet2d(nn.Module):
    def __init__(self, cin=3, base=8, cout=2):
        super().__init__()
        def conv_pass(a, b):
            return nn.Sequential(nn.Conv2d(a, b, 3), nn.BatchNorm2d(b), nn.ReLU(inplace=True),
                                 nn.Conv2d(b, b, 3), nn.ReLU(inplace=True))
        self.down0 = conv_pass(cin, base)
        self.pool = nn.MaxPool2d(2)
        self.down1 = conv_pass(base, base * 2)
        self.up = nn.Upsample(scale_factor=2.0, mode="nearest")
        self.reduce = nn.Conv2d(base * 2, base, 1)
        self.up0 = conv_pass(base * 2, base)
        self.head = nn.Conv2d(base, cout, 1)

    def forward(self, x):
        f0 = self.down0(x)
        f1 = self.down1(self.pool(f0))
        u = self.reduce(self.up(f1))
        skip = crop2d(f0, u.shape)
        return self.head(self.up0(torch.cat([skip, u], 1)))


class ListSkipsUNet2d(nn.Module):
    """A scripted 2D UNet as bio-image libraries write it: the encoders, a
    ModuleList looped over, append their outputs to a list of skips; the
    decoders read them back from its end. Scripting unrolls the loops over
    the ModuleLists and leaves the list's appends in the graph."""

    def __init__(self, depth=3, c=4):
        super().__init__()
        self.encoders = nn.ModuleList(
            [nn.Sequential(nn.Conv2d(1 if i == 0 else c, c, 3, padding=1), nn.ReLU()) for i in range(depth)])
        self.pool = nn.MaxPool2d(2)
        self.ups = nn.ModuleList([nn.ConvTranspose2d(c, c, 2, stride=2) for _ in range(depth - 1)])
        self.decoders = nn.ModuleList(
            [nn.Sequential(nn.Conv2d(2 * c, c, 3, padding=1), nn.ReLU()) for _ in range(depth - 1)])
        self.head = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        skips: List[torch.Tensor] = []
        for i, encoder in enumerate(self.encoders):
            x = encoder(x)
            if i < len(self.encoders) - 1:
                skips.append(x)
                x = self.pool(x)
        for i, (up, decoder) in enumerate(zip(self.ups, self.decoders)):
            x = decoder(torch.cat([up(x), skips[-i - 1]], 1))
        return self.head(x)


def unet3d_sigmoid():
    """The cellmap-style sample: a 3D UNet wrapped as Sequential(unet, Sigmoid())."""
    return nn.Sequential(UNet3d(), nn.Sigmoid())


class EndsWith(nn.Module):
    """A UNet followed by one of the ways models end."""

    def __init__(self, how, cout=1):
        super().__init__()
        self.how = how
        self.unet = UNet3d(cout=cout)

    def forward(self, x):
        x = self.unet(x)
        if self.how == "tanh":
            return torch.tanh(x)
        if self.how == "sigmoid_inplace":
            x.sigmoid_()
            return x
        if self.how == "clamp":
            return torch.clamp(x, 0, 1)
        if self.how == "hardtanh":
            return F.hardtanh(x, -0.5, 0.5)
        if self.how == "softmax":
            return torch.softmax(x, dim=1)
        return x


class EvalSigmoid(nn.Module):
    def __init__(self):
        super().__init__()
        self.unet = UNet3d()

    def forward(self, x):
        x = self.unet(x)
        if not self.training:
            x = torch.sigmoid(x)
        return x


class TwoHeads(nn.Module):
    """cat([sigmoid(a), b], 1): a mask channel and two raw affinity channels."""

    def __init__(self):
        super().__init__()
        self.unet = UNet3d(cout=4)
        self.mask = nn.Conv3d(4, 1, 1)
        self.affs = nn.Conv3d(4, 2, 1)

    def forward(self, x):
        f = self.unet(x)
        return torch.cat([torch.sigmoid(self.mask(f)), self.affs(f)], 1)


class DetectionHead(nn.Module):
    """A detector's post-processing as detection code writes it: per-anchor
    scores and box deltas from a small convolutional head, the anchors whose
    score passes a threshold kept by a boolean mask (how many, only the run
    knows), their coordinates by nonzero, and their scores over the best one,
    read with .item()."""

    def __init__(self):
        super().__init__()
        self.body, self.cls, self.box = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 2, 1), nn.Conv2d(8, 8, 1)

    def forward(self, x):
        f = torch.relu(self.body(x))
        scores = torch.sigmoid(self.cls(f)).flatten(1)
        boxes = self.box(f).permute(0, 2, 3, 1).reshape(x.shape[0], -1, 4)
        keep = scores > 0.5
        return boxes[keep], scores[keep] / scores.max().item(), torch.nonzero(keep)


class TupleOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.unet = UNet3d(cout=2)

    def forward(self, x):
        y = self.unet(x)
        return torch.sigmoid(y[:, :1]), y[:, 1:]


class DictOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.unet = UNet3d(cout=3)

    def forward(self, x):
        y = self.unet(x)
        return {"mask": torch.sigmoid(y[:, :1]), "affinities": torch.tanh(y[:, 1:])}


class BranchOnValues(nn.Module):
    """Which op runs depends on the input's values: no static graph says it."""

    def forward(self, x):
        if bool(x.sum() > 0):
            return torch.sigmoid(x)
        return x


class LoopOnValues(nn.Module):
    def forward(self, x):
        for _ in range(int(x.sum().item()) % 3):
            x = x * 2.0
        return x


class WriteThroughView(nn.Module):
    """A sigmoid written in place through a reshaped view of a tensor that is
    then returned whole: the write shows through the base tensor, and no
    scatter undoes a reshape."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(1, 2, 1)

    def forward(self, x):
        h = self.conv(x)
        v = h.flatten(2)
        v[:, :, :3].sigmoid_()
        return h


# ------------------------------------------------------------- expectations --

LEAF = {"type": None, "context": None, "children_spec": []}


def spec_of(value):
    """The tree spec of a nested output, as PyTorch 2.x's treespec_dumps writes it
    (torch 1.13 has no treespec_dumps)."""
    if isinstance(value, torch.Tensor):
        return LEAF
    if isinstance(value, tuple):
        return {"type": "builtins.tuple", "context": "null", "children_spec": [spec_of(v) for v in value]}
    if isinstance(value, list):
        return {"type": "builtins.list", "context": "null", "children_spec": [spec_of(v) for v in value]}
    if isinstance(value, dict):
        return {"type": "builtins.dict", "context": json.dumps(list(value.keys())),
                "children_spec": [spec_of(v) for v in value.values()]}
    raise TypeError(type(value))


def leaves(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in leaves(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in leaves(v)]
    raise TypeError(type(value))


def op_counts(module):
    """Per-op counts of the frozen, inlined forward graph: what the C++ reader
    must find too. In-place ops count under their functional name."""
    frozen = torch._C._freeze_module(module._c)
    graph = frozen._get_method("forward").graph
    torch._C._jit_pass_inline(graph)
    torch._C._jit_pass_lower_all_tuples(graph)
    # Argument checks (an If whose other branch raises) compute nothing the
    # model returns; the reader drops them, so drop them here too.
    for node in list(graph.nodes()):
        if node.kind() == "prim::If" and node.outputsSize() == 0 and any(
                n.kind() == "prim::RaiseException" for b in node.blocks() for n in b.nodes()):
            node.destroy()
    torch._C._jit_pass_constant_propagation(graph)
    torch._C._jit_pass_dce(graph)
    # A list filled by appends is the list of its elements, and a read of it
    # by a constant index the element (the reader runs LibTorch's same passes).
    if any(n.kind() == "aten::append" for n in graph.nodes()):
        torch._C._jit_pass_remove_mutation(graph)
        torch._C._jit_pass_peephole_list_idioms(graph, True)
        torch._C._jit_pass_constant_propagation(graph)
        torch._C._jit_pass_dce(graph)
    counts = {}
    constant_elements = 0
    for node in graph.nodes():
        if node.kind() == "prim::Constant" and node.output().type().kind() == "TensorType":
            t = node.output().toIValue()
            if t.is_floating_point():
                constant_elements += t.numel()
    for node in graph.nodes():
        kind = node.kind()
        if not kind.startswith("aten::"):
            continue
        if kind.endswith("_") and not kind.endswith("__"):
            kind = kind[:-1]
        counts[kind] = counts.get(kind, 0) + 1
    return counts, constant_elements


SAFETENSORS_DTYPES = {torch.int64: "I64", torch.int32: "I32", torch.bool: "BOOL", torch.uint8: "U8", torch.complex64: "C64"}


def write_safetensors(path, tensors, keep_integers=False):
    """Tensors as float32, or with keep_integers the integer, bool and complex ones as their own dtype."""
    header, offset, blobs = {}, 0, []
    for name, t in tensors:
        t = t.detach().resolve_conj().contiguous()
        dtype = SAFETENSORS_DTYPES.get(t.dtype) if keep_integers else None
        if dtype is None:
            t, dtype = t.to(torch.float32), "F32"
        data = t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


# Each: name -> (constructor, input shapes, "trace"|"script", expected activation per output).
SIGMOID = {"kind": "sigmoid"}
NONE = {"kind": "none"}
UNET_IN = [(1, 1, 44, 44, 44)]


def torchvision_model(name):
    import torchvision
    return getattr(torchvision.models, name)(weights=None)


MODELS = {
    "unet3d_sigmoid_traced": (unet3d_sigmoid, UNET_IN, "trace", [SIGMOID]),
    "unet3d_sigmoid_scripted": (unet3d_sigmoid, UNET_IN, "script", [SIGMOID]),
    "unet3d_none": (lambda: EndsWith("none"), UNET_IN, "trace", [NONE]),
    "unet3d_tanh": (lambda: EndsWith("tanh"), UNET_IN, "trace", [{"kind": "tanh"}]),
    "unet3d_sigmoid_inplace": (lambda: EndsWith("sigmoid_inplace"), UNET_IN, "trace", [SIGMOID]),
    "unet3d_sigmoid_inplace_scripted": (lambda: EndsWith("sigmoid_inplace"), UNET_IN, "script", [SIGMOID]),
    "unet3d_clamp": (lambda: EndsWith("clamp"), UNET_IN, "trace", [{"kind": "clip", "min": 0.0, "max": 1.0}]),
    "unet3d_hardtanh": (lambda: EndsWith("hardtanh"), UNET_IN, "trace", [{"kind": "clip", "min": -0.5, "max": 0.5}]),
    "unet3d_softmax": (lambda: EndsWith("softmax", cout=3), UNET_IN, "trace", [{"kind": "softmax", "dim": 1}]),
    "unet3d_eval_sigmoid": (EvalSigmoid, UNET_IN, "script", [SIGMOID]),
    "unet3d_two_heads": (TwoHeads, UNET_IN, "trace",
                         [{"kind": "per_channel", "channels": [{"begin": 0, "end": 1, "kind": "sigmoid"},
                                                               {"begin": 1, "end": 3, "kind": "none"}]}]),
    "unet3d_tuple_out": (TupleOut, UNET_IN, "trace", [SIGMOID, NONE]),
    "unet3d_dict_out": (DictOut, UNET_IN, "script", [SIGMOID, {"kind": "tanh"}]),
    "unet2d": (UNet2d, [(1, 3, 64, 64)], "trace", [NONE]),
    "unet2d_list_skips_scripted": (ListSkipsUNet2d, [(1, 1, 32, 32)], "script", [NONE]),
    "mobilenet_v2_traced": (lambda: torchvision_model("mobilenet_v2"), [(1, 3, 224, 224)], "trace", [NONE]),
    "mobilenet_v2_scripted": (lambda: torchvision_model("mobilenet_v2"), [(1, 3, 224, 224)], "script", [NONE]),
    "resnet18_traced": (lambda: torchvision_model("resnet18"), [(1, 3, 224, 224)], "trace", [NONE]),
    "resnet18_scripted": (lambda: torchvision_model("resnet18"), [(1, 3, 224, 224)], "script", [NONE]),
    "detection_head_scripted": (DetectionHead, [(2, 3, 6, 5)], "script", [NONE, {"kind": "unknown"}, {"kind": "unknown"}]),
}


# Made again by torch 1.13 (--old) as NAME_torch113.
OLD_FORMAT = ["unet3d_sigmoid_traced", "unet3d_sigmoid_scripted", "unet3d_dict_out", "unet2d",
              "resnet18_traced", "mobilenet_v2_scripted", "unet2d_list_skips_scripted"]
OLD_SUFFIX = "_torch113"


# Models the reader must refuse: name -> (constructor, shapes, how, error code, message piece).
ERROR_MODELS = {
    "branch_on_values": (BranchOnValues, [(1, 1, 4, 4, 4)], "script", "unsupported", "prim::If"),
    "loop_on_values": (LoopOnValues, [(1, 1, 4, 4, 4)], "script", "unsupported", "prim::Loop"),
    "write_through_view": (WriteThroughView, [(1, 1, 4, 4, 4)], "script", "unsupported", "cannot be made functional"),
}


def make(name, out_dir):
    """Makes the model `name` (NAME_torch113 is NAME made by this torch, 1.13)."""
    if name in ERROR_MODELS:
        ctor, shapes, how, code, message = ERROR_MODELS[name]
        torch.manual_seed(1234)
        model = torch.jit.script(ctor().eval())
        model.save(os.path.join(out_dir, name + ".ts"))
        with open(os.path.join(out_dir, name + ".expected.json"), "w") as f:
            json.dump({"name": name, "input_shapes": [list(x) for x in shapes],
                       "error": {"code": code, "message": message}}, f, indent=1, sort_keys=True)
        return
    ctor, shapes, how, activation = MODELS[name.removesuffix(OLD_SUFFIX)]
    torch.manual_seed(1234)
    model = ctor().eval()
    # Give batch norms non-trivial statistics so that folding them is visible.
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm3d)):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    inputs = tuple(torch.randn(s) for s in shapes)
    with torch.no_grad():
        scripted = torch.jit.trace(model, inputs) if how == "trace" else torch.jit.script(model)
        scripted = scripted.eval()
        outputs = scripted(*inputs)
    path = os.path.join(out_dir, name + ".ts")
    scripted.save(path)
    flat = leaves(outputs)
    write_safetensors(os.path.join(out_dir, name + ".io.safetensors"),
                      [(f"input.{i}", t) for i, t in enumerate(inputs)] + [(f"output.{i}", t) for i, t in enumerate(flat)])
    out_spec = [1, spec_of(outputs if isinstance(outputs, (tuple, list, dict)) else outputs)]
    counts, constant_elements = op_counts(torch.jit.load(path).eval())
    facts = {
        "name": name,
        "how": how,
        "input_shapes": [list(s) for s in shapes],
        "output_shapes": [list(t.shape) for t in flat],
        "activation": activation,
        "out_spec": json.dumps(out_spec),
        "op_counts": counts,
        "constant_elements": constant_elements,
        "parameters": sum(p.numel() for p in model.parameters()),
        "torch_version": torch.__version__.split("+")[0],
    }
    with open(os.path.join(out_dir, name + ".expected.json"), "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)


def make_bad_files(out_dir):
    """Files that are not TorchScript models, for the reader's errors."""
    import zipfile
    with open(os.path.join(out_dir, "bad_not_a_zip.ts"), "w") as f:
        f.write("this is not a TorchScript archive\n")
    with zipfile.ZipFile(os.path.join(out_dir, "bad_not_torchscript.ts"), "w") as z:
        z.writestr("archive/hello.txt", "a zip, but no TorchScript inside")
    with open(os.path.join(out_dir, "unet3d_none.ts"), "rb") as f:
        data = f.read()
    with open(os.path.join(out_dir, "bad_truncated.ts"), "wb") as f:
        f.write(data[: len(data) * 2 // 3])


def main():
    out_dir = sys.argv[1]
    only = None
    if "--only" in sys.argv:
        only = set(sys.argv[sys.argv.index("--only") + 1].split(","))
    old = "--old" in sys.argv
    if old and not torch.__version__.startswith("1."):
        sys.exit(f"--old makes torch 1.x files, but this is torch {torch.__version__}")
    os.makedirs(out_dir, exist_ok=True)
    stamp = os.path.getmtime(__file__)
    old_names = [n + OLD_SUFFIX for n in OLD_FORMAT]
    names = old_names if old else list(MODELS) + list(ERROR_MODELS)
    for name in names:
        if only and name not in only:
            continue
        done = os.path.join(out_dir, name + ".expected.json")
        if os.path.exists(done) and os.path.getmtime(done) > stamp:
            continue
        make(name, out_dir)
        print(f"[models] {name}")
    if old:
        return
    if not only:
        make_bad_files(out_dir)
    with open(os.path.join(out_dir, "index.json"), "w") as f:
        json.dump(sorted(list(MODELS) + list(ERROR_MODELS) + old_names), f, indent=1)


if __name__ == "__main__":
    main()

"""Makes torch.export archives (.pt2) with real torch, for the .pt2 reader's
tests (tests/native/pt2_test.cpp):

  OUT/NAME.pt2              torch.export.save of torch.export.export(model, inputs):
                            the IR export gives by default (aten.conv2d, aten.linear, ...)
  OUT/NAME.core.pt2         the same program after run_decompositions() (core ATen)
  OUT/NAME.io.safetensors   the inputs ("input.N") and the program's own outputs ("output.N")
  OUT/NAME.expected.json    input shapes, the expected activation of each output, and
                            the dims exported as symbols (torch.export.Dim)
  OUT/index.json            {"models": [...], "refused": {NAME: torch.export's reason}}

The models: the small zoo (make_zoo_models.build, the same seeded weights and
inputs; a "_scripted" model whose Python module is a traced one's is left
out), and cases of our own for what the zoo does not reach: a symbolic batch,
sizes computed in the graph, numbers as operands, an index with None, list
outputs, the mean of two linear heads, a text classifier taking int64 token
ids and an attention mask, height and width exported as multiples of a Dim. And for the zip reader:
OUT/dynamic_batch.deflated.pt2, the same entries re-zipped deflated by
Python's zipfile; and archives broken on purpose (write_broken()).
OUT/dynamic_batch.deflated.pt2 and OUT/nested_blocks.deflated.pt2 are the
seeds in tests/data/valid (copied there by hand; the second as
nested_blocks.pt2: `make_pt2_models.py OUT --only dynamic_batch,nested_blocks`).

Usage: make_pt2_models.py OUT_DIR [--only NAME,...]. Run by the torch of
bootstrap's venv. Skips models whose files are newer than this script and
the zoo's.
"""
import json
import os
import sys
import warnings
import zipfile

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_zoo_models as zoo  # noqa: E402
from make_test_models import DetectionHead, leaves, write_safetensors  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore")


class DynamicBatch(nn.Module):
    """conv, batch norm, relu, numbers as operands, a spatial mean, a linear head, sigmoid."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.fc = nn.Conv2d(3, 5, 3, padding=1), nn.BatchNorm2d(5), nn.Linear(5, 2)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x))) * 2.0 + 1
        return torch.sigmoid(self.fc(y.mean((2, 3))))


class FlattenBySize(nn.Module):
    """x.view(x.size(0), -1) and a reshape by computed sizes: aten.sym_size.int feeding views."""

    def __init__(self):
        super().__init__()
        self.conv, self.fc = nn.Conv2d(2, 4, 3, stride=2), nn.Linear(4 * 3 * 3, 3)

    def forward(self, x):
        y = self.conv(x)
        b = y.size(0)
        y = y.reshape(b, 4, 9).reshape(b * 4, 9).reshape(b, -1)
        return torch.tanh(self.fc(y))


class Attention(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.qkv = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.qkv(x))


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.attn, self.mlp = Attention(width), nn.Sequential(nn.Linear(width, width), nn.GELU())

    def forward(self, x):
        return x + self.mlp(self.attn(x))


class Encoder(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class NestedBlocks(nn.Module):
    """Modules in modules, for the readers' module paths (nn_module_stack): an
    encoder of three identical blocks, each an attention and an MLP, and a head.
    tests/data/valid/nested_blocks.pt2 is its .pt2."""

    def __init__(self):
        super().__init__()
        self.encoder, self.head = Encoder(4, 3), nn.Linear(4, 2)

    def forward(self, x):
        return torch.sigmoid(self.head(self.encoder(x)))


class MeanOfHeads(nn.Module):
    """Two linear heads averaged: (a + b) / 2 applies no activation."""

    def __init__(self):
        super().__init__()
        self.body, self.a, self.b = nn.Linear(6, 8), nn.Linear(8, 3), nn.Linear(8, 3)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return (self.a(h) + self.b(h)) / 2


class IndexWithNone(nn.Module):
    """x[:, idx] with a tensor idx: aten.index.Tensor(x, [None, idx])."""

    def __init__(self):
        super().__init__()
        self.register_buffer("idx", torch.tensor([3, 0, 2]))
        self.conv = nn.Conv2d(1, 5, 1)

    def forward(self, x):
        return self.conv(x)[:, self.idx] * 0.5


class ListOutputs(nn.Module):
    """split, unbind and stack, and a dict of outputs."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)

    def forward(self, x):
        a, b, c = torch.split(self.conv(x), [1, 2, 3], dim=1)
        rows = torch.unbind(b, dim=2)
        return {"mask": torch.sigmoid(a), "rows": torch.stack(rows[:2], dim=1), "rest": c.clamp(0, 1)}


class TokenClassifier(nn.Module):
    """A text classifier as the transformer libraries write one: int64 token
    ids and an int64 attention mask (1: a token, 0: padding) in, token and
    position embeddings, one pre-norm attention block whose keys are masked
    through scaled_dot_product_attention's bool mask, a GELU MLP, the mean of
    the unmasked tokens, logits out."""

    def __init__(self, vocab=50, width=16, heads=4):
        super().__init__()
        self.heads = heads
        self.tok, self.pos = nn.Embedding(vocab, width, padding_idx=0), nn.Embedding(32, width)
        self.norm1, self.qkv, self.proj = nn.LayerNorm(width), nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.norm2, self.mlp = nn.LayerNorm(width), nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        self.head = nn.Linear(width, 3)

    @staticmethod
    def example_inputs():
        ids = torch.randint(1, 50, (2, 12))
        mask = torch.ones(2, 12, dtype=torch.int64)
        mask[1, 7:] = 0  # the second sentence is shorter: padded
        return ids * mask, mask

    def forward(self, ids, attention_mask):
        b, t = ids.shape
        keep = attention_mask.bool()
        h = self.tok(ids) + self.pos(torch.arange(t))
        q, k, v = self.qkv(self.norm1(h)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4).unbind(0)
        a = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, None, :])
        h = h + self.proj(a.transpose(1, 2).reshape(b, t, -1))
        h = h + self.mlp(self.norm2(h))
        w = attention_mask.unsqueeze(-1).to(h.dtype)
        return self.head((h * w).sum(1) / w.sum(1).clamp_min(1))


class SpatialMultipleOf8(nn.Module):
    """Three 2x poolings and an 8x upsampling: height and width are exported as 8 times a Dim, then sigmoid."""

    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(),
                                  nn.MaxPool2d(2), nn.MaxPool2d(2))
        self.up = nn.Upsample(scale_factor=8, mode="nearest")
        self.head = nn.Conv2d(4, 1, 1)

    def forward(self, x):
        return torch.sigmoid(self.head(self.up(self.down(x))))


def _batch():
    return torch.export.Dim("batch", min=1, max=64)


def _eights():
    return ({2: 8 * torch.export.Dim("h8", min=1, max=32), 3: 8 * torch.export.Dim("w8", min=1, max=32)},)


# name -> (constructor, input shapes, expected activations, dynamic_shapes or None)
CASES = {
    "dynamic_batch": (DynamicBatch, [(2, 3, 8, 8)], [{"kind": "sigmoid"}], lambda: ({0: _batch()},)),
    "flatten_by_size": (FlattenBySize, [(2, 2, 7, 7)], [{"kind": "tanh"}], lambda: ({0: _batch()},)),
    "spatial_multiple_of_8": (SpatialMultipleOf8, [(1, 1, 16, 24)], [{"kind": "sigmoid"}], _eights),
    "mean_of_heads": (MeanOfHeads, [(4, 6)], [{"kind": "none"}], None),
    "index_with_none": (IndexWithNone, [(1, 1, 4, 5)], [{"kind": "none"}], None),
    "list_outputs": (ListOutputs, [(1, 3, 5, 4)], [{"kind": "sigmoid"}, {"kind": "none"}, {"kind": "clip"}], None),
    "token_classifier": (TokenClassifier, [(2, 12), (2, 12)], [{"kind": "none"}], None),
    "nested_blocks": (NestedBlocks, [(2, 4)], [{"kind": "sigmoid"}], None),
    "detection_head": (DetectionHead, [(2, 3, 6, 5)], [{"kind": "none"}, {"kind": "unknown"}, {"kind": "unknown"}], None),
}


def models():
    out = dict(CASES)
    for name, (_, shapes, _how, activation, which) in zoo.ZOO.items():
        if which != "small":
            continue
        twin = name.removesuffix("_scripted")
        if name.endswith("_scripted") and (twin in zoo.ZOO or twin + "_traced" in zoo.ZOO):
            continue  # the same Python module as its traced twin
        out[name] = (None, shapes, activation, None)
    return out


def build(name, entry):
    ctor, shapes, _, _ = entry
    if ctor is None:
        return zoo.build(name)
    torch.manual_seed(1234)
    model = ctor().eval()
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    if hasattr(ctor, "example_inputs"):  # integer inputs (token ids, masks)
        return model, ctor.example_inputs()
    return model, tuple(torch.randn(s) for s in shapes)


def make(name, entry, out_dir):
    model, inputs = build(name, entry)
    dynamic = entry[3]() if entry[3] else None
    with torch.no_grad():
        program = torch.export.export(model, inputs, dynamic_shapes=dynamic, strict=False)
        outputs = program.module()(*inputs)
        reference = model(*inputs)
    for a, b in zip(leaves(outputs), leaves(reference)):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-5), name
    torch.export.save(program, os.path.join(out_dir, name + ".pt2"))
    torch.export.save(program.run_decompositions(), os.path.join(out_dir, name + ".core.pt2"))
    flat = leaves(outputs)
    write_safetensors(os.path.join(out_dir, name + ".io.safetensors"),
                      [(f"input.{i}", t) for i, t in enumerate(inputs)] + [(f"output.{i}", t) for i, t in enumerate(flat)], keep_integers=True)
    facts = {"name": name, "input_shapes": [list(t.shape) for t in inputs], "output_shapes": [list(t.shape) for t in flat],
             "activation": entry[2], "symbolic_inputs": [sorted(d) for d in dynamic] if dynamic else []}
    with open(os.path.join(out_dir, name + ".expected.json"), "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)


def rezip_deflated(src, dst):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))


def _entries(src):
    """The entries of a torch archive under the root folder "bad/"."""
    with zipfile.ZipFile(src) as z:
        return [("bad/" + i.filename.split("/", 1)[1], z.read(i.filename)) for i in z.infolist()]


def _write(dst, entries):
    with zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_STORED) as z:
        for name, data in entries:
            z.writestr(name, data)


def _edit_json(entries, suffix, edit):
    out = []
    for name, data in entries:
        if name.endswith(suffix):
            doc = json.loads(data)
            edit(doc)
            data = json.dumps(doc).encode()
        out.append((name, data))
    return out


def write_broken(out_dir):
    """Archives broken on purpose, for the reader's typed errors."""
    src = os.path.join(out_dir, "dynamic_batch.core.pt2")
    entries = _entries(src)

    def bad_major(doc):
        doc["schema_version"] = {"major": 99, "minor": 0}

    def missing_weight(doc):
        next(iter(doc["config"].values()))["path_name"] = "nowhere"

    def past_storage(doc):
        meta = next(m for m in doc["config"].values() if m["path_name"] == "weight_0")["tensor_meta"]
        meta["sizes"][0] = {"as_int": 50}

    def higher_order(doc):
        doc["graph_module"]["graph"]["nodes"][0]["target"] = "torch.ops.higher_order.cond"

    _write(os.path.join(out_dir, "bad_major.pt2"), _edit_json(entries, "models/model.json", bad_major))
    _write(os.path.join(out_dir, "missing_weight.pt2"), _edit_json(entries, "model_weights_config.json", missing_weight))
    _write(os.path.join(out_dir, "weight_past_storage.pt2"), _edit_json(entries, "model_weights_config.json", past_storage))
    _write(os.path.join(out_dir, "higher_order.pt2"), _edit_json(entries, "models/model.json", higher_order))
    _write(os.path.join(out_dir, "flat_layout.pt2"), [("bad/serialized_exported_program.json", b"{}")])
    with open(src, "rb") as f:
        data = f.read()
    with open(os.path.join(out_dir, "truncated.pt2"), "wb") as f:
        f.write(data[: len(data) // 2])


def main():
    out_dir = sys.argv[1]
    only = set(sys.argv[sys.argv.index("--only") + 1].split(",")) if "--only" in sys.argv else None
    os.makedirs(out_dir, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    stamp = max(os.path.getmtime(os.path.join(here, f)) for f in ("make_pt2_models.py", "make_zoo_models.py", "make_test_models.py"))
    index_path = os.path.join(out_dir, "index.json")
    index = {"models": [], "refused": {}}
    if os.path.exists(index_path) and os.path.getmtime(index_path) > stamp:
        with open(index_path) as f:
            index = json.load(f)
    for name, entry in models().items():
        if only and name not in only:
            continue
        done = os.path.join(out_dir, name + ".expected.json")
        if (os.path.exists(done) and os.path.getmtime(done) > stamp) or name in index["refused"]:
            if name not in index["models"] and name not in index["refused"]:
                index["models"].append(name)
            continue
        try:
            make(name, entry, out_dir)
        except Exception as e:  # torch.export's refusals are facts about torch, kept with their reason
            index["refused"][name] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            print(f"[pt2] {name}: refused by torch.export: {index['refused'][name]}", flush=True)
            continue
        if name not in index["models"]:
            index["models"].append(name)
        print(f"[pt2] {name}", flush=True)
    rezip_deflated(os.path.join(out_dir, "dynamic_batch.pt2"), os.path.join(out_dir, "dynamic_batch.deflated.pt2"))
    if os.path.exists(os.path.join(out_dir, "nested_blocks.pt2")):
        rezip_deflated(os.path.join(out_dir, "nested_blocks.pt2"), os.path.join(out_dir, "nested_blocks.deflated.pt2"))
    write_broken(out_dir)
    with open(index_path, "w") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()

"""Makes the web page's big models, with real torch and seeded weights, for
its module-hierarchy test (tests/web/hierarchy.test.mjs):

  OUT/vit24.pt2            a tiny vision transformer of 24 blocks (attention and
                           MLP in each), torch.export'ed and decomposed to core ATen
  OUT/vit24.ts             the same model traced (TorchScript)
  OUT/wide10k.ts           10,000 nodes: 20 stages of 20 blocks of 25 ops each,
                           traced (TorchScript: the .pt2 reader takes 7 s over
                           the same 10,000 nodes in wasm, the TorchScript one 1 s)
  OUT/numerics_ref.pt2     a small CNN (torch.export, as exported; .ts: traced), and
  OUT/numerics_perturbed.pt2  the same with one weight of one convolution
                           changed, for the numerics overlay: a reference dump
                           of the first (tracegraph run --dump-nodes) against a
                           run of the second parts first at that convolution;
                           OUT/numerics.json names its parameter and module,
                           OUT/numerics.input.npy is the input
  OUT/diff_a.pt2, OUT/diff_b.pt2  two versions of a CNN (B: a ReLU dropped, one
                           swapped for a GELU, a convolution widened, two layers
                           added to the head), every op inside a leaf module;
                           OUT/diff_X.leaves.json: each leaf module torch calls,
                           with its class, output shape and parameter shapes
  OUT/NAME.modules.json    the module tree torch reports (named_modules): each
                           module's path and class, and which of them are
                           called (ModuleList and Sequential containers of
                           blocks are not called; their children are)

Usage: make_page_models.py OUT_DIR. Run by the torch of bootstrap's venv,
through fixture_cache.py (tests/web/hierarchy.test.mjs does that).
"""
import json
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn

torch.set_num_threads(1)
warnings.filterwarnings("ignore")

WIDTH, HEADS, DEPTH = 16, 2, 24


class PatchEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, WIDTH, 4, stride=4)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv, self.proj = nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, HEADS, c // HEADS).permute(2, 0, 3, 1, 4).unbind(0)
        a = (q @ k.transpose(-2, -1)) * (c // HEADS) ** -0.5
        return self.proj((a.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(WIDTH, 2 * WIDTH), nn.GELU(), nn.Linear(2 * WIDTH, WIDTH)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.attn, self.norm2, self.mlp = nn.LayerNorm(WIDTH), Attention(), nn.LayerNorm(WIDTH), Mlp()

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    """timm's VisionTransformer in miniature: patches, 24 pre-norm blocks, a norm, a head on the mean token."""

    def __init__(self):
        super().__init__()
        self.patch_embed = PatchEmbed()
        self.blocks = nn.Sequential(*[Block() for _ in range(DEPTH)])
        self.norm, self.head = nn.LayerNorm(WIDTH), nn.Linear(WIDTH, 10)

    def forward(self, x):
        return self.head(self.norm(self.blocks(self.patch_embed(x))).mean(1))


class Cell(nn.Module):
    """25 ops: a linear, then 24 elementwise ops (the last adds the cell's input back)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        for i in range(5):
            y = torch.tanh(y * 0.5 + 0.1) - 0.25 * i
        return torch.sigmoid(torch.relu(y) * 0.9) + x


class Stage(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Cell() for _ in range(20))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


class Wide(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList(Stage() for _ in range(20))

    def forward(self, x):
        for s in self.stages:
            x = s(x)
        return x


class SmallCnn(nn.Module):
    """Convolutions and ReLUs, then a pooled linear head: the numerics overlay's model."""

    def __init__(self):
        super().__init__()
        widths = [3, 8, 8, 16, 16]
        layers = []
        for i in range(4):
            layers += [nn.Conv2d(widths[i], widths[i + 1], 3, padding=1), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))

    def forward(self, x):
        return self.head(self.features(x))


class DiffNet(nn.Module):
    """A CNN in two versions whose every op is a leaf module's, so that torch's
    forward hooks see each one (the side-by-side view's expected counts)."""

    def __init__(self, version):
        super().__init__()
        b = version == "b"
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), *([] if b else [nn.ReLU()]))
        wide = 24 if b else 16
        self.blocks = nn.Sequential(
            nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.GELU() if b else nn.ReLU()),
            nn.Sequential(nn.Conv2d(16, wide, 3, padding=1), nn.ReLU()),
            nn.Sequential(nn.Conv2d(wide, 16, 3, padding=1), nn.ReLU()),
        )
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10),
                                  *([nn.ReLU(), nn.Linear(10, 10)] if b else []))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


def leaf_records(model, inputs):
    """[{path, type, output, parameters}] of each leaf module torch calls, in call order."""
    names = {m: p for p, m in model.named_modules()}
    out = []
    leaves = [m for m in model.modules() if not list(m.children())]
    hooks = [m.register_forward_hook(lambda m, i, o: out.append({
        "path": names[m], "type": type(m).__name__, "output": list(o.shape),
        "parameters": {k: list(p.shape) for k, p in m.named_parameters()}})) for m in leaves]
    with torch.no_grad():
        model(*inputs)
    for h in hooks:
        h.remove()
    return out


def module_table(model, called):
    """[{path, type, called}] in named_modules order, the root left out."""
    return [{"path": p, "type": type(m).__name__, "called": p in called} for p, m in model.named_modules() if p]


def called_modules(model, inputs):
    """The paths of the modules whose forward runs, by forward hooks."""
    names = {m: p for p, m in model.named_modules()}
    seen = set()
    hooks = [m.register_forward_hook(lambda m, i, o: seen.add(names[m])) for m in model.modules()]
    with torch.no_grad():
        model(*inputs)
    for h in hooks:
        h.remove()
    return seen


def write(out, name, model, inputs, forms):
    with open(os.path.join(out, name + ".modules.json"), "w") as f:
        json.dump({"modules": module_table(model, called_modules(model, inputs))}, f, indent=1)
    with torch.no_grad():
        if "pt2" in forms:
            program = torch.export.export(model, inputs, strict=False)
            if forms["pt2"] == "core":
                program = program.run_decompositions()
            torch.export.save(program, os.path.join(out, name + ".pt2"))
        if "ts" in forms:
            torch.jit.trace(model, inputs).save(os.path.join(out, name + ".ts"))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(53)
    write(out, "vit24", TinyViT().eval(), (torch.randn(1, 3, 16, 16),), {"pt2": "core", "ts": True})
    write(out, "wide10k", Wide().eval(), (torch.randn(1, 8),), {"ts": True})

    x = torch.randn(1, 3, 32, 32)
    cnn = SmallCnn().eval()
    write(out, "numerics_ref", cnn, (x,), {"pt2": "as exported", "ts": True})
    perturbed = "features.4.weight"  # the third convolution's
    with torch.no_grad():
        cnn.get_parameter(perturbed)[0, 0, 1, 1] += 0.5
    write(out, "numerics_perturbed", cnn, (x,), {"pt2": "as exported", "ts": True})
    with open(os.path.join(out, "numerics.json"), "w") as f:
        json.dump({"parameter": perturbed, "module": perturbed.rsplit(".", 1)[0]}, f)
    np.save(os.path.join(out, "numerics.input.npy"), x.numpy())

    for version in "ab":
        net = DiffNet(version).eval()
        write(out, "diff_" + version, net, (torch.randn(1, 3, 16, 16),), {"pt2": "as exported"})
        with open(os.path.join(out, "diff_%s.leaves.json" % version), "w") as f:
            json.dump({"leaves": leaf_records(net, (torch.randn(1, 3, 16, 16),))}, f, indent=1)


if __name__ == "__main__":
    main()

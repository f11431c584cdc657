"""module_graph(model) and output_activation on the seed's three kinds of
model (TorchScript modules, torch.export programs, any other module), against
what the CLI (LibTorch's reader) says of the same model's file."""
from __future__ import annotations

import functools
import json
import subprocess
import sys

import pytest

import tracegraph
from conftest import CLI, EXPORTED, HAS_TORCH, MODELS, ROOT, expected, needs_torch, torchscript_models

pytestmark = needs_torch

sys.path.insert(0, str(ROOT / "tests" / "models"))


def essence(activation: dict) -> dict:
    """What an activation says, without the names of the node and op (each reader names them its own way)."""
    return {k: activation[k] for k in ("kind", "dim", "min", "max", "channels", "after") if k in activation}


@functools.lru_cache(maxsize=None)
def cli_activation(path: str, shapes: tuple) -> list[dict]:
    """The CLI's activation of each output (tracegraph inspect --json: LibTorch's reader for TorchScript)."""
    args = [str(CLI), "inspect", path, "--json"]
    for s in shapes:
        args += ["--input-shape", ",".join(map(str, s))]
    doc = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return [essence(a) for a in doc["activation"]]


def ours(activation) -> dict:
    return essence(json.loads(activation.json())[0])


def as_a_view_says(activation: dict) -> dict:
    """What the (nodes, output) view can say of an activation: the seed's view
    has ops and value names (and a clip's bounds), no shapes and no other
    arguments, so a softmax's dim is not in it, and heads concatenated along
    the channels, whose ranges need shapes, read as unknown."""
    if activation["kind"] == "per_channel":
        return {"kind": "unknown"}
    return {k: v for k, v in activation.items() if k != "dim"}


@pytest.mark.parametrize("name", torchscript_models())
def test_torchscript_module(name):
    import torch
    facts = expected(MODELS / f"{name}.expected.json")
    view = tracegraph.module_graph(torch.jit.load(str(MODELS / f"{name}.ts")))
    shapes = tuple(tuple(s) for s in facts["input_shapes"])
    cli = cli_activation(str(MODELS / f"{name}.ts"), shapes)
    if view is None:
        pytest.fail(f"{name}: module_graph read nothing")
    nodes, output = view
    assert output is not None and any(output in n["outputs"] for n in nodes)
    assert ours(tracegraph.output_activation(view)) == as_a_view_says(cli[0])


def _exported_programs():
    out = []
    for facts_path in sorted(EXPORTED.glob("*/*.expected.json")):
        facts = expected(facts_path)
        if str(facts.get("file", "")).endswith(".pt2"):
            out.append(facts_path.parent / facts["file"])
    return out


@pytest.mark.parametrize("path", _exported_programs(), ids=lambda p: p.stem)
def test_exported_program(path):
    import torch
    view = tracegraph.module_graph(torch.export.load(str(path)))
    assert view is not None
    assert ours(tracegraph.output_activation(view)) == as_a_view_says(cli_activation(str(path), ())[0])
    # A program's module() is a module with an fx graph of its own: the same answer.
    module_view = tracegraph.module_graph(torch.export.load(str(path)).module())
    assert module_view is not None
    assert tracegraph.output_activation(module_view).kind == tracegraph.output_activation(view).kind


def _plain_modules():
    import make_test_models as tm
    return sorted(n for n in tm.MODELS if not n.endswith("_scripted"))


@pytest.mark.parametrize("name", _plain_modules() if HAS_TORCH else [])
def test_any_other_module(name):
    import torch  # noqa: F401
    import make_test_models as tm
    ctor, shapes, how, activation = tm.MODELS[name]
    model = ctor().eval()
    view = tracegraph.module_graph(model)
    facts = expected(MODELS / f"{name}.expected.json")
    want = cli_activation(str(MODELS / f"{name}.ts"), tuple(tuple(s) for s in facts["input_shapes"]))[0]
    assert view is not None, f"{name}: the symbolic trace read nothing"
    assert ours(tracegraph.output_activation(view)) == as_a_view_says(want)


def test_a_scripted_unet_inside_a_sequential_with_its_sigmoid():
    import torch
    import make_test_models as tm
    model = torch.nn.Sequential(torch.jit.script(tm.UNet3d()), torch.nn.Sigmoid()).eval()
    nodes, output = tracegraph.module_graph(model)
    assert nodes[-1]["op"] == "aten::sigmoid" and nodes[-1]["outputs"] == [output]
    assert any(n["op"] == "aten::conv3d" for n in nodes)  # the scripted UNet, inlined
    assert tracegraph.output_activation(nodes, output).kind == "sigmoid"


def test_in_place_ops_are_read_as_their_output():
    import torch

    class InPlace(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(1, 1, 3)

        def forward(self, x):
            x = self.conv(x)
            x.sigmoid_()
            return x

    nodes, output = tracegraph.module_graph(InPlace())
    assert nodes[-1]["op"] == "aten::sigmoid_" and output == nodes[-1]["outputs"][0]
    assert tracegraph.output_activation((nodes, output)).kind == "sigmoid"
    clip = torch.nn.Sequential(torch.nn.Conv2d(1, 1, 3), torch.nn.ReLU6())
    nodes, output = tracegraph.module_graph(clip)
    assert nodes[-1]["min"] == 0.0 and nodes[-1]["max"] == 6.0
    assert str(tracegraph.output_activation(nodes, output)) == "clip(min=0, max=6)"


def test_a_forward_that_branches_on_values_has_no_graph():
    import torch

    class Branches(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x.sigmoid()
            return x

    assert tracegraph.module_graph(Branches()) is None


def test_a_traced_graph_and_a_path():
    g = tracegraph.load(MODELS / "unet3d_sigmoid_traced.ts")
    nodes, output = tracegraph.module_graph(g)
    assert nodes and output == g.output_names[0]
    assert tracegraph.module_graph(str(MODELS / "unet3d_sigmoid_traced.ts")) == (nodes, output)
    assert str(tracegraph.output_activation(nodes, output)) == str(tracegraph.output_activation(g)[0]) == "sigmoid"
    assert tracegraph.module_graph("/no/such/file.pt2") is None

"""Errors through the Python package: the malformed corpus refused with the
code and message the C++ and JavaScript loaders give (tests/js/errors.test.mjs
reads the same manifest), as tracegraph.Error subclasses."""
from __future__ import annotations

import json

import pytest

import tracegraph
from conftest import DATA, MODELS, expected, needs_torch

MANIFEST = json.loads((DATA / "malformed" / "manifest.json").read_text())
# The weights file a document names is read from its folder by the path
# loader, and given as bytes here: these two are about that path.
FILE_ONLY = {"g_weights_path_escapes.json", "g_weights_file_missing.json"}


@pytest.mark.parametrize("case", [c for c in MANIFEST if c["loader"] != "tree_spec" and c["file"] not in FILE_ONLY],
                         ids=lambda c: c["file"])
def test_malformed_file_is_refused_with_its_code(case):
    path = DATA / "malformed" / case["file"]
    source, weights = path, DATA / "valid" / "good.safetensors"
    if case["loader"] == "safetensors":
        source, weights = DATA / "valid" / "small.json", path
    else:
        try:
            named = json.loads(path.read_text()).get("weights")
            if isinstance(named, str) and (DATA / "malformed" / named).is_file():
                weights = DATA / "malformed" / named
        except (ValueError, UnicodeDecodeError, AttributeError):
            pass  # not JSON: any weights will do
    with pytest.raises(tracegraph.Error) as e:
        tracegraph.load(source, weights=weights)
    assert e.value.code == case["code"], str(e.value)
    assert type(e.value).code == case["code"]
    assert case["message"] in str(e.value)


@pytest.mark.parametrize("case", [c for c in MANIFEST if c["loader"] == "tree_spec"], ids=lambda c: c["file"])
def test_malformed_tree_spec_is_refused_with_its_code(case):
    with pytest.raises(tracegraph.Error) as e:
        tracegraph.TreeSpec.from_json((DATA / "malformed" / case["file"]).read_text())
    assert e.value.code == case["code"]


def test_a_missing_file_is_an_io_error_naming_it():
    with pytest.raises(tracegraph.IoError, match="/no/such/model.pt2") as e:
        tracegraph.load("/no/such/model.pt2")
    assert isinstance(e.value, OSError)
    with pytest.raises(tracegraph.IoError, match="/no/such/graph.json"):
        tracegraph.load("/no/such/graph.json")


def test_not_a_model_is_unsupported():
    with pytest.raises(tracegraph.UnsupportedError, match="neither a torch.export archive"):
        tracegraph.load(b"PK\x05\x06" + bytes(18))
    with pytest.raises(tracegraph.Error):
        tracegraph.load(b"not a model")


@pytest.mark.parametrize("name", sorted(p.name.removesuffix(".expected.json") for p in MODELS.glob("*.expected.json")
                                        if "error" in expected(p)))
def test_models_the_reader_refuses(name):
    """The core's reader refuses them with the code LibTorch's reader gives,
    and its message says what (LibTorch's reader's words), or names the
    code's entry and line where LibTorch's names its TorchScript node."""
    facts = expected(MODELS / f"{name}.expected.json")
    with pytest.raises(tracegraph.Error) as e:
        tracegraph.load(MODELS / f"{name}.ts", facts["input_shapes"])
    assert e.value.code == facts["error"]["code"]
    message = str(e.value)
    assert facts["error"]["message"] in message or (f"{name}.ts:" in message and " line " in message), message


@needs_torch
def test_scripted_code_that_branches_on_shapes_needs_them():
    import io

    import numpy as np
    import torch

    class Crop(torch.nn.Module):
        def forward(self, x):
            if x.shape[-1] > 4:
                return x[..., :4].sigmoid()
            return x.sigmoid()

    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(Crop()), buffer)
    with pytest.raises(tracegraph.NeedsInputShapesError, match="line") as e:
        tracegraph.load(buffer.getvalue())
    assert e.value.code == "needs_input_shapes"
    g = tracegraph.load(buffer.getvalue(), [[1, 6]])
    g.finalize()
    x = np.arange(6, dtype=np.float32).reshape(1, 6)
    np.testing.assert_allclose(g.run([x])[0], 1 / (1 + np.exp(-x[:, :4])), rtol=1e-6)

"""The LibTorch backend from Python (set_backend("libtorch")), where the
package was built with torch: the same models against torch's outputs, torch
tensors through DLPack, CUDA where there is a GPU, and the refusal of another
torch version."""
from __future__ import annotations

import numpy as np
import pytest

import tracegraph
from conftest import MODELS, PT2, assert_close, expected, io_of, needs_torch

pytestmark = needs_torch


@pytest.fixture(scope="module")
def libtorch():
    from tracegraph import _libtorch_backend
    try:
        return _libtorch_backend.extension()
    except tracegraph.UnsupportedError as e:
        pytest.skip(f"no LibTorch backend in this build: {e}")


@pytest.mark.parametrize("name", ["unet3d_dict_out", "resnet18_traced", "unet3d_two_heads"])
def test_torchscript_models_on_libtorch(libtorch, name):
    facts = expected(MODELS / f"{name}.expected.json")
    g = tracegraph.load(MODELS / f"{name}.ts", facts["input_shapes"])
    g.set_backend("libtorch")
    assert g.backend == "libtorch"
    g.finalize()
    inputs, outputs = io_of(MODELS / f"{name}.io.safetensors")
    got = g.run(inputs)
    assert all(isinstance(a, np.ndarray) for a in got)
    for i, (a, b) in enumerate(zip(got, outputs)):
        assert_close(a, b, f"{name} output {i} on LibTorch")


def test_torch_in_torch_out_and_by_name(libtorch):
    import torch
    g = tracegraph.load(PT2 / "mean_of_heads.pt2")
    g.set_backend("libtorch")
    with pytest.raises(tracegraph.NotFinalizedError):
        g.run([np.zeros((4, 6), np.float32)])
    g.finalize()
    inputs, outputs = io_of(PT2 / "mean_of_heads.io.safetensors")
    (y,) = g.run([torch.from_numpy(inputs[0])])
    assert isinstance(y, torch.Tensor)
    assert_close(y.numpy(), outputs[0], "mean_of_heads")
    (z,) = g.run({g.input_names[0]: inputs[0]})
    assert_close(z, outputs[0], "by name")
    with pytest.raises(tracegraph.NotFoundError, match="no input %nope"):
        g.run({"nope": inputs[0]})
    with pytest.raises(tracegraph.InvalidArgumentError, match="finalized"):
        g.set_backend("xnnpack")


def test_devices(libtorch):
    import torch
    g = tracegraph.load(MODELS / "unet2d.ts")
    g.set_backend("libtorch")
    with pytest.raises(tracegraph.InvalidArgumentError, match="device 'gpu'"):
        g.to("gpu")
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU: CUDA is not available here")
    g.to("cuda")
    g.finalize()
    inputs, outputs = io_of(MODELS / "unet2d.io.safetensors")
    (y,) = g.run([torch.from_numpy(inputs[0]).cuda()])
    assert y.is_cuda
    assert_close(y.cpu().numpy(), outputs[0], "unet2d on CUDA")


def test_another_torch_is_refused_by_name(libtorch, monkeypatch):
    import torch
    from tracegraph import _libtorch_backend
    monkeypatch.setattr(torch, "__version__", "0.0.1")
    with pytest.raises(tracegraph.UnsupportedError, match=r"built against torch .* this Python has torch 0\.0\.1"):
        _libtorch_backend.extension()
    g = tracegraph.load(MODELS / "unet2d.ts")
    with pytest.raises(tracegraph.UnsupportedError):
        g.set_backend("libtorch")
    assert g.backend == "xnnpack"

"""trace(module, args): a live module recorded in process (torch.export, else
the fx path) and run on XNNPACK like the module's own forward."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import tracegraph
from conftest import ROOT, assert_close, needs_torch

pytestmark = needs_torch
sys.path.insert(0, str(ROOT / "tests" / "models"))


def test_trace_then_call_matches_forward():
    import torch
    import make_test_models as tm
    torch.manual_seed(0)
    model = tm.UNet2d().eval()
    x = torch.randn(1, 3, 64, 64)
    g = tracegraph.trace(model, (x,))
    assert not g.is_finalized()
    assert str(g.in_spec) == "((*,), {})"
    g.finalize()
    y = g(x)
    assert isinstance(y, torch.Tensor)  # torch in, torch out
    with torch.no_grad():
        assert_close(y.numpy(), model(x).numpy(), "UNet2d traced")
    assert model.training is False


def test_trace_keeps_the_output_structure_and_kwargs():
    import torch

    class Heads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)

        def forward(self, x, *, scale):
            y = self.conv(x) * scale
            return {"mask": y[:, :1].sigmoid(), "rest": (y[:, 1:], y.mean())}

    torch.manual_seed(0)
    model = Heads().train()
    x, s = torch.randn(1, 2, 8, 9), torch.tensor(2.0)
    g = tracegraph.trace(model, (x,), {"scale": s})
    assert model.training  # its mode restored
    g.finalize()
    out = g(x.numpy(), scale=s.numpy())
    with torch.no_grad():
        want = model.eval()(x, scale=s)
    assert set(out) == {"mask", "rest"} and isinstance(out["rest"], tuple)
    assert isinstance(out["mask"], np.ndarray)  # numpy in, numpy out
    assert_close(out["mask"], want["mask"].numpy(), "mask")
    assert_close(out["rest"][0], want["rest"][0].numpy(), "rest")
    assert_close(out["rest"][1], want["rest"][1].numpy(), "mean")
    assert [a.kind for a in tracegraph.output_activation(g)][0] == "sigmoid"


def test_a_module_torch_export_refuses_goes_the_fx_way():
    import torch
    import make_test_models as tm
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.jit.script(tm.UNet3d()), torch.nn.Sigmoid()).eval()
    x = torch.randn(1, 1, 44, 44, 44)
    g = tracegraph.trace(model, (x,))
    g.finalize()
    with torch.no_grad():
        assert_close(g(x).numpy(), model(x).numpy(), "scripted UNet in a Sequential")
    assert tracegraph.output_activation(g)[0].kind == "sigmoid"


def test_trace_refuses_what_is_not_a_module():
    with pytest.raises(tracegraph.InvalidArgumentError, match="torch module"):
        tracegraph.trace(lambda x: x, (1,))


def test_int64_bool_and_complex_cross_both_ways():
    import torch

    class Kinds(torch.nn.Module):
        def forward(self, ids, mask, z):
            return ids * 3 + 1, mask.logical_not(), z * z.conj() + z, torch.where(mask, ids, 0).sum()

    torch.manual_seed(0)
    ids = torch.tensor([[1, 2 ** 40, -7], [0, 5, 9]], dtype=torch.int64)
    mask = torch.tensor([[True, False, True], [False, False, True]])
    z = torch.randn(2, 3, dtype=torch.complex64)
    g = tracegraph.trace(Kinds(), (ids, mask, z))
    g.finalize()
    got = g.run([ids.numpy(), mask.numpy(), z.numpy()])
    want = Kinds()(ids, mask, z)
    assert [a.dtype for a in got] == [np.int64, np.bool_, np.complex64, np.int64]
    np.testing.assert_array_equal(got[0], want[0].numpy())  # exact past 2^24
    np.testing.assert_array_equal(got[1], want[1].numpy())
    assert_close(got[2], want[2].numpy(), "complex")
    np.testing.assert_array_equal(got[3], want[3].numpy())

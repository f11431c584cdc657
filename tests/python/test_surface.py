"""One surface on every side: the calls of tests/xnnpack/surface_test.cpp (C++
on the XNNPACK backend) and tests/js/surface.test.mjs, case by case, from
Python on the same exported files; the same results and the same error codes
(README, "C++, JavaScript and Python: one surface")."""
from __future__ import annotations

import numpy as np
import pytest

import tracegraph
from conftest import EXPORTED, assert_close, io_of


def test_to_takes_the_cpu_and_refuses_other_devices():
    g = tracegraph.load(EXPORTED / "unet2d" / "unet2d.json")
    g.to("cpu")
    assert g.device == "cpu"
    assert g.backend == "xnnpack"
    with pytest.raises(tracegraph.UnsupportedError, match="not on cuda"):
        g.to("cuda")
    with pytest.raises(tracegraph.InvalidArgumentError, match="device 'gpu'"):
        g.to("gpu")
    g.finalize()
    g.to("cpu")
    with pytest.raises(tracegraph.UnsupportedError):
        g.to("cuda:1")


def test_run_by_name_and_its_errors():
    g = tracegraph.load(EXPORTED / "unet3d_dict_out" / "unet3d_dict_out.json")
    inputs, outputs = io_of(EXPORTED / "unet3d_dict_out" / "unet3d_dict_out.io.safetensors")
    with pytest.raises(tracegraph.NotFinalizedError) as e:
        g.run(inputs)
    assert e.value.code == "not_finalized"
    g.finalize()
    g.finalize()  # a second call changes nothing
    with pytest.raises(tracegraph.InvalidArgumentError, match="finalized"):
        g.optimize()
    by_order = g.run(inputs)
    by_name = g.run({g.input_names[0]: inputs[0]})
    assert isinstance(by_name, list) and len(by_name) == len(g.output_names)
    for a, b, c in zip(by_name, by_order, outputs):
        np.testing.assert_array_equal(a, b)
        assert_close(a, c, "by name")
    with pytest.raises(tracegraph.InvalidArgumentError, match="is missing"):
        g.run({})
    with pytest.raises(tracegraph.NotFoundError, match="no input %nope"):
        g.run({g.input_names[0]: inputs[0], "nope": inputs[0]})
    with pytest.raises(tracegraph.InvalidArgumentError, match="takes 1 input"):
        g.run([inputs[0], inputs[0]])
    with pytest.raises(tracegraph.ShapeMismatchError, match="must have shape"):
        g.run([np.zeros((1, 1, 8, 8, 8), np.float32)])
    # The builtin exception a Python caller expects, too.
    assert issubclass(tracegraph.InvalidArgumentError, ValueError)
    assert issubclass(tracegraph.NotFoundError, LookupError)
    assert issubclass(tracegraph.NotFinalizedError, tracegraph.Error)


def test_optimize_takes_the_seed_arguments():
    g = tracegraph.load(EXPORTED / "mobilenet_v2_traced" / "mobilenet_v2_traced.json")
    before = len(g.nodes)
    none = g.optimize(max_num_iterations=0)
    assert none.sweeps == 0 and len(g.nodes) == before
    named = g.optimize(["dead_code_elimination", "noop_elimination"])
    assert [t["name"] for t in named.transforms] == ["dead_code_elimination", "noop_elimination"]
    budgeted = g.optimize(defaults=tracegraph.DefaultsOptions(enabled=["batch_norm_folding"], rewrite_budget=1, verify_each=False))
    assert [t["name"] for t in budgeted.transforms] == ["batch_norm_folding"]
    assert budgeted.total_rewrites == 1 and budgeted.budget_exhausted
    full = g.optimize(defaults={"disabled": ["common_subexpression_elimination"]})
    assert full.nodes_after < full.nodes_before
    assert "batch_norm_folding" in str(full)
    rest = g.optimize()
    assert rest.converged
    assert rest.nodes_after == len(g.nodes) < before
    with pytest.raises(tracegraph.NotFoundError, match="no transform named 'no_such_transform'"):
        g.optimize(["no_such_transform"])
    g.finalize()
    inputs, outputs = io_of(EXPORTED / "mobilenet_v2_traced" / "mobilenet_v2_traced.io.safetensors")
    assert_close(g.run(inputs)[0], outputs[0], "optimized mobilenet_v2")

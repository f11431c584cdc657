"""TracedGraph through the Python package: every TorchScript and .pt2 test model
read by the core's own readers and run on XNNPACK against torch's saved
outputs; the surface's calls, conversions, errors and threads."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import tracegraph
from conftest import MODELS, PT2, EXPORTED, assert_close, expected, io_of, pt2_models, torchscript_models


def _finalized(path, shapes=None):
    g = tracegraph.load(path, shapes)
    assert not g.is_finalized()
    g.finalize()
    assert g.is_finalized()
    return g


@pytest.mark.parametrize("name", torchscript_models())
def test_torchscript_model_runs_like_torch(name):
    facts = expected(MODELS / f"{name}.expected.json")
    inputs, outputs = io_of(MODELS / f"{name}.io.safetensors")
    g = _finalized(MODELS / f"{name}.ts", facts["input_shapes"])
    got = g.run(inputs)
    assert len(got) == len(outputs)
    for i, (a, b) in enumerate(zip(got, outputs)):
        assert isinstance(a, np.ndarray)
        assert_close(a, b, f"{name} output {i}")
    kinds = [a.kind for a in tracegraph.output_activation(g)]
    # No shapes without LibTorch: concatenated heads' channel ranges are not
    # known to the core's TorchScript reader (as in tests/js/pt2.test.mjs).
    assert kinds == [a["kind"] if a["kind"] != "per_channel" else "unknown" for a in facts["activation"]]


@pytest.mark.parametrize("file", pt2_models())
def test_pt2_model_runs_like_torch(file):
    name = file.split(".")[0]
    facts = expected(PT2 / f"{name}.expected.json")
    inputs, outputs = io_of(PT2 / f"{name}.io.safetensors")
    g = tracegraph.load(PT2 / file)
    assert g.in_spec is not None and g.in_spec.kind == "tuple"
    g.finalize()
    got = g.run(inputs)
    for i, (a, b) in enumerate(zip(got, outputs)):
        assert_close(a, b, f"{file} output {i}")
    if "activation" in facts:
        assert [a.kind for a in tracegraph.output_activation(g)] == [a["kind"] for a in facts["activation"]]


def test_load_reads_bytes_and_the_exported_pair():
    inputs, outputs = io_of(MODELS / "unet2d.io.safetensors")
    from_bytes = _finalized((MODELS / "unet2d.ts").read_bytes())
    from_pair = _finalized(EXPORTED / "unet2d" / "unet2d.json")
    for g in (from_bytes, from_pair):
        assert_close(g.run(inputs)[0], outputs[0], "unet2d")


def test_structured_call_follows_the_specs():
    g = _finalized(MODELS / "unet3d_dict_out.ts", [[1, 1, 44, 44, 44]])
    inputs, outputs = io_of(MODELS / "unet3d_dict_out.io.safetensors")
    assert g.in_spec is not None
    assert g.out_spec.kind == "dict"
    result = g(inputs[0])
    assert isinstance(result, dict) and list(result) == g.out_spec.keys
    for a, b in zip(g.out_spec.flatten(result), outputs):
        assert_close(a, b, "dict output")
    with pytest.raises(tracegraph.TreeSpecMismatchError) as e:
        g(inputs[0], inputs[0])
    assert e.value.code == "tree_spec_mismatch"


def test_inputs_are_converted_as_documented():
    g = _finalized(MODELS / "unet2d.ts")
    inputs, outputs = io_of(MODELS / "unet2d.io.safetensors")
    x = inputs[0]
    as_f64 = g.run([x.astype(np.float64)])[0]
    assert as_f64.dtype == np.float32
    assert_close(as_f64, outputs[0], "float64 input")
    strided = np.asfortranarray(x)
    assert not strided.flags.c_contiguous
    assert_close(g.run([strided])[0], outputs[0], "non-contiguous input")
    with pytest.raises(tracegraph.DtypeMismatchError, match="input 'x' is int32, expected float32"):
        g.run([x.astype(np.int32)])
    exported = _finalized(EXPORTED / "unet2d" / "unet2d.json")  # its input says float32: refused before the core
    with pytest.raises(tracegraph.DtypeMismatchError, match="input 0: expected float32, got int32"):
        exported.run([x.astype(np.int32)])
    with pytest.raises(tracegraph.InvalidArgumentError, match="not one array"):
        g.run(x)


def test_outputs_own_their_memory():
    g = _finalized(MODELS / "unet2d.ts")
    inputs, _ = io_of(MODELS / "unet2d.io.safetensors")
    first = g.run(inputs)[0]
    kept = first.copy()
    second = g.run([inputs[0] * 2])[0]
    np.testing.assert_array_equal(first, kept)  # a later run does not write into an earlier result
    assert not np.array_equal(first, second)


def test_graph_view_names_nodes_values_and_flops():
    g = tracegraph.load(EXPORTED / "unet2d" / "unet2d.json")  # an exported graph keeps its shapes
    graph = g.graph
    assert graph.input_names == g.input_names and graph.output_names == g.output_names
    convs = [n for n in graph.nodes if n.canonical == "conv"]
    assert convs and all(isinstance(n.inputs, list) for n in convs)
    values = graph.values
    assert values[g.input_names[0]]["shape"] == (1, 3, 64, 64)
    assert any(v["constant"] for v in values.values())
    assert '"nodes"' in graph.document()
    assert all(n.flops and n.flops > 0 for n in g.nodes if n.canonical == "conv")


def test_one_graph_runs_from_several_threads():
    g = _finalized(MODELS / "unet2d.ts")
    inputs, outputs = io_of(MODELS / "unet2d.io.safetensors")
    results, errors = [], []

    def worker(scale):
        try:
            for _ in range(3):
                results.append((scale, g.run([inputs[0] * scale])[0]))
        except Exception as e:  # collected: a failure in a thread must fail the test
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in (1.0, 0.5, 1.0, 0.5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 12
    for scale, out in results:
        if scale == 1.0:
            assert_close(out, outputs[0], "threaded run")
    halves = [out for scale, out in results if scale == 0.5]
    for out in halves[1:]:
        np.testing.assert_array_equal(out, halves[0])


def test_profile_names_each_node():
    g = tracegraph.load(MODELS / "unet2d.ts")
    g.finalize(profile=True, threads=2)
    inputs, _ = io_of(MODELS / "unet2d.io.safetensors")
    g.run(inputs)
    rows = g.profile()
    assert rows and {"node", "op", "milliseconds", "engine"} <= set(rows[0])
    assert any(r["engine"] in ("xnnpack", "winograd") for r in rows)


def test_the_package_is_typed():
    """_core's stub (nanobind's stubgen, at build time) beside it, and the py.typed marker."""
    import pathlib
    package = pathlib.Path(tracegraph.__file__).parent
    stub = (package / "_core.pyi").read_text()
    assert "class Model" in stub and "def load_path(" in stub and "class OptimizeReport" in stub
    assert (package / "py.typed").is_file()

"""Run by tests/python/wheel_test.sh inside a fresh venv that has numpy and
the built wheel only: no torch, no compiler, no source tree on sys.path. A
.pt2, a traced and a scripted TorchScript file from the test zoo run on
XNNPACK within 1e-4 of torch's saved outputs, and their activations are named.

Usage: wheel_check.py MODELS_DIR EXPORTED_DIR"""
from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import numpy as np

import tracegraph
from tensors import assert_close, io_of


def check(path: pathlib.Path, io: pathlib.Path, facts: pathlib.Path, shapes=None):
    want = [a["kind"] for a in json.loads(facts.read_text())["activation"]]
    g = tracegraph.load(path, shapes)
    activations = tracegraph.output_activation(g)
    assert [a.kind for a in activations] == want, f"{path.name}: {[str(a) for a in activations]}, expected {want}"
    g.finalize()
    inputs, outputs = io_of(io)
    for i, (got, ref) in enumerate(zip(g.run(inputs), outputs)):
        assert isinstance(got, np.ndarray)
        assert_close(got, ref, f"{path.name} output {i}")
    print(f"wheel: {path.name}: {', '.join(map(str, activations))}; matches torch's outputs")


def main():
    models, exported = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    assert importlib.util.find_spec("torch") is None, "this venv must not have torch"
    assert pathlib.Path(tracegraph.__file__).is_relative_to(sys.prefix), f"tracegraph imported from {tracegraph.__file__}"
    check(models / "unet3d_sigmoid_traced.ts", models / "unet3d_sigmoid_traced.io.safetensors",
          models / "unet3d_sigmoid_traced.expected.json")
    check(models / "unet3d_dict_out.ts", models / "unet3d_dict_out.io.safetensors",
          models / "unet3d_dict_out.expected.json", [[1, 1, 44, 44, 44]])
    name = "unet3d_two_heads_export"
    check(exported / name / f"{name}.pt2", exported / name / f"{name}.io.safetensors", exported / name / f"{name}.expected.json")
    print(f"wheel: tracegraph {tracegraph.__version__} on {tracegraph.instruction_set()}, numpy {np.__version__}, no torch: 3 models")


if __name__ == "__main__":
    main()

"""Tensors of the test models' NAME.io.safetensors, read with numpy alone (the
wheel's check runs where there is no torch), and the comparison with torch's
outputs that every Python test uses."""
from __future__ import annotations

import json
import pathlib

import numpy as np

_NUMPY = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I64": np.int64, "I32": np.int32, "I16": np.int16,
          "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_, "C64": np.complex64}


def read_safetensors(path) -> dict[str, np.ndarray]:
    """{name: array} of a safetensors file."""
    b = pathlib.Path(path).read_bytes()
    n = int.from_bytes(b[:8], "little")
    header = json.loads(b[8:8 + n])
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        s, e = v["data_offsets"]
        out[k] = np.frombuffer(b[8 + n + s:8 + n + e], dtype=_NUMPY[v["dtype"]]).reshape(v["shape"]).copy()
    return out


def io_of(path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The inputs ("input.N") and torch's outputs ("output.N") of NAME.io.safetensors."""
    t = read_safetensors(path)
    count = lambda prefix: len([k for k in t if k.startswith(prefix)])  # noqa: E731
    return [t[f"input.{i}"] for i in range(count("input."))], [t[f"output.{i}"] for i in range(count("output."))]


def assert_close(got, want, what, tolerance=1e-4):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, torch's {want.shape}"
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    err = float(np.max(np.abs(got.astype(np.complex128) - want.astype(np.complex128)))) if want.size else 0.0
    assert err <= tolerance * scale, f"{what}: max error {err:.3g} against torch's outputs (allowed {tolerance * scale:.3g})"

"""Shared by the Python package's tests: where the test models are (the native
preset's fixtures make them), and a reader of their .io.safetensors that needs
numpy only."""
from __future__ import annotations

import json
import os
import pathlib

import pytest

from tensors import assert_close, io_of, read_safetensors  # noqa: F401  (the tests import them from here)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("TRACEGRAPH_BUILD_DIR", ROOT / "build" / "native"))
MODELS = BUILD / "models"            # make_test_models.py: NAME.ts, NAME.io.safetensors, NAME.expected.json
EXPORTED = BUILD / "exported"        # export_test_models / make_exported_models.py: NAME/NAME.{json,pt2,...}
PT2 = pathlib.Path(os.environ.get("TRACEGRAPH_PT2_DIR", ROOT / "build" / "pt2"))  # make_pt2_models.py
DATA = ROOT / "tests" / "data"
CLI = BUILD / "cli" / "tracegraph"


def expected(path) -> dict:
    return json.loads(pathlib.Path(path).read_text())


def torchscript_models() -> list[str]:
    """The TorchScript test models that have outputs to compare (not the ones made to be refused)."""
    if not MODELS.is_dir():
        pytest.fail(f"no test models in {MODELS}: the native preset's make_test_models fixture makes them")
    return sorted(p.name.removesuffix(".expected.json") for p in MODELS.glob("*.expected.json")
                  if (MODELS / p.name.replace(".expected.json", ".io.safetensors")).is_file())


def pt2_models() -> list[str]:
    """The .pt2 archives make_pt2_models.py wrote with outputs to compare, both
    IRs (NAME.pt2 as exported, NAME.core.pt2 in core ATen, NAME.deflated.pt2):
    file names; NAME.io.safetensors and NAME.expected.json serve them all."""
    if not PT2.is_dir():
        pytest.fail(f"no .pt2 test archives in {PT2}: the native preset's make_pt2_models fixture makes them")
    return sorted(p.name for p in PT2.glob("*.pt2") if (PT2 / (p.name.split(".")[0] + ".io.safetensors")).is_file())


try:
    import torch  # noqa: F401
    HAS_TORCH = True
except ImportError:
    HAS_TORCH = False

needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="needs torch (bootstrap's venv has it)")

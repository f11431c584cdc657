"""The LibTorch backend (CPU and CUDA), where the package was built with torch
(``pip install ./python`` in bootstrap's venv; the native preset's build): its
extension is built against one torch and refuses, by name, to load beside
another. A graph is handed to it in the exported format at finalize()."""
from __future__ import annotations

import importlib

from . import _core


def extension():
    """tracegraph._libtorch, imported once torch is (its libraries come from torch's own)."""
    try:
        import torch
    except ImportError as e:
        raise _core.UnsupportedError("the LibTorch backend needs torch, which this Python does not have "
                                     "(the XNNPACK backend needs nothing)") from e
    try:
        ext = importlib.import_module("._libtorch", __package__)
    except ImportError as e:
        raise _core.UnsupportedError("this tracegraph was built without the LibTorch backend (build it where torch is: "
                                     f"pip install --no-build-isolation ./python): {e}") from e
    if ext.torch_version != torch.__version__:
        raise _core.UnsupportedError(f"tracegraph's LibTorch backend was built against torch {ext.torch_version}, and this "
                                     f"Python has torch {torch.__version__}: rebuild the package here")
    return ext

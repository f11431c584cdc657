"""python -m tracegraph.export MODULE:FACTORY --example 1,1,44,44,44 [--example ...] -o DIR [--name NAME] [--method auto|export|fx] [--decompose]

MODULE:FACTORY names a function (or class) that returns the torch module,
imported from MODULE (a module name, or a path to a .py file). Each
--example is one input's shape; the inputs are seeded random float32 tensors.
Writes DIR/NAME.pt2 (the torch.export program; --decompose: in core ATen),
or, for a module torch.export refuses, DIR/NAME.json and DIR/NAME.safetensors
(its fx trace), and prints what it wrote. A .pt2 needs no export: tracegraph
opens it as it is."""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys

import torch

from . import ExportError, export


def _load_factory(spec: str):
    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise SystemExit(f"tracegraph.export: expected MODULE:FACTORY, got '{spec}'")
    if module_name.endswith(".py") or os.sep in module_name:
        loader_spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(module_name))[0], module_name)
        if loader_spec is None:
            raise SystemExit(f"tracegraph.export: cannot import {module_name}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[loader_spec.name] = module
        loader_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    return getattr(module, attr)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tracegraph.export", description=__doc__.split("\n\n")[1])
    p.add_argument("model", help="MODULE:FACTORY")
    p.add_argument("--example", action="append", default=[], help="an input shape, e.g. 1,1,44,44,44 (one per input)")
    p.add_argument("-o", "--out", required=True, help="the output directory")
    p.add_argument("--name", help="the file name (default: the factory's name)")
    p.add_argument("--method", choices=("auto", "export", "fx"), default="auto",
                   help="auto: torch.export, else the fx trace (default)")
    p.add_argument("--decompose", action="store_true", help="save the program in core ATen (run_decompositions())")
    a = p.parse_args(argv)
    torch.manual_seed(0)
    try:
        if a.model.endswith(".pt2"):
            raise ExportError(f"{a.model}: a saved program needs no export; tracegraph reads it as it is "
                              f"(tracegraph inspect {a.model})")
        model = _load_factory(a.model)()
        inputs = tuple(torch.randn([int(d) for d in s.split(",")]) for s in a.example)
        name = a.name or a.model.rpartition(":")[2]
        written = export(model, inputs, os.path.join(a.out, name), method=a.method, decompose=a.decompose)
    except (ExportError, ValueError) as e:
        print(f"tracegraph.export: error: {e}", file=sys.stderr)
        return 1
    also = f" and {os.path.splitext(written.path)[0]}.safetensors" if written.reader == "fx" else ""
    print(f"wrote {written.path}{also} ({written.reader})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

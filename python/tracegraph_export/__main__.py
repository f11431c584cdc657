"""python -m tracegraph_export MODULE:FACTORY --example 1,1,44,44,44 [--example ...] -o DIR [--name NAME]
python -m tracegraph_export PROGRAM.pt2 -o DIR [--name NAME]

MODULE:FACTORY names a function (or class) that returns the torch module,
imported from MODULE (a module name, or a path to a .py file). Each
--example is one input's shape; the inputs are seeded random float32 tensors.
Writes DIR/NAME.json and DIR/NAME.safetensors and prints what it wrote."""
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
        raise SystemExit(f"tracegraph_export: expected MODULE:FACTORY, got '{spec}'")
    if module_name.endswith(".py") or os.sep in module_name:
        loader_spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(module_name))[0], module_name)
        if loader_spec is None:
            raise SystemExit(f"tracegraph_export: cannot import {module_name}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[loader_spec.name] = module
        loader_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    return getattr(module, attr)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tracegraph_export", description=__doc__.split("\n\n")[1])
    p.add_argument("model", help="MODULE:FACTORY, or a .pt2 file from torch.export.save")
    p.add_argument("--example", action="append", default=[], help="an input shape, e.g. 1,1,44,44,44 (one per input)")
    p.add_argument("-o", "--out", required=True, help="the output directory")
    p.add_argument("--name", help="the file name (default: the factory's or the file's name)")
    a = p.parse_args(argv)
    torch.manual_seed(0)
    try:
        if a.model.endswith(".pt2"):
            model, inputs = a.model, None
            name = a.name or os.path.splitext(os.path.basename(a.model))[0]
        else:
            model = _load_factory(a.model)()
            inputs = tuple(torch.randn([int(d) for d in s.split(",")]) for s in a.example)
            name = a.name or a.model.rpartition(":")[2]
        doc = export(model, inputs, os.path.join(a.out, name))
    except (ExportError, ValueError) as e:
        print(f"tracegraph_export: error: {e}", file=sys.stderr)
        return 1
    g = doc["graph"]
    print(f"wrote {os.path.join(a.out, name)}.json and .safetensors: {len(g['nodes'])} nodes, "
          f"{sum(1 for v in g['values'] if 'constant' in v)} weights ({doc['metadata']['reader']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

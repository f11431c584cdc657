#!/usr/bin/python3
"""Writes the seed edit scripts of fuzz_backends (format: tests/fuzz/fuzz_backends.cpp)
into tests/data/fuzz_backend_seeds: each model as it is, and the hostile edits
of issue 14's table on the first convolution of a 2D and a 3D UNet.

    tests/fuzz/make_backend_seeds.py [build/native/exported]

Reads the exported models for node and attribute positions; the seeds are
committed, so this runs only when they should change."""
import json
import struct
import sys
from pathlib import Path

root = Path(__file__).resolve().parents[2]
exported = Path(sys.argv[1]) if len(sys.argv) > 1 else root / "build/native/exported"
out = root / "tests/data/fuzz_backend_seeds"
out.mkdir(exist_ok=True)

EDGES = {0: 0, 1: 1, -1: 2, 2: 3, 3: 4, -5: 5, 7: 6, 64: 7, 100000: 8, 6000: 9, 30000: 10}


def number(v):
    if v in EDGES:
        return bytes([EDGES[v]])
    return b"\x10" + struct.pack("<i", v)


def attribute(node, index, values):
    return bytes([0]) + struct.pack("<H", node) + bytes([index, len(values)]) + b"".join(number(v) for v in values)


def input_shape(index, shape):
    return bytes([1, index, len(shape)]) + b"".join(number(v) for v in shape)


def first_conv(model):
    doc = json.loads((exported / model / f"{model}.json").read_text())
    nodes = doc["graph"]["nodes"]
    i = next(i for i, n in enumerate(nodes) if n["op"] == "aten::_convolution")
    names = list(nodes[i]["attributes"])
    input_rank = len(next(v for v in doc["graph"]["values"] if v["id"] == doc["graph"]["inputs"][0])["shape"])
    return i, names, input_rank


def write(name, data):
    (out / name).write_bytes(data)


for model in ("unet2d", "unet3d_sigmoid_traced"):
    head = model.encode() + b"\n"
    write(f"{model}_as_is", head)
    node, names, rank = first_conv(model)
    spatial = rank - 2
    edits = {
        "padding_100000": ("padding", [100000] * spatial),
        "padding_negative": ("padding", [-5] * spatial),
        "stride_0": ("stride", [0] * spatial),
        "dilation_0": ("dilation", [0] * spatial),
        "stride_negative": ("stride", [-1] + [1] * (spatial - 1)),
    }
    for label, (attr, values) in edits.items():
        write(f"{model}_{label}", head + attribute(node, names.index(attr), values))
    side = 6000 if spatial == 2 else 400
    write(f"{model}_input_large", head + input_shape(0, [1, 3 if spatial == 2 else 1] + [side] * spatial))
    write(f"{model}_input_huge", head + input_shape(0, [1, 3, 30000, 30000]))
print("make_backend_seeds: wrote", len(list(out.iterdir())), "seeds to", out)

"""The Python package's cost, side by side in one run (scripts/bench_python.sh):
for each benchmark model, the median of tracegraph's `run` called from Python,
the same runs timed inside C++ (the call's overhead is the difference), torch's
eager forward of the same module, and onnxruntime's Python API on the ONNX twin
bench/make_models.py wrote; one thread each.

Usage: python_bench.py BENCH_DIR [--runs N] [--warmup N] [--rounds N] [--models a,b]"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import tracegraph


def median_ms(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bench_dir")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tiny", default="build/pt2/mean_of_heads.pt2", help="a model whose run costs next to nothing")
    p.add_argument("--models")
    a = p.parse_args()
    index = json.load(open(os.path.join(a.bench_dir, "models.json")))
    names = a.models.split(",") if a.models else list(index)
    import torch
    torch.set_num_threads(1)
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
        print("onnxruntime: not installed in this Python; its column is empty", file=sys.stderr)
    rows = []
    for name in names:
        shape = index[name]["input_shape"]
        ts = os.path.join(a.bench_dir, name + ".ts")
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        g = tracegraph.load(ts, [shape])
        g.optimize()
        g.finalize(threads=1)
        # Python's call and C++'s loop take turns, round by round, each keeping its
        # best median: the host's drift falls on both alike.
        py, cpp = float("inf"), float("inf")
        for _ in range(a.rounds):
            py = min(py, median_ms(lambda: g.run([x]), a.runs, a.warmup))
            cpp = min(cpp, statistics.median(g._model.time_runs([x], a.warmup + a.runs)[a.warmup:]))
        module = torch.jit.load(ts).eval()
        tx = torch.from_numpy(x)
        with torch.no_grad():
            eager = median_ms(lambda: module(tx), a.runs, a.warmup)
        onnx = None
        if ort is not None:
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            session = ort.InferenceSession(os.path.join(a.bench_dir, name + ".onnx"), options, providers=["CPUExecutionProvider"])
            feed = {session.get_inputs()[0].name: x}
            onnx = median_ms(lambda: session.run(None, feed), a.runs, a.warmup)
        rows.append((name, py, cpp, eager, onnx))
    if a.tiny and os.path.exists(a.tiny):
        # The call's own cost, where the run itself costs next to nothing.
        g = tracegraph.load(a.tiny)
        g.finalize(threads=1)
        shape = [int(d) for d in g.graph.values[g.input_names[0]]["shape"]]
        x = np.zeros(shape, np.float32)
        py, cpp = float("inf"), float("inf")
        for _ in range(a.rounds):
            py = min(py, median_ms(lambda: g.run([x]), 2000, 100))
            cpp = min(cpp, statistics.median(g._model.time_runs([x], 2100)[100:]))
        print(f"the call's own cost on {os.path.basename(a.tiny)} {shape}: python {py * 1e3:.1f} us, C++ {cpp * 1e3:.1f} us, "
              f"overhead {(py - cpp) * 1e3:.1f} us")
    print(f"{'model':14} {'python ms':>10} {'C++ ms':>8} {'overhead':>9} {'torch ms':>9} {'/torch':>7} {'onnxrt ms':>10} {'/onnxrt':>8}")
    for name, py, cpp, eager, onnx in rows:
        o = f"{onnx:10.2f} {py / onnx:8.2f}" if onnx else f"{'-':>10} {'-':>8}"
        print(f"{name:14} {py:10.2f} {cpp:8.2f} {py - cpp:8.3f}ms {eager:9.2f} {py / eager:7.2f} {o}")


if __name__ == "__main__":
    main()

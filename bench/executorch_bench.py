"""ExecuTorch's XNNPACK delegate on a benchmark model, through its Python
runtime: the module rebuilt in Python with the TorchScript file's weights,
exported (torch.export), lowered with XnnpackPartitioner, and run on
`threads` threads. Prints one JSON line as bench/engine.mjs does (load, first,
median, p10, p90 in ms, the first outputs as a checksum) plus the largest
difference from the module's own forward.

Run by bench/run.mjs with the venv scripts/executorch_venv.sh makes:
  python bench/executorch_bench.py BENCH_DIR MODEL THREADS RUNS WARMUP
"""
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))
from make_test_models import UNet2d, UNet3d, torchvision_model  # noqa: E402

MODULES = {
    "mobilenet_v2": lambda: torchvision_model("mobilenet_v2"),
    "resnet18": lambda: torchvision_model("resnet18"),
    "unet2d": lambda: UNet2d(3, 16, 2),
    "unet3d": lambda: UNet3d(1, 12, 2),
}


def main():
    bench_dir, model, threads, runs, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    shape = json.load(open(os.path.join(bench_dir, "models.json")))[model]["input_shape"]
    torch.manual_seed(0)
    x = torch.randn(shape)

    start = time.perf_counter()
    module = MODULES[model]().eval()
    # The same weights as every other engine: the TorchScript file's.
    module.load_state_dict(torch.jit.load(os.path.join(bench_dir, f"{model}.ts")).state_dict())
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime

    with torch.no_grad():
        want = module(x)
        edge = to_edge_transform_and_lower(torch.export.export(module, (x,)), partitioner=[XnnpackPartitioner()])
        # What the XNNPACK delegate left to ExecuTorch's own kernels.
        outside = sorted({getattr(n.target, "__name__", str(n.target)) for n in edge.exported_program().graph.nodes
                          if n.op == "call_function" and "call_delegate" not in str(n.target) and "getitem" not in str(n.target)})
        program = edge.to_executorch()
    portable_lib._unsafe_reset_threadpool(threads)
    try:
        method = Runtime.get().load_program(program.buffer).load_method("forward")
    except RuntimeError as e:
        raise RuntimeError(f"{e} (left outside the XNNPACK delegate: {', '.join(outside) or 'nothing'})") from None
    load_ms = (time.perf_counter() - start) * 1e3

    def run():
        return method.execute([x])[0]

    t0 = time.perf_counter()
    out = run()
    first_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(warmup):
        run()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    quantile = lambda q: times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731
    print(json.dumps({
        "load": load_ms, "first": first_ms, "median": statistics.median(times), "p10": quantile(0.1), "p90": quantile(0.9),
        "checksum": out.flatten()[:4].tolist(),
        "max_abs_diff": float((out - want).abs().max()),
    }))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the last line is what bench/run.mjs shows
        print(f"executorch: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
        sys.exit(1)

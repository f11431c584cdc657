"""tracegraph.blockwise's benchmark (scripts/bench_blockwise.sh), not a test: a
generated uint8 volume (512^3 by default) in zarr, a valid-padded and a
same-padded 3D UNet (few channels, seeded), predicted block by block through
daisy with 1 and 2 workers and a Dask LocalCluster of 2, against a plain torch
loop over the same blocks (read the window, forward, write: what the inference
servers do today), which is also the reference (the model on overlapping
crops) every output is compared with (1e-5). Prints output voxels per second."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np


def nets():
    import torch
    import torch.nn as nn

    def convs(a, b, pad):
        return nn.Sequential(nn.Conv3d(a, b, 3, padding=pad), nn.ReLU(), nn.Conv3d(b, b, 3, padding=pad), nn.ReLU())

    class ValidUNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc, self.pool, self.mid = convs(1, 4, 0), nn.MaxPool3d(2), convs(4, 8, 0)
            self.up, self.dec, self.head = nn.ConvTranspose3d(8, 4, 2, stride=2), convs(8, 4, 0), nn.Conv3d(4, 1, 1)

        def forward(self, x):
            f = self.enc(x)
            u = self.up(self.mid(self.pool(f)))
            return self.head(self.dec(torch.cat([f[:, :, 4:-4, 4:-4, 4:-4], u], 1)))

    class SameUNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc0, self.enc1, self.pool = convs(1, 4, 1), convs(4, 8, 1), nn.MaxPool3d(2)
            self.up, self.dec, self.head = nn.ConvTranspose3d(8, 4, 2, stride=2), convs(8, 4, 1), nn.Conv3d(4, 1, 1)

        def forward(self, x):
            f0 = self.enc0(x)
            return self.head(self.dec(torch.cat([f0, self.up(self.enc1(self.pool(f0)))], 1)))

    return {"valid UNet": (ValidUNet, None), "same UNet": (SameUNet, None)}  # halo: the network's own


def torch_loop(net, raw, plan, padding="zero"):
    """The plain loop: per block, read its window (zeros outside), torch forward, sigmoid, write the centre."""
    import torch
    import tracegraph.blockwise as bw
    out = np.zeros(plan.output_shape, np.float32)
    with torch.no_grad():
        for block in plan.block_indices():
            w = [a.window(k) for a, k in zip(plan.axes, block)]
            x = bw._read_window(raw, plan, [s for s, _, _ in w], padding, (1 / 255, 0.0))
            y = torch.sigmoid(net(torch.from_numpy(x)[None]))[0].numpy()
            y = y[(slice(None),) + tuple(slice(i, i + n) for _, i, n in w)]
            out[(slice(None),) + tuple(slice(k * a.block, k * a.block + n) for a, k, (_, _, n) in zip(plan.axes, block, w))] = y
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--block", type=int, default=64)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    import torch
    import zarr
    import tracegraph
    import tracegraph.blockwise as bw
    from distributed import Client, LocalCluster
    torch.set_num_threads(1)
    work = args.dir or tempfile.mkdtemp(prefix="tracegraph-bench-")
    n = args.size
    print(f"volume {n}^3 uint8 (zarr v3, chunks 64^3), blocks of {args.block}^3 output voxels, in {work}", flush=True)
    raw_path = os.path.join(work, "raw.zarr")
    shutil.rmtree(raw_path, ignore_errors=True)
    raw = zarr.create_array(raw_path, shape=(n, n, n), chunks=(64, 64, 64), dtype="uint8")
    rng = np.random.default_rng(0)
    for z in range(0, n, 64):
        raw[z:z + 64] = rng.integers(0, 256, (min(64, n - z), n, n), dtype=np.uint8)
    raw = zarr.open_array(raw_path, mode="r")
    voxels = n ** 3
    rows = []
    for i, (name, (cls, halo)) in enumerate(nets().items()):
        torch.manual_seed(i)
        net = cls().eval()
        model = os.path.join(work, name.replace(" ", "_") + ".pt2")
        torch.export.save(torch.export.export(net, (torch.zeros(1, 1, 32, 32, 32),)), model)
        plan = bw.plan(model, raw.shape, block_shape=args.block, halo=halo)
        a = plan.axes[0]
        print(f"\n{name}: input {a.input_size}^3 per block (halo {a.halo}), {np.prod(plan.grid)} blocks", flush=True)
        t = time.perf_counter()
        ref = torch_loop(net, raw, plan)
        rows.append((name, "torch loop (reference)", 1, voxels / (time.perf_counter() - t), 0.0))
        print(f"  {rows[-1][1]:<28} {rows[-1][3]:>12,.0f} voxels/s", flush=True)
        runs = [("tracegraph daisy", dict(scheduler="daisy", num_workers=1), 1),
                ("tracegraph daisy", dict(scheduler="daisy", num_workers=2), 2),
                ("tracegraph dask", dict(scheduler="dask"), 2)]
        for label, kw, workers in runs:
            out = os.path.join(work, f"pred_{i}_{kw['scheduler']}_{workers}.zarr")
            shutil.rmtree(out, ignore_errors=True)
            t = time.perf_counter()
            if kw["scheduler"] == "dask":
                with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c, \
                        Client(c) as client:
                    t = time.perf_counter()  # the cluster's start is not the model's time
                    bw.predict(model, raw_path, out, block_shape=args.block, halo=halo, normalize=(1 / 255, 0.0),
                               activation="sigmoid", client=client, progress=False, **kw)
                    seconds = time.perf_counter() - t
            else:
                bw.predict(model, raw_path, out, block_shape=args.block, halo=halo, normalize=(1 / 255, 0.0),
                           activation="sigmoid", progress=False, **kw)
                seconds = time.perf_counter() - t
            y = zarr.open_group(out, mode="r")["0"][:]
            err = float(np.abs(y - ref).max())
            rows.append((name, f"{label} ({workers} worker{'s' if workers > 1 else ''})", workers, voxels / seconds, err))
            print(f"  {rows[-1][1]:<28} {rows[-1][3]:>12,.0f} voxels/s   max |diff| {err:.2e}", flush=True)
            assert err <= 1e-5, f"{name} {label}: {err} from the torch loop"
            shutil.rmtree(out, ignore_errors=True)
    print("\nmodel        run                            voxels/s   max |diff| vs torch")
    for name, label, _, vps, err in rows:
        print(f"{name:<12} {label:<28} {vps:>12,.0f}   {err:.1e}")
    if args.dir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

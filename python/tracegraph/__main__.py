"""python -m tracegraph predict MODEL IN OUT [options]: tracegraph.blockwise.predict from the command line."""
from __future__ import annotations

import argparse
import sys


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",")]


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def _roi(text: str):
    start, size = text.split(":")
    return _ints(start), _ints(size)


def _normalize(text: str):
    if text == "dtype":
        return text
    scale, shift = _floats(text)
    return scale, shift


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tracegraph")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("predict", help="predict a model over a volume block by block into an OME-NGFF zarr")
    p.add_argument("model", help=".pt2, TorchScript (.ts/.pt) or an exported graph's .json")
    p.add_argument("input", help="a zarr array (v2 or v3) or an OME-NGFF group")
    p.add_argument("output", help="the zarr group to write (OME-NGFF, dataset 0)")
    p.add_argument("--block", type=_ints, help="output voxels per block, per axis (Z,Y,X) or one number")
    p.add_argument("--scheduler", choices=("daisy", "dask", "local"), default="daisy")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--backend", choices=("xnnpack", "libtorch"), default="xnnpack")
    p.add_argument("--threads", type=int, default=1, help="threads per worker")
    p.add_argument("--normalize", type=_normalize, help="SCALE,SHIFT or dtype (an integer range to [0, 1])")
    p.add_argument("--activation", choices=("sigmoid", "tanh", "relu", "softmax"))
    p.add_argument("--halo", type=_ints, default=None,
                   help="input voxels read beyond the context, per side (default: the network's own, from its geometry)")
    p.add_argument("--padding", choices=("zero", "reflect"), default="zero")
    p.add_argument("--roi", type=_roi, help="START:SIZE in input voxels, e.g. 0,0,0:64,64,64")
    p.add_argument("--voxel-size", type=_floats)
    p.add_argument("--offset", type=_floats, help="the world position of input voxel 0")
    p.add_argument("--output-index", type=int, default=0)
    p.add_argument("--zarr-format", type=int, choices=(2, 3), default=3)
    p.add_argument("--quiet", action="store_true", help="no progress")
    args = parser.parse_args(argv)

    from . import blockwise
    block = None if args.block is None else (args.block[0] if len(args.block) == 1 else args.block)
    halo = None if args.halo is None else args.halo[0] if len(args.halo) == 1 else args.halo
    result = blockwise.predict(args.model, args.input, args.output, block_shape=block, scheduler=args.scheduler,
                               num_workers=args.workers, backend=args.backend, threads=args.threads,
                               normalize=args.normalize, activation=args.activation, halo=halo, padding=args.padding,
                               roi=args.roi, voxel_size=args.voxel_size, offset=args.offset,
                               output_index=args.output_index, zarr_format=args.zarr_format, progress=not args.quiet)
    print(f"wrote {result.output}/0 {result.plan.output_shape} in blocks of {result.plan.block_shape}: "
          f"{result.ran} blocks run, {result.skipped} done before, {result.voxels_per_second:,.0f} voxels/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

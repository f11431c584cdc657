#!/usr/bin/env python3
"""The op sweep's programs: one op each, from PyTorch's own sample inputs.

    make_op_sweep.py OUT_DIR

For each op of SWEEP (OpInfo names of torch's op_db: the core ATen ops and the
others the model libraries emit) and each other OpInfo of an op this torch tags
`core` (native_functions.yaml; CORE_LEFT_OUT names those left out, and why), up to SAMPLES of its float32 sample inputs
(sample_inputs, seeded) become a module that calls the op alone, exported by
torch.export; and up to INT_SAMPLES int64 samples where the op takes them. Floating tensors of the sample are the program's inputs, but for
the ops with weights (WEIGHTED: convolutions, linear, norms, prelu, embedding)
only the first, as in a model whose weights are its parameters; integer and
bool tensors (indices, masks) stay inside as constants. Written:
  OUT/OP.K.pt2              the program (OP with dots as underscores)
  OUT/OP.K.io.safetensors   the inputs ("input.N") and torch's own outputs ("output.N"), integers and bools as such
  OUT/OP.int64.K.pt2        an int64 sample (and its .io.safetensors)
  OUT/index.json            {"samples": [{"file", "op", "sample", "dtype"}], "refused": {"OP.K": reason},
                             "core": [the core ops' base names], "left_out": {OpInfo: why}}
A sample torch.export refuses, or whose outputs are not tensors, is listed in
"refused" with the reason (a fact about torch, not about us).
"""
import json
import os
import re
import sys
import warnings

import torch
import torch.utils._pytree as pytree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_test_models import leaves, write_safetensors  # noqa: E402

SAMPLES = 3
# Integer samples: for each op of SWEEP that takes int64 (OpInfo's dtypes on
# the CPU), up to INT_SAMPLES int64 samples whose first tensor is the input
# (the others stay constants), compared exactly where torch's output is an
# integer. Left out: the ops whose int64 results outgrow 2^24 on OpInfo's
# samples (products and powers of values up to 9), which the XNNPACK backend
# holds as float32; and topk, whose order among equal values (integers tie)
# torch leaves unspecified.
INT_SAMPLES = 2
INT_LEFT_OUT = {"prod", "cumprod", "pow", "topk"}
# OpInfos of core ops not swept: their outputs are not a function of their inputs.
CORE_LEFT_OUT = {
    "empty": "uninitialized memory", "empty_strided": "uninitialized memory", "randn": "random values",
    "new_empty": "uninitialized memory", "new_empty_strided": "uninitialized memory", "empty_like": "uninitialized memory",
    "as_strided.partial_views": "reads the storage past the input's own elements, which a program's input does not carry",
}
SWEEP = [
    # Elementwise math and activations.
    "abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "exp", "expm1", "floor", "log", "log10", "log1p", "log2",
    "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc",
    "acosh", "asinh", "atanh", "isinf", "isnan", "isfinite", "logical_not", "bitwise_not", "nan_to_num",
    "nn.functional.relu", "nn.functional.relu6", "nn.functional.hardtanh", "nn.functional.gelu", "nn.functional.silu",
    "nn.functional.hardswish", "nn.functional.hardsigmoid", "nn.functional.leaky_relu", "nn.functional.elu",
    "nn.functional.mish", "nn.functional.softplus", "nn.functional.prelu", "clamp", "clamp_min", "clamp_max",
    # Binary, comparisons, masks.
    "add", "sub", "mul", "div", "rsub", "pow", "fmod", "remainder", "minimum", "maximum", "atan2", "eq", "ne", "lt", "le",
    "gt", "ge", "logical_and", "logical_or", "where", "masked_fill",
    # Reductions.
    "sum", "mean", "amax", "amin", "max", "min", "any", "all", "prod", "var", "std", "logsumexp", "argmax", "cumsum", "cumprod",
    "linalg.vector_norm", "softmax", "log_softmax", "nn.functional.normalize",
    # Shapes and data movement.
    "view", "reshape", "view_as", "reshape_as", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "t",
    "movedim", "expand", "expand_as", "cat", "stack", "split", "split_with_sizes", "chunk", "unbind", "narrow", "select",
    "repeat", "tile", "repeat_interleave", "roll", "flip", "tril", "triu", "diagonal", "select_scatter", "clone", "contiguous",
    "nn.functional.pad",
    "nn.functional.pixel_shuffle",
    # Indexing.
    "index_select", "gather", "scatter", "index_add", "index_put", "nn.functional.embedding", "topk", "sort", "masked_select",
    "argwhere", "nonzero_static",
    # Makers.
    "arange", "full", "zeros", "ones", "zeros_like", "ones_like", "full_like", "new_zeros", "new_ones",
    # Matrices, convolutions, pooling, norms, resizes, attention.
    "mm", "bmm", "addmm", "matmul", "einsum", "nn.functional.linear",
    "nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.conv3d", "nn.functional.conv_transpose2d",
    "nn.functional.conv_transpose3d", "nn.functional.max_pool1d", "nn.functional.max_pool2d", "nn.functional.max_pool3d",
    "nn.functional.avg_pool1d", "nn.functional.avg_pool2d", "nn.functional.avg_pool3d", "nn.functional.adaptive_avg_pool2d",
    "nn.functional.adaptive_avg_pool3d", "nn.functional.adaptive_max_pool2d", "nn.functional.layer_norm",
    "nn.functional.group_norm", "nn.functional.instance_norm", "nn.functional.batch_norm", "nn.functional.interpolate",
    "nn.functional.grid_sample",
    "nn.functional.scaled_dot_product_attention",
    # What model libraries also call: activations, norms, distances, bags, folds, writes by index.
    "nn.functional.glu", "nn.functional.logsigmoid", "nn.functional.selu", "nn.functional.celu", "nn.functional.softsign",
    "nn.functional.hardshrink", "nn.functional.rms_norm", "nn.functional.pixel_unshuffle", "nn.functional.channel_shuffle",
    "nn.functional.cosine_similarity", "nn.functional.pairwise_distance", "cdist", "nn.functional.pdist", "nn.functional.unfold",
    "nn.functional.embedding_bag", "masked_scatter", "scatter_add", "scatter_reduce", "slice_scatter", "index_copy", "index_fill",
    "lerp", "addcmul", "addcdiv", "baddbmm", "outer", "logit", "erfinv", "frac", "hypot", "argmin", "aminmax", "cummax",
    # Fourier transforms (complex outputs; spectral convolutions, LaMa's fast Fourier convolutions).
    "fft.fft", "fft.ifft", "fft.rfft", "fft.irfft", "fft.fft2", "fft.ifft2", "fft.rfft2", "fft.irfft2", "fft.fftn", "fft.ifftn",
    "fft.rfftn", "fft.irfftn", "fft.hfft", "fft.ihfft",
]


WEIGHTED = {
    "nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.conv3d", "nn.functional.conv_transpose2d",
    "nn.functional.conv_transpose3d", "nn.functional.linear", "nn.functional.layer_norm", "nn.functional.group_norm",
    "nn.functional.instance_norm", "nn.functional.batch_norm", "nn.functional.prelu", "nn.functional.embedding", "addmm",
    "nn.functional.embedding_bag", "nn.functional.rms_norm",
}


class OneOp(torch.nn.Module):
    """op(*args, **kwargs) with the floating tensors among them as the inputs
    (only the first, `first_only`, for an op with weights); for an integer
    sample, its first tensor."""

    def __init__(self, op, args, kwargs, first_only=False, integer=False):
        super().__init__()
        self.op = op
        self.flat, self.spec = pytree.tree_flatten((args, kwargs))
        self.slots = [i for i, leaf in enumerate(self.flat) if isinstance(leaf, torch.Tensor) and leaf.is_floating_point()]
        if integer:
            self.slots = [i for i, leaf in enumerate(self.flat) if isinstance(leaf, torch.Tensor)][:1]
        if first_only:
            self.slots = self.slots[:1]

    def forward(self, *inputs):
        flat = list(self.flat)
        for i, x in zip(self.slots, inputs):
            flat[i] = x
        args, kwargs = pytree.tree_unflatten(flat, self.spec)
        out = self.op(*args, **kwargs)
        # sort, topk, max along a dim return torch.return_types, named tuples
        # torch.export.save has no name for: the same outputs as a tuple.
        return tuple(out) if isinstance(out, tuple) and type(out) is not tuple else out


def file_name(info, k, dtype):
    name = info.name.replace(".", "_") + ("_" + info.variant_test_name if info.variant_test_name else "")
    return f"{name}.{k}" if dtype == torch.float32 else f"{name}.{str(dtype).split('.')[-1]}.{k}"


def make(info, out_dir, index, dtype=torch.float32):
    torch.manual_seed(1234)
    integer = dtype != torch.float32
    samples = list(info.sample_inputs("cpu", dtype, requires_grad=False))
    for k, sample in enumerate(samples[:INT_SAMPLES if integer else SAMPLES]):
        name = file_name(info, k, dtype)
        module = OneOp(info.op, (sample.input, *sample.args), sample.kwargs, first_only=info.name in WEIGHTED, integer=integer)
        inputs = tuple(module.flat[i] for i in module.slots)
        try:
            if not inputs:
                raise ValueError("no floating tensor input" if not integer else "no tensor input")
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outputs = module(*inputs)
                flat = leaves(outputs)
                if not flat or not all(isinstance(t, torch.Tensor) for t in flat):
                    raise ValueError("an output that is not a tensor")
                program = torch.export.export(module, inputs, strict=False)
                torch.export.save(program, os.path.join(out_dir, name + ".pt2"))
        except Exception as e:  # torch's own refusal, kept as the reason
            index["refused"][name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
            continue
        write_safetensors(os.path.join(out_dir, name + ".io.safetensors"),
                          [(f"input.{i}", t.contiguous()) for i, t in enumerate(inputs)] +
                          [(f"output.{i}", t.contiguous()) for i, t in enumerate(flat)], keep_integers=True)
        index["samples"].append({"file": name, "op": info.name + ("." + info.variant_test_name if info.variant_test_name else ""),
                                 "sample": k, "dtype": str(dtype).split(".")[-1]})


def core_ops():
    """The base names of the ops this torch tags `core` in its native_functions.yaml (torchgen's packaged copy)."""
    import torchgen
    path = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml")
    core, func = set(), None
    with open(path) as f:
        for line in f:
            m = re.match(r"- func: (\w+)", line)
            if m:
                func = m.group(1)
                continue
            m = re.match(r"\s+tags: (.*)", line)
            if m and func and re.search(r"\bcore\b", m.group(1)):
                core.add(func)
    return core


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    from torch.testing._internal.common_methods_invocations import op_db
    by_name = {}
    for info in op_db:
        by_name.setdefault(info.name, []).append(info)
    missing = [n for n in SWEEP if n not in by_name]
    if missing:
        sys.exit(f"not in this torch's op_db: {missing}")
    # The core opset drives the sweep: every OpInfo of a core op joins SWEEP's
    # own list, but those whose outputs torch leaves undetermined (CORE_LEFT_OUT).
    core = core_ops()
    sweep = list(SWEEP)
    for info in op_db:
        aten = (info.aten_name or info.name).split(".")[0]
        if aten in core and info.name not in sweep and info.name not in CORE_LEFT_OUT:
            sweep.append(info.name)
    index = {"torch": torch.__version__, "samples": [], "refused": {}, "core": sorted(core), "left_out": CORE_LEFT_OUT}
    for name in sweep:
        for info in by_name[name]:
            if name + ("." + info.variant_test_name if info.variant_test_name else "") in CORE_LEFT_OUT:
                continue
            make(info, out_dir, index)
            if torch.int64 in info.supported_dtypes("cpu") and name not in WEIGHTED and name not in INT_LEFT_OUT:
                make(info, out_dir, index, torch.int64)
    with open(os.path.join(out_dir, "index.json"), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
    print(f"[op sweep] {len(index['samples'])} programs, {len(index['refused'])} samples torch.export refuses, in {out_dir}")


if __name__ == "__main__":
    main()

"""`tracegraph run` as a Python user drives it: NumPy writes the input, the
tool writes the output, NumPy reads it back, and it matches the TorchScript
module's own forward (torch.jit.load in this process) within 1e-4.

usage: run_command_test.py TRACEGRAPH MODELS_DIR EXPORTED_DIR SCRATCH_DIR
"""
import json
import os
import re
import subprocess
import sys
import unittest

import numpy as np
import torch

TOOL, MODELS, EXPORTED, SCRATCH = sys.argv[1:5]
del sys.argv[1:5]
os.makedirs(SCRATCH, exist_ok=True)
XNNPACK = b"xnnpack" in subprocess.run([TOOL, "--help"], capture_output=True).stdout


def scratch(name):
    return os.path.join(SCRATCH, name)


def tool(*args):
    return subprocess.run([TOOL, "run", *args], capture_output=True, text=True)


def relative_error(got, want):
    return float(np.abs(got.astype(np.float64) - want).max() / max(np.abs(want).max(), 1e-12))


SAFETENSORS_DTYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4", "BOOL": "?"}


def read_safetensors(path, metadata=False):
    """{name: array} of a safetensors file (8-byte header length, JSON header, data); with its metadata too."""
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + begin : 8 + n + end], dtype=SAFETENSORS_DTYPES[t["dtype"]]).reshape(t["shape"])
    return (out, header.get("__metadata__", {})) if metadata else out


def forward(model, *inputs):
    return forward_file(os.path.join(MODELS, model), *inputs)


def forward_file(path, *inputs):
    module = torch.jit.load(path).eval()
    with torch.no_grad():
        out = module(*[torch.from_numpy(x) for x in inputs])
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        return [o.numpy() for o in out]
    return [out.numpy()]


class RunCommandTest(unittest.TestCase):
    def test_npy_in_npy_out_matches_the_module_on_each_backend(self):
        x = np.random.default_rng(0).standard_normal((1, 3, 64, 64), dtype=np.float32)
        np.save(scratch("x.npy"), x)
        (want,) = forward("unet2d.ts", x)
        for backend in ["libtorch"] + (["xnnpack"] if XNNPACK else []):
            with self.subTest(backend=backend):
                out = scratch(f"y_{backend}.npy")
                r = tool(os.path.join(MODELS, "unet2d.ts"), "-i", scratch("x.npy"), "-o", out, "--backend", backend, "--threads", "2")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(f"backend     {backend} on cpu", r.stdout)
                shape = ", ".join(map(str, want.shape))
                self.assertRegex(r.stdout, rf"output 0    %\S+: float32\[{shape}\]  ->  none")
                self.assertRegex(r.stdout, r"run         [0-9.]+ ms")
                got = np.load(out)
                self.assertEqual(got.shape, want.shape)
                self.assertEqual(got.dtype, np.float32)
                self.assertLessEqual(relative_error(got, want), 1e-4)

    def test_dump_nodes_holds_every_node_value_and_the_backends_agree_node_by_node(self):
        # The tool reads a model the same way for either backend, so the node names are the same;
        # with either reader of TorchScript.
        for model, shape, reader in [(os.path.join(MODELS, "unet2d.ts"), (1, 3, 64, 64), "libtorch"),
                                     (os.path.join(MODELS, "unet2d.ts"), (1, 3, 64, 64), "core")]:
            x = np.random.default_rng(1).standard_normal(shape, dtype=np.float32)
            np.save(scratch("dump_x.npy"), x)
            dumps = {}
            for backend in ["libtorch"] + (["xnnpack"] if XNNPACK else []):
                with self.subTest(model=os.path.basename(model), reader=reader, backend=backend):
                    dump, y = scratch(f"dump_{backend}.safetensors"), scratch(f"dump_y_{backend}.npy")
                    r = tool(model, "-i", scratch("dump_x.npy"), "-o", y, "--dump-nodes", dump, "--backend", backend, "--reader", reader)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertRegex(r.stdout, r"wrote \S+ \([1-9][0-9]* node values, the inputs and outputs\)")
                    self.assertEqual(len(re.findall(r"^output \d", r.stdout, re.M)), 1, "only the model's own outputs are printed")
                    values, meta = read_safetensors(dump, metadata=True)
                    self.assertEqual(meta["tracegraph"], "node outputs")
                    self.assertEqual(meta["backend"], backend)
                    np.testing.assert_array_equal(values["@input.0"], x)
                    np.testing.assert_array_equal(values["@output.0"], np.load(y))
                    nodes = {k: v for k, v in values.items() if not k.startswith("@")}
                    # The value the output is is one of the nodes'.
                    self.assertTrue(any(v.shape == values["@output.0"].shape and np.array_equal(v, values["@output.0"]) for v in nodes.values()))
                    dumps[backend] = nodes
            if len(dumps) == 2:
                a, b = dumps["libtorch"], dumps["xnnpack"]
                self.assertEqual(sorted(a), sorted(b))
                for k in a:
                    self.assertEqual(a[k].shape, b[k].shape, k)
                    if a[k].dtype.kind == "f":
                        self.assertLess(relative_error(b[k], a[k].astype(np.float64)), 1e-3, k)

    def test_several_outputs_by_name_into_safetensors_and_one_npy_each(self):
        x = np.random.default_rng(1).standard_normal((1, 1, 28, 28, 28), dtype=np.float32)
        np.save(scratch("x3.npy"), x)
        want = forward("unet3d_dict_out.ts", x)
        model = os.path.join(MODELS, "unet3d_dict_out.ts")
        outs = [scratch("mask.npy"), scratch("affinities.npy")]
        r = tool(model, "-i", scratch("x3.npy"), "-o", outs[0], "-o", outs[1])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("->  sigmoid", r.stdout)
        self.assertIn("->  tanh", r.stdout)
        for path, w in zip(outs, want):
            self.assertLessEqual(relative_error(np.load(path), w), 1e-4)
        r = tool(model, "-i", scratch("x3.npy"), "-o", scratch("all.safetensors"))
        self.assertEqual(r.returncode, 0, r.stderr)
        got = list(read_safetensors(scratch("all.safetensors")).values())
        self.assertEqual(len(got), 2)
        # Match the outputs by shape (their names are TorchScript's value names).
        for w in want:
            (g,) = [g for g in got if g.shape == w.shape]
            self.assertLessEqual(relative_error(g, w), 1e-4)
        # One .npy for two outputs is refused before the run, naming both counts.
        r = tool(model, "-i", scratch("x3.npy"), "-o", scratch("one.npy"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("invalid_argument: the model has 2 outputs and 1 -o .npy files", r.stderr)
        self.assertFalse(os.path.exists(scratch("one.npy")))

    def test_an_exported_graph_with_a_named_input(self):
        model = os.path.join(EXPORTED, "unet2d", "unet2d.json")
        x = np.random.default_rng(2).standard_normal((1, 3, 64, 64), dtype=np.float32)
        np.save(scratch("x2.npy"), x)
        (want,) = forward("unet2d.ts", x)
        listing = subprocess.run([TOOL, "inspect", model], capture_output=True, text=True).stdout
        name = listing.split("\ninputs\n")[1].split("\n")[0].strip().split(":")[0].lstrip("%")
        r = tool(model, "-i", f"{name}={scratch('x2.npy')}", "-o", scratch("y2.npy"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLessEqual(relative_error(np.load(scratch("y2.npy")), want), 1e-4)
        r = tool(model, "-i", f"nope={scratch('x2.npy')}")
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"not_found: {scratch('x2.npy')}: {model} has no input 'nope' (its inputs: {name})", r.stderr)

    def test_bad_input_files_are_typed_errors(self):
        model = os.path.join(MODELS, "unet2d.ts")
        with open(scratch("bad.npy"), "wb") as f:
            f.write(b"\x93NUMPY\x01\x00\xff\xff{'descr'")
        r = tool(model, "-i", scratch("bad.npy"))
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"truncated: {scratch('bad.npy')}: the header of 65535 bytes at byte 10 runs past the end", r.stderr)
        np.save(scratch("big_endian.npy"), np.zeros((2,), dtype=">f4"))
        r = tool(model, "-i", scratch("big_endian.npy"))
        self.assertIn("unsupported: ", r.stderr)
        self.assertIn("element type '>f4'", r.stderr)
        r = tool(model, "-i", scratch("missing.npy"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("io: ", r.stderr)
        r = tool(model, "--random", "1,3,32,32", "--backend", "tpu")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--backend 'tpu'", r.stderr)

    def test_random_inputs_for_a_quick_try(self):
        r = tool(os.path.join(MODELS, "unet3d_sigmoid_traced.ts"), "--random", "1,1,44,44,44")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("input  0", r.stdout)
        self.assertIn("->  sigmoid", r.stdout)

    def test_token_ids_are_int64_where_the_shape_says_so(self):
        # A scripted text encoder's token ids: forward's int64 input named by
        # --input-shape int64:... and --random int64:... (float32 inputs would
        # not index its embedding).
        class Encoder(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = torch.nn.Embedding(10, 6)
                self.proj = torch.nn.Linear(6, 3)

            def forward(self, ids):
                return torch.tanh(self.proj(self.embed(ids))).mean(1)

        torch.manual_seed(0)
        path = scratch("token_encoder.ts")
        torch.jit.script(Encoder().eval()).save(path)
        inspect = subprocess.run([TOOL, "inspect", path, "--input-shape", "int64:2,7"], capture_output=True, text=True)
        self.assertEqual(inspect.returncode, 0, inspect.stderr)
        self.assertIn("int64[2, 7]", inspect.stdout)
        self.assertIn("float32[2, 3]", inspect.stdout)
        ids = np.array([[1, 2, 3, 4, 5, 6, 7], [9, 8, 0, 0, 1, 1, 2]], dtype=np.int64)
        np.save(scratch("ids.npy"), ids)
        (want,) = forward_file(path, ids)
        for backend in ["libtorch"] + (["xnnpack"] if XNNPACK else []):
            with self.subTest(backend=backend):
                r = tool(path, "-i", scratch("ids.npy"), "-o", scratch(f"enc_{backend}.npy"), "--backend", backend)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertLess(relative_error(np.load(scratch(f"enc_{backend}.npy")), want), 1e-4)
        r = tool(path, "--random", "int64:2,7")
        self.assertEqual(r.returncode, 0, r.stderr)
        bad = subprocess.run([TOOL, "inspect", path, "--input-shape", "tokens:2,7"], capture_output=True, text=True)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--input-shape 'tokens:2,7': 'tokens' is not a dtype", bad.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)

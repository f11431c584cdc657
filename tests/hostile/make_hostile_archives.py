#!/usr/bin/env python3
"""Makes hostile model files (issue 50): the cases of the issue's table and
their kin, and variants of real archives, deterministic from a seed.

    make_hostile_archives.py --out DIR [--seed N] [--variants K] [--max-bytes B]
                             [--real FILE]... [--fuzz-seeds]

Writes DIR/<kind>/<case>.<ext> and DIR/manifest.json. A kind is the reader a
file is meant for:

    torchscript  TorchScript archives (.pt): bombs in data.pkl and in a
                 weight entry, hostile pickles, deep, long and exponential code
    pt2          torch.export archives (.pt2): bombs, deep and huge model.json
    zip          zip structure itself: overlapping entries, local headers that
                 disagree with the directory, end records past the end,
                 70,000 entries, zip64 sizes (as .pt files)
    pickle       raw pickles (the unpickler's fuzz seeds)
    npy          .npy inputs with bad headers (run as a valid model's input)
    json         exported graphs (.json) and tree specs, with safetensors beside
    safetensors  safetensors weights with bad headers
    inflate      raw DEFLATE streams behind fuzz_inflate's 4-byte header

Every real file given (--real; tests/data/valid by default) is also truncated
at several offsets and mutated --variants times: bytes flipped, a header
field overwritten, and, for archives, one entry's content mutated and the
archive rebuilt with a right CRC, so that the change reaches the reader
inside rather than stopping at the zip's checks.

The manifest lists each file that names a model (or a model's input) with
the command that reads it: ["inspect"] or ["run", "--random", SHAPE] on the
file itself, or ["run", MODEL, "-i"] with the file as the input. A case may
name the error code it must end in ("expect"); "variant" marks the
truncations and mutants of real files (a test may take a sample of them).

Only the standard library: the fuzz preset's ctest runs it with the system
Python. With --fuzz-seeds no file is over --max-bytes (libFuzzer's inputs);
without it the cases are full size (the 4 GiB bomb, 70,000 entries, the 50 MB
target), for the CLI and JS tests.

Why a Python generator beside tests/sdk/formats/zip_builder.h and
tests/sdk/formats/torchscript/archive_builder.h: those build one case per
GoogleTest test inside the C++ process and assert the exact error; this one
writes files, many variants of each, for the processes that read files (the
CLI under a memory and time limit, the JS API in Node) and for the fuzzers'
corpora.
"""
import argparse
import hashlib
import json
import os
import random
import struct
import sys
import zipfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VALID = os.path.join(ROOT, "tests", "data", "valid")

# ---- a zip writer with every field in the caller's hands ----


def deflate(data, level=9):
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def deflate_zeros(size):
    """A raw DEFLATE stream of `size` zero bytes, made directly: one dynamic
    block whose length-258 code and distance-1 code are one bit each, so the
    body is 2 bits per 258 bytes, all zero (DEFLATE's best ratio, about
    1032:1): 4 GiB in 4 MB, made in milliseconds."""
    out = bytearray()
    acc = 0
    n = 0

    def bits(value, count):  # a header field: least significant bit first
        nonlocal acc, n
        for i in range(count):
            acc |= ((value >> i) & 1) << n
            n += 1
            if n == 8:
                out.append(acc)
                acc = n = 0

    def code(value, count):  # a Huffman code: most significant bit first
        for i in range(count - 1, -1, -1):
            bits((value >> i) & 1, 1)

    bits(1, 1)   # the last block
    bits(2, 2)   # dynamic Huffman
    bits(29, 5)  # 286 literal/length codes
    bits(0, 5)   # 1 distance code
    bits(14, 4)  # 18 code-length codes
    order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1]
    cl = {18: 1, 1: 2, 2: 2}  # canonical: 18 -> 0, 1 -> 10, 2 -> 11
    for s in order:
        bits(cl.get(s, 0), 3)
    code(0b11, 2)                 # literal 0: length 2
    code(0b0, 1); bits(127, 7)    # 138 zeros
    code(0b0, 1); bits(106, 7)    # 117 zeros (literals 1..255)
    code(0b11, 2)                 # 256 (end): length 2
    code(0b0, 1); bits(17, 7)     # 28 zeros (257..284)
    code(0b10, 2)                 # 285 (length 258): length 1
    code(0b10, 2)                 # distance 0 (1 back): length 1
    # Codes: 285 -> 0, literal 0 -> 10, end -> 11; distance 0 -> 0.
    if size == 0:
        code(0b11, 2)
    else:
        code(0b10, 2)  # the first zero byte
        matches, rest = divmod(size - 1, 258)
        zeros = 2 * matches
        while zeros and n:
            bits(0, 1)
            zeros -= 1
        out += bytes(zeros // 8)
        for _ in range(zeros % 8):
            bits(0, 1)
        for _ in range(rest):
            code(0b10, 2)
        code(0b11, 2)
    if n:
        out.append(acc)
    return bytes(out)


class Entry:
    def __init__(self, name, data=b"", method=0, stream=None, size=None, crc=None):
        self.name = name.encode() if isinstance(name, str) else name
        self.data = data
        self.method = method
        # What is written after the local header (the data, or a deflated stream).
        if stream is None:
            stream = deflate(data) if method == 8 else data
        self.stream = stream
        self.size = len(data) if size is None else size
        self.crc = zlib.crc32(data) & 0xFFFFFFFF if crc is None else crc
        # Overrides for the local header and the directory record alone.
        self.local = {}
        self.central = {}
        self.offset = None


def local_header(e):
    f = dict(name=e.name, method=e.method, crc=e.crc, csize=len(e.stream), size=e.size, flags=0)
    f.update(e.local)
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, f["flags"], f["method"], 0, 0, f["crc"],
                       f["csize"] & 0xFFFFFFFF, f["size"] & 0xFFFFFFFF, len(f["name"]), 0) + f["name"]


def central_record(e):
    f = dict(name=e.name, method=e.method, crc=e.crc, csize=len(e.stream), size=e.size, offset=e.offset, flags=0)
    f.update(e.central)
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, f["flags"], f["method"], 0, 0, f["crc"],
                       f["csize"] & 0xFFFFFFFF, f["size"] & 0xFFFFFFFF, len(f["name"]), 0, 0, 0, 0, 0,
                       f["offset"] & 0xFFFFFFFF) + f["name"]


def zip_bytes(entries, records=None, end=None):
    """The archive: local headers and data in order, then the directory
    (`records`, entries by default: a list may repeat or leave out one), then
    the end record, whose fields `end` overrides."""
    out = bytearray()
    for e in entries:
        e.offset = len(out)
        out += local_header(e) + e.stream
    records = entries if records is None else records
    cd_offset = len(out)
    for e in records:
        out += central_record(e)
    f = dict(count=len(records), cd_size=len(out) - cd_offset, cd_offset=cd_offset, comment=b"")
    f.update(end or {})
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, f["count"] & 0xFFFF, f["count"] & 0xFFFF,
                       f["cd_size"] & 0xFFFFFFFF, f["cd_offset"] & 0xFFFFFFFF, len(f["comment"])) + f["comment"]
    return bytes(out)


def read_entries(path):
    """A real archive's entries, in order: (name, bytes)."""
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


def rebuild(entries, deflated=()):
    """A real archive's entries written back (stored, as torch writes them;
    the names in `deflated` deflated)."""
    return zip_bytes([Entry(n, d, 8 if n in deflated else 0) for n, d in entries])


def root_of(entries):
    return entries[0][0].split("/", 1)[0] + "/"


def find(entries, suffix):
    for n, _ in entries:
        if n.endswith(suffix):
            return n
    raise KeyError(suffix)


def replaced(entries, name, data):
    return [(n, data if n == name else d) for n, d in entries]


# ---- the cases ----

# A scripted module whose class body after its attributes is `methods`
# (written for a class M, as tests/js/hostile.test.mjs has it): a real
# TorchScript file's top-level code entry rewritten (its class head kept, its
# debug_pkl dropped), so that LibTorch's loader reads what the core's screen
# lets through, as tests/native/torchscript_hostile_test.cpp does.
TEMPLATE = os.path.join(VALID, "sigmoid_then_pool.ts")
DATA_PKL = b"\x80\x02c__torch__\nM\n)\x81}b."
FORWARD = "  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n"


def scripted(methods, data_pkl=None, deflate_code=False):
    entries = read_entries(TEMPLATE)
    root = root_of(entries)
    code_name = root + "code/__torch__.py"
    text = dict(entries)[code_name].decode()
    head = text[:text.index("  def forward")]
    cls = head.split("class ", 1)[1].split("(", 1)[0]
    code = (head + methods.replace("__torch__.M", "__torch__." + cls)).encode()
    out = []
    for n, d in entries:
        if n == code_name + ".debug_pkl":
            continue
        if n == code_name:
            out.append(Entry(n, code, 8 if deflate_code else 0))
        elif n == root + "data.pkl" and data_pkl is not None:
            out.append(Entry(n, data_pkl))
        else:
            out.append(Entry(n, d))
    return zip_bytes(out)


def returning(expr, **kw):
    return scripted(FORWARD + "    return " + expr + "\n", **kw)


def doubling_calls(levels):
    code = FORWARD + "    return (self).f0(x, )\n"
    for k in range(levels - 1):
        code += (f"  def f{k}(self: __torch__.M,\n    x: Tensor) -> Tensor:\n"
                 f"    _0 = (self).f{k + 1}(x, )\n    return (self).f{k + 1}(_0, )\n")
    code += f"  def f{levels - 1}(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    return torch.relu(x)\n"
    return scripted(code)


def loop(trips, nested=1):
    body = FORWARD + "    x0 = x\n"
    indent = "    "
    for k in range(nested):
        body += f"{indent}for _{k} in range({trips}):\n"
        indent += "  "
    body += f"{indent}x0 = torch.relu(x0)\n    return x0\n"
    return scripted(body)


class Cases:
    """Collects (kind, name, bytes, command, expect) and writes them."""

    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.items = []
        self.skipped = []
        # The biggest a case may be; bombs and chains are sized to it.
        self.big = args.max_bytes if args.fuzz_seeds else None

    def add(self, kind, name, data, command=("inspect",), expect=None, ext=None, variant=False):
        if kind in ("pickle", "safetensors", "inflate"):
            command = None  # not a model: a fuzz seed (or a graph's weights)
        if self.args.fuzz_seeds and len(data) > self.args.max_bytes:
            self.skipped.append(f"{kind}/{name} ({len(data)} bytes)")
            return
        ext = ext or {"torchscript": ".pt", "zip": ".pt", "pt2": ".pt2", "pickle": ".pkl", "npy": ".npy",
                      "json": ".json", "safetensors": ".safetensors", "inflate": ".deflate"}[kind]
        self.items.append(dict(kind=kind, name=name + ext, data=data, command=None if command is None else list(command), expect=expect,
                               variant=variant))

    def bomb_size(self, full):
        """An inflated size for a bomb: `full`, or what fits --max-bytes of
        DEFLATE (a little under 1032:1)."""
        return full if self.big is None else min(full, (self.big - 4096) * 1000)


def code_cases(c):
    big = c.big
    # The table: deep parentheses, 100,000-long postfix chains.
    c.add("torchscript", "parentheses_10000", returning("(" * 10000 + "x" + ")" * 10000), expect="limit_exceeded")
    c.add("torchscript", "index_chain_100000", returning("x" + "[0]" * 100000), expect="limit_exceeded")
    c.add("torchscript", "attribute_chain_100000", returning("x" + ".T" * 100000), expect="limit_exceeded")
    c.add("torchscript", "call_chain_10000", returning("torch.relu(" * 10000 + "x" + ")" * 10000), expect="limit_exceeded")
    c.add("torchscript", "brackets_10000", returning("[" * 10000 + "x" + "]" * 10000), expect="limit_exceeded")
    c.add("torchscript", "unary_minus_100000", returning("-" * 100000 + "x"), expect="limit_exceeded")
    # Operators the core's reader does not read (a parse or unsupported error
    # there) and LibTorch's parser recurses on (the screen's limit_exceeded).
    c.add("torchscript", "unary_tilde_100000", returning("~" * 100000 + "x"))
    c.add("torchscript", "not_chain_50000", returning("not " * 50000 + "x"))
    c.add("torchscript", "power_chain_50000", returning("x" + " ** x" * 50000))
    c.add("torchscript", "ternary_chain_30000", returning("x" + " if x else x" * 30000))
    c.add("torchscript", "sum_10000", returning("x" + " + x" * 10000))
    c.add("torchscript", "minus_minus_chain_50000", returning("x" + " - -x" * 50000), expect=None)
    c.add("torchscript", "parentheses_unclosed", returning("(" * 5000 + "x"), expect=None)
    # Exponential inlining: 40 levels each calling the next twice (2^40).
    c.add("torchscript", "doubling_calls_40", doubling_calls(40), expect="limit_exceeded")
    c.add("torchscript", "doubling_calls_17", doubling_calls(17), expect="limit_exceeded")
    c.add("torchscript", "recursion", scripted(FORWARD + "    return (self).forward(x, )\n"), expect=None)
    # Loops: one of 65,535 trips, two nested of 1,000, one past the per-loop cap.
    c.add("torchscript", "range_65535", loop(65535), expect=None)
    c.add("torchscript", "range_1000_nested_2", loop(1000, 2), expect=None)
    c.add("torchscript", "range_100_nested_4", loop(100, 4), expect=None)
    c.add("torchscript", "range_70000", loop(70000), expect=None)  # the core: max_trips_per_loop; LibTorch keeps the loop
    c.add("torchscript", "range_2_63", loop(2 ** 63 - 1), expect=None)
    # A 10 MB line holding one list literal, deflated and stored.
    n = (10 << 20) if big is None else big * 4
    line = "[1" + ", 1" * (n // 3) + "]"
    c.add("torchscript", "long_line_list_deflated", scripted(FORWARD + f"    _0 = {line}\n    return x\n", deflate_code=True))
    if big is None:
        c.add("torchscript", "long_line_list_stored", scripted(FORWARD + f"    _0 = {line}\n    return x\n"))
    # A 50 MB node target (deflated), and one 2 MB stored.
    n = (50 << 20) if big is None else big * 8
    c.add("torchscript", "huge_target_deflated", returning("torch." + "f" * n + "(x)", deflate_code=True))
    c.add("torchscript", "huge_target_stored", returning("torch." + "f" * ((2 << 20) if big is None else big // 2) + "(x)"))
    c.add("torchscript", "huge_string", returning("torch.add(x, \"" + "s" * ((1 << 20) if big is None else big // 2) + "\")"))
    c.add("torchscript", "unterminated_string", returning("\"" + "s" * 1000))
    c.add("torchscript", "many_statements", scripted(FORWARD + "    x0 = torch.relu(x)\n" * 200000 + "    return x\n",
                                                          deflate_code=True))
    c.add("torchscript", "many_methods", scripted(FORWARD + "    return x\n" + "".join(
        f"  def g{k}(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    return x\n" for k in range(20000)), deflate_code=True))
    c.add("torchscript", "deep_indentation", scripted(FORWARD + "".join(
        " " * (4 + 2 * k) + "if True:\n" for k in range(3000)) + " " * 6004 + "x = x\n    return x\n", deflate_code=True))
    c.add("torchscript", "nul_and_high_bytes", returning("x\x00\xff\xfe"))
    c.add("torchscript", "tabs_and_cr", scripted(FORWARD.replace("\n", "\r\n") + "\treturn x\r\n"))
    c.add("torchscript", "valid_rewritten", returning("torch.sigmoid(x)"), command=("run", "--random", "1,3,16,16"))
    c.add("torchscript", "custom_op", returning("ops.torchvision.nms(x, x, 0.5)"), expect="unsupported")
    c.add("torchscript", "unknown_class", scripted(FORWARD + "    return x\n", data_pkl=b"\x80\x02c__torch__\nNope\n)\x81}b."))


def pickle_cases(c):
    """Pickles: raw (kind pickle) and as a TorchScript archive's data.pkl."""
    P = b"\x80\x02"
    raw = {
        "binunicode_4g": P + b"X\xff\xff\xff\xffabc.",
        "binunicode8_huge": b"\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7fabc.",
        "binbytes_past_end": b"\x80\x03B\x00\x00\x10\x00abc.",
        "binbytes8_past_end": b"\x80\x04\x8e\x00\x00\x00\x00\x01\x00\x00\x00abc.",
        "short_binbytes_past_end": b"\x80\x03C\xffab.",
        "binstring_negative": P + b"T\xff\xff\xff\xffab.",
        "long4_huge": P + b"\x8b\xff\xff\xff\x7f\x00.",
        "frame_huge": b"\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\xff.",
        "get_missing_memo": P + b"h\x07.",
        "long_binget_missing": P + b"j\xff\xff\xff\xff.",
        "put_huge_index": P + b"N" + b"r\xff\xff\xff\x7f.",
        "stop_on_empty_stack": P + b".",
        "pop_mark_without_mark": P + b"1.",
        "tuple3_short_stack": P + b"N\x87.",
        "setitems_odd": P + b"}(Nu.",
        "reduce_non_callable": P + b"K\x01)R.",
        "global_unterminated": P + b"ctorch\nFloatStor",
        "persid_unknown_storage": P + b"((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x009X\x03\x00\x00\x00cpu"
                                      b"J\xff\xff\xff\x7ftQ.",
        "rebuild_tensor_huge_shape": P + b"ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
                                         b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQK\x00(J\xff\xff\xff\x7fJ\xff\xff\xff\x7f"
                                         b"J\xff\xff\xff\x7ft(K\x01K\x01K\x01t\x89ccollections\nOrderedDict\n)RtR.",
        "rebuild_tensor_negative_offset": P + b"ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
                                              b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQJ\xff\xff\xff\xff(K\x04t(K\x01t"
                                              b"\x89ccollections\nOrderedDict\n)RtR.",
        "no_stop": P + b"N",
        "empty": b"",
    }
    # Deep: 100,000 nested lists, tuples by MARK, dicts; huge: 20 million
    # opcodes (past max_pickle_ops), one list of a million items.
    raw["deep_lists_100000"] = P + b"]" * 100000 + b"a" * 99999 + b"."
    raw["deep_marks_100000"] = P + b"(" * 100000 + b"t" * 100000 + b"."
    raw["deep_dicts_50000"] = P + b"}" * 50000 + b"N" + b"s" * 0 + b"."
    raw["self_append_cycle"] = P + b"]q\x00h\x00a" * 1000 + b"."
    raw["memo_dup_1e5"] = P + b"]q\x00" + b"h\x00" * 100000 + b"(" + b"h\x00" * 1000 + b"e."
    huge_ops = 20_000_000 if c.big is None else c.big // 2
    raw["none_pop_many"] = P + b"N0" * (huge_ops // 2) + b"N."
    raw["list_1e6"] = P + b"](" + b"K\x01" * (1_000_000 if c.big is None else c.big // 4) + b"e."
    for name, data in raw.items():
        c.add("pickle", name, data)
    # The same as a TorchScript archive's data.pkl (stored) and constants.pkl.
    for name in ["binunicode_4g", "binbytes_past_end", "binunicode8_huge", "deep_lists_100000", "deep_marks_100000",
                 "none_pop_many", "rebuild_tensor_huge_shape", "get_missing_memo", "frame_huge", "self_append_cycle"]:
        c.add("torchscript", "data_pkl_" + name, scripted(FORWARD + "    return x\n", data_pkl=raw[name]))
    c.add("torchscript", "constants_pkl_binunicode_4g", zip_bytes(
        [Entry(n, raw["binunicode_4g"] if n.endswith("/constants.pkl") else d) for n, d in read_entries(TEMPLATE)]))
    # A deflated data.pkl bomb: 300 MB of 'x' (past max_document_bytes, 256 MB).
    size = c.bomb_size(300 << 20)
    stream = deflate_zeros(size)
    template = read_entries(TEMPLATE)
    c.add("torchscript", "data_pkl_bomb_deflated", zip_bytes(
        [Entry(n, method=8, stream=stream, size=size, crc=0) if n.endswith("/data.pkl") else Entry(n, d) for n, d in template]))
    # A stored data.pkl whose header claims 4 GiB: runs past the end.
    es = [Entry(n, d) for n, d in template]
    e = next(e for e in es if e.name.endswith(b"/data.pkl"))
    e.size = 0xFFFFFFFE
    e.local["csize"] = e.central["csize"] = 0xFFFFFFFE
    c.add("torchscript", "data_pkl_bomb_stored", zip_bytes(es))


def weight_bombs(c, real):
    """A real TorchScript file's first weight entry replaced by a bomb: 4 GiB
    deflated (the tensor needs a few hundred bytes), stored with sizes that
    claim 4 GiB, and the same entry listed twice."""
    entries = read_entries(real)
    stem = os.path.basename(real).rsplit(".", 1)[0]
    weight = find(entries, "/data/0")
    size = c.bomb_size(0xFFFFFFFE)
    stream = deflate_zeros(size)
    out = [Entry(n, d) for n, d in entries if n != weight]
    c.add("torchscript", f"{stem}_weight_bomb_deflated",
          zip_bytes([Entry(weight, method=8, stream=stream, size=size, crc=0)] + out), command=run_command(real))
    e = Entry(weight, dict(entries)[weight])
    e.size = 0xFFFFFFFE
    e.local["csize"] = e.central["csize"] = 0xFFFFFFFE
    c.add("torchscript", f"{stem}_weight_bomb_stored", zip_bytes([e] + out), command=run_command(real))
    # The weight's directory record listed again under each name the reader
    # could ask for: one deflated stream read many times.
    small = Entry(weight, method=8, stream=deflate_zeros(min(size, 64 << 20)), size=min(size, 64 << 20), crc=0)
    entries2 = [small] + out
    records = list(entries2)
    for k in range(1, 8):
        alias = Entry(f"{weight}_alias{k}", method=8, stream=small.stream, size=small.size, crc=0)
        records.append(alias)
    data = zip_bytes(entries2, records=entries2)
    # Point the aliases at the bomb's local header: same bytes, many names.
    for a in records[len(entries2):]:
        a.offset = 0
    cd = b"".join(central_record(e) for e in records)
    cd_offset = entries2[-1].offset + len(local_header(entries2[-1])) + len(entries2[-1].stream)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(records), len(records), len(cd), cd_offset, 0)
    # (The core's reader refuses them at the first alias, whose local header names the weight.)
    c.add("torchscript", f"{stem}_weight_aliases", data[:cd_offset] + cd + end, command=run_command(real))


def zip_structure_cases(c, real):
    entries = read_entries(real)
    stem = os.path.basename(real).rsplit(".", 1)[0]
    def fresh():
        return [Entry(n, d) for n, d in entries]

    # Overlap: an entry whose data holds the next entry's local header.
    es = fresh()
    data = zip_bytes(es)
    records = list(es)
    twin = Entry(es[1].name + b"_twin", es[1].data)
    records.append(twin)
    cd = bytearray()
    for e in es:
        cd += central_record(e)
    twin.offset = es[1].offset
    cd += central_record(twin)
    cd_offset = es[-1].offset + len(local_header(es[-1])) + len(es[-1].stream)
    c.add("zip", f"{stem}_two_records_one_header", data[:cd_offset] + bytes(cd) +
          struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(records), len(records), len(cd), cd_offset, 0))
    es = fresh()
    es[0].central["csize"] = len(es[0].stream) + 64  # runs into the next local header
    es[0].local["csize"] = len(es[0].stream) + 64
    c.add("zip", f"{stem}_entry_runs_into_next", zip_bytes(es))
    # Local header disagreeing with the directory: name, sizes, method, CRC.
    for field, value in [("name", b"other/name"), ("size", 12345), ("csize", 1), ("method", 8), ("crc", 0xDEADBEEF),
                         ("flags", 1)]:
        es = fresh()
        k = 1 if len(es) > 1 else 0
        es[k].local[field] = value
        c.add("zip", f"{stem}_local_{field}_disagrees", zip_bytes(es))
    # The directory's record disagreeing (CRC, method 12, encryption).
    for field, value in [("crc", 0), ("method", 12), ("flags", 1), ("offset", 0xFFFFFFF0)]:
        es = fresh()
        es[-1].central[field] = value
        c.add("zip", f"{stem}_central_{field}", zip_bytes(es))
    # End records: the directory past the end, its size past the end, a count
    # of 70,000 (and 65,535), a comment longer than what is left.
    data = zip_bytes(fresh())
    eocd = data.rindex(b"PK\x05\x06")

    def with_end(**f):
        count = f.get("count", len(entries))
        cd_size = f.get("cd_size", struct.unpack_from("<I", data, eocd + 12)[0])
        cd_offset = f.get("cd_offset", struct.unpack_from("<I", data, eocd + 16)[0])
        return data[:eocd] + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count & 0xFFFF, count & 0xFFFF, cd_size, cd_offset,
                                         f.get("comment_len", 0))

    c.add("zip", f"{stem}_directory_past_end", with_end(cd_offset=len(data) * 4), expect="truncated")
    c.add("zip", f"{stem}_directory_size_past_end", with_end(cd_size=0xFFFFFFF0))
    c.add("zip", f"{stem}_count_65535", with_end(count=65535))
    c.add("zip", f"{stem}_count_zero", with_end(count=0))
    c.add("zip", f"{stem}_comment_past_end", with_end(comment_len=0xFFFF))
    c.add("zip", f"{stem}_no_end_record", data[:eocd])
    c.add("zip", f"{stem}_two_end_records", data + data[eocd:])
    # zip64: the end record says 0xffff and 0xffffffff, the zip64 records claim
    # 2^40 entries and a directory past the end.
    z64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, 1 << 40, 1 << 40, 1 << 50, 1 << 60)
    loc = struct.pack("<IIQI", 0x07064B50, 0, eocd, 1)
    end64 = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    c.add("zip", f"{stem}_zip64_huge", data[:eocd] + z64 + loc + end64)
    loc_bad = struct.pack("<IIQI", 0x07064B50, 0, 1 << 62, 1)
    c.add("zip", f"{stem}_zip64_locator_past_end", data[:eocd] + loc_bad + end64)
    # Duplicate names, names with '..' and NUL.
    es = fresh()
    c.add("zip", f"{stem}_duplicate_name", zip_bytes(es + [Entry(es[0].name.decode(), es[0].data)]), expect="duplicate_name")
    es = fresh()
    es[0].name = es[0].name.replace(b"/", b"/../", 1)
    c.add("zip", f"{stem}_dotdot_name", zip_bytes(es))
    es = fresh()
    es[0].name = es[0].name + b"\x00hidden"
    c.add("zip", f"{stem}_nul_in_name", zip_bytes(es))
    # Every entry deflated: a real archive as a zip tool remakes it.
    c.add("zip", f"{stem}_all_deflated", rebuild(entries, deflated={n for n, _ in entries}), expect=None,
          command=run_command(real) if real.endswith(".ts") else ("inspect",))


def many_entries(c, count):
    """70,000 entries (past max_archive_entries, 65,536): the count in a
    zip64 end record, as a writer must put it past 65,535."""
    es = [Entry(f"m/e{k}", b"") for k in range(count)]
    data = zip_bytes(es)
    eocd = data.rindex(b"PK\x05\x06")
    cd_offset, cd_size = struct.unpack_from("<I", data, eocd + 16)[0], struct.unpack_from("<I", data, eocd + 12)[0]
    z64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, cd_size, cd_offset)
    loc = struct.pack("<IIQI", 0x07064B50, 0, eocd, 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return data[:eocd] + z64 + loc + end


def pt2_cases(c, real):
    entries = read_entries(real)
    stem = os.path.basename(real).rsplit(".", 1)[0]
    root = root_of(entries)
    model = find(entries, "/models/model.json")
    doc = json.loads(dict(entries)[model])
    weight = next((n for n, _ in entries if "/data/weights/weight_" in n), None)
    if weight:
        size = c.bomb_size(0xFFFFFFFE)
        others = [Entry(n, d) for n, d in entries if n != weight]
        c.add("pt2", f"{stem}_weight_bomb_deflated",
              zip_bytes([Entry(weight, method=8, stream=deflate_zeros(size), size=size, crc=0)] + others))
        c.add("pt2", f"{stem}_weight_short", zip_bytes([Entry(weight, dict(entries)[weight][:3])] + others), expect="out_of_range")
    size = c.bomb_size(300 << 20)
    others = [Entry(n, d) for n, d in entries if n != model]
    c.add("pt2", f"{stem}_model_json_bomb", zip_bytes(
        [Entry(model, method=8, stream=deflate_zeros(size), size=size, crc=0)] + others), expect="limit_exceeded")
    # Deep JSON, a huge node target, a node count past max_nodes.
    c.add("pt2", f"{stem}_model_json_deep", rebuild(replaced(entries, model, b"[" * 200000 + b"]" * 200000)), expect="limit_exceeded")
    c.add("pt2", f"{stem}_model_json_deep_objects", rebuild(replaced(entries, model, b'{"a":' * 100000 + b"1" + b"}" * 100000)),
          expect="limit_exceeded")
    n = (50 << 20) if c.big is None else c.big * 8
    hostile = json.loads(json.dumps(doc))
    nodes = hostile["graph_module"]["graph"]["nodes"]
    if nodes:
        nodes[0]["target"] = "torch.ops.aten." + "f" * n + ".default"
    c.add("pt2", f"{stem}_huge_target", rebuild(replaced(entries, model, json.dumps(hostile).encode()), deflated={model}))
    hostile = json.loads(json.dumps(doc))
    nodes = hostile["graph_module"]["graph"]["nodes"]
    if nodes:
        count = 300000 if c.big is None else 2000
        hostile["graph_module"]["graph"]["nodes"] = [nodes[0]] * count
    c.add("pt2", f"{stem}_repeated_nodes", rebuild(replaced(entries, model, json.dumps(hostile).encode()), deflated={model}))
    for name, text in [("numbers", b'{"graph_module": {"graph": {"nodes": [], "inputs": [1e999], "outputs": [-0]}}}'),
                       ("not_json", b"\xff\xfe{"), ("empty", b""), ("nul", b'{"a\x00": 1}'),
                       ("surrogates", b'{"\\ud800\\udc00\\ud800": "\\u0000"}')]:
        c.add("pt2", f"{stem}_model_json_{name}", rebuild(replaced(entries, model, text)))
    cfg = next((n for n, _ in entries if n.endswith("model_weights_config.json")), None)
    if cfg:
        wc = json.loads(dict(entries)[cfg])
        for key, meta in list(wc.get("config", {}).items())[:1]:
            for field, value in [("sizes", [{"as_int": 2 ** 62}, {"as_int": 2 ** 62}]), ("storage_offset", {"as_int": -1}),
                                 ("strides", [{"as_int": -5}]), ("dtype", 9999), ("sizes", [{"as_int": -1}])]:
                w = json.loads(json.dumps(wc))
                w["config"][key]["tensor_meta"][field] = value
                c.add("pt2", f"{stem}_weight_{field}_{abs(hash(json.dumps(value))) % 1000:03d}",
                      rebuild(replaced(entries, cfg, json.dumps(w).encode())))
            w = json.loads(json.dumps(wc))
            w["config"][key]["path_name"] = "../../" + w["config"][key]["path_name"]
            c.add("pt2", f"{stem}_weight_path_outside", rebuild(replaced(entries, cfg, json.dumps(w).encode())))
    c.add("pt2", f"{stem}_archive_format_other", rebuild(replaced(entries, root + "archive_format", b"pt3")))
    c.add("pt2", f"{stem}_no_model_json", rebuild([(n, d) for n, d in entries if n != model]))


def npy_cases(c, model, shape):
    """.npy inputs, run as `model`'s input."""
    n = 1
    for s in shape:
        n *= s
    cmd = ("run", model, "-i")

    def npy(header, data=None, magic=b"\x93NUMPY", version=b"\x01\x00", pad=True):
        h = header.encode("latin1")
        if pad:
            h = h + b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
        return magic + version + struct.pack("<H", len(h)) + h + (data if data is not None else b"\x00" * (4 * n))

    shp = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    good = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shp
    c.add("npy", "valid", npy(good, data=struct.pack(f"<{n}f", *[((k * 37) % 17) / 17.0 for k in range(n)])), command=cmd)
    bad = {
        "magic": npy(good, magic=b"\x93NUMPZ"),
        "version_9": npy(good, version=b"\x09\x00"),
        "header_len_past_end": b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'",
        "header_len_v2_huge": b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{'descr'",
        "descr_object": npy("{'descr': '|O', 'fortran_order': False, 'shape': %s, }" % shp),
        "descr_unknown": npy("{'descr': '<V4', 'fortran_order': False, 'shape': %s, }" % shp),
        "descr_big_endian": npy("{'descr': '>f4', 'fortran_order': False, 'shape': %s, }" % shp),
        "descr_structured": npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': %s, }" % shp),
        "fortran_order": npy("{'descr': '<f4', 'fortran_order': True, 'shape': %s, }" % shp),
        "fortran_order_string": npy("{'descr': '<f4', 'fortran_order': 'yes', 'shape': %s, }" % shp),
        "shape_negative": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }"),
        "shape_huge": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551615,), }"),
        "shape_overflow_product": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }"),
        "shape_rank_40": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ("1, " * 40)),
        "shape_not_tuple": npy("{'descr': '<f4', 'fortran_order': False, 'shape': 'x', }"),
        "data_short": npy(good, data=b"\x00" * (4 * n - 1)),
        "data_empty": npy(good, data=b""),
        "header_not_dict": npy("[1, 2, 3]"),
        "header_unterminated": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,", pad=False),
        "header_deep": npy("{'descr': " + "(" * 10000 + ")" * 10000 + "}"),
        "header_missing_keys": npy("{}"),
        "header_duplicate_keys": npy("{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': %s, }" % shp),
        "header_nul": npy("{'descr': '<f4\x00', 'fortran_order': False, 'shape': %s, }" % shp),
        "wrong_dtype": npy("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }" % shp, data=b"\x00" * (8 * n)),
        "wrong_shape": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }", data=b"\x00" * 28),
        "just_magic": b"\x93NUMPY",
        "empty": b"",
    }
    for name, data in bad.items():
        c.add("npy", name, data, command=cmd)


def json_cases(c):
    """Exported graphs (load_graph) with hostile JSON and weights beside them."""
    graph = json.load(open(os.path.join(VALID, "small.json")))
    good_weights = open(os.path.join(VALID, "good.safetensors"), "rb").read()
    c.add("json", "good", good_weights, ext=".safetensors", command=None)

    def doc(d, name, weights=None):
        d = json.loads(json.dumps(d))
        if weights is not None:
            # Beside the document (which names it), and with the safetensors seeds.
            d["weights"] = name + ".safetensors"
            c.add("json", name, weights, ext=".safetensors", command=None)
            c.add("safetensors", name, weights, command=None)
        c.add("json", name, json.dumps(d).encode())

    c.add("json", "deep_arrays", b"[" * 200000 + b"]" * 200000)
    c.add("json", "deep_graph_attribute", json.dumps(graph).replace('"value": "ok"', '"value": ' + "[" * 5000 + "]" * 5000).encode())
    c.add("json", "huge_number", json.dumps(graph).replace('"schema_version": 1', '"schema_version": 1' + "0" * 400).encode())
    c.add("json", "long_string", json.dumps(graph).replace('"mul_0"', '"' + "n" * ((8 << 20) if c.big is None else c.big // 2) + '"').encode())
    c.add("json", "bad_utf8", json.dumps(graph).encode().replace(b"mul_0", b"mul\xff\xfe"))
    c.add("json", "tree_spec_deep", json.dumps([1, {"type": "builtins.tuple", "context": "null", "children_spec": []}]).encode()
          .replace(b"[]", b'[{"type": "builtins.tuple", "context": "null", "children_spec": ' * 3000 + b"[]" + b"}]" * 3000),
          ext=".treespec.json", command=None)
    g = json.loads(json.dumps(graph))
    g["graph"]["values"][0]["shape"] = [2 ** 62, 2 ** 62]
    doc(g, "huge_shape")
    g = json.loads(json.dumps(graph))
    g["graph"]["nodes"][0]["inputs"] = [999999]
    doc(g, "dangling_input")
    g = json.loads(json.dumps(graph))
    g["graph"]["nodes"][1]["outputs"] = [2]
    doc(g, "two_producers")
    g = json.loads(json.dumps(graph))
    g["graph"]["nodes"][0]["inputs"] = [3]
    doc(g, "cycle")
    g = json.loads(json.dumps(graph))
    g["graph"]["nodes"] = g["graph"]["nodes"] * (50000 if c.big is None else 200)
    doc(g, "many_nodes")
    # Weights: headers past the end, offsets past the data, overlapping tensors.
    hlen = struct.unpack_from("<Q", good_weights)[0]
    header = json.loads(good_weights[8:8 + hlen])
    data = good_weights[8 + hlen:]

    def st(h, d=data, length=None):
        hb = json.dumps(h).encode()
        return struct.pack("<Q", len(hb) if length is None else length) + hb + d

    doc(graph, "weights_header_past_end", st(header, length=1 << 40))
    for key, meta in header.items():
        if key == "__metadata__":
            continue
        for field, value in [("data_offsets", [0, 1 << 40]), ("data_offsets", [8, 0]), ("shape", [2 ** 62, 4]), ("dtype", "F8_E4M3"),
                             ("shape", [-1]), ("dtype", "X")]:
            h = json.loads(json.dumps(header))
            h[key][field] = value
            doc(graph, f"weights_{key}_{field}_{hashlib.sha1(json.dumps(value).encode()).hexdigest()[:6]}", st(h))
        break
    h = json.loads(json.dumps(header))
    keys = [k for k in h if k != "__metadata__"]
    if len(keys) > 1:
        h[keys[1]]["data_offsets"] = h[keys[0]]["data_offsets"]
        doc(graph, "weights_overlap", st(h))
    doc(graph, "weights_deep_header", struct.pack("<Q", 200000) + b"[" * 100000 + b"]" * 100000)
    doc(graph, "weights_empty", b"")


def inflate_cases(c):
    """Raw DEFLATE streams behind fuzz_inflate's header (3 bytes of size, 1 of
    stop): zlib's at several levels, stored, fixed and dynamic blocks, bombs,
    and malformed ones."""
    def seed(stream, size, stop=255):
        return struct.pack("<I", size & 0xFFFFF)[:3] + bytes([stop]) + stream

    samples = [b"", b"a", b"a" * 1000, bytes(range(256)) * 16, open(os.path.join(VALID, "small.json"), "rb").read(),
               b"\x80\x02c__torch__\nM\n)\x81}b." * 20]
    for k, s in enumerate(samples):
        for level in (0, 1, 6, 9):
            c.add("inflate", f"zlib_{k}_level{level}", seed(deflate(s, level), len(s)))
        c.add("inflate", f"zlib_{k}_prefix", seed(deflate(s), len(s), 127))
        c.add("inflate", f"zlib_{k}_declared_more", seed(deflate(s), len(s) + 1))
        c.add("inflate", f"zlib_{k}_declared_less", seed(deflate(s), max(len(s) - 1, 0)))
        c.add("inflate", f"zlib_{k}_truncated", seed(deflate(s)[:-2], len(s)))
    c.add("inflate", "bomb_1mib", seed(deflate_zeros(1 << 20), (1 << 20) - 1))
    c.add("inflate", "bomb_4gib_stop", seed(deflate_zeros(64 << 20), (1 << 20) - 1, 1))
    c.add("inflate", "reserved_block", seed(b"\x07\x00\x00", 10))
    c.add("inflate", "stored_len_nlen_bad", seed(b"\x01\x05\x00\x05\x00hello", 5))
    c.add("inflate", "distance_too_far", seed(b"\x03\x02\x00\x00" + b"\xff" * 8, 100))
    c.add("inflate", "dynamic_oversubscribed", seed(b"\x05\xff\xff\xff\xff\xff\xff\xff", 100))
    c.add("inflate", "empty_stream", seed(b"", 0))


def real_variants(c, reals):
    """Truncations at several offsets and mutations of each real file."""
    rng = c.rng
    interesting = [0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]
    tokens = [b"(" * 64, b"[0]" * 64, b"\xff\xff\xff\xff", b"X\xff\xff\xff\x7f", b"]" * 64, b"\x00" * 16, b"torch.", b"ops.aten.",
              b"for _0 in range(65535):\n", b'"', b"\n", b"1e309", b"-1", b"{", b"}"]
    for real in reals:
        data = open(real, "rb").read()
        stem = os.path.basename(real)
        kind = kind_of(real)
        cmd = command_for(real)
        # Truncated: at fractions of the file, inside the end record, just short.
        cuts = sorted({0, 1, 4, 30, len(data) // 4, len(data) // 2, 3 * len(data) // 4, len(data) - 22, len(data) - 1} - {len(data)})
        for cut in cuts:
            if 0 <= cut < len(data):
                c.add(kind, f"{stem}_truncated_at_{cut}", data[:cut], command=cmd, variant=True)
        for v in range(c.args.variants):
            d = bytearray(data)
            op = v % 4
            if op == 0:  # bit flips
                for _ in range(1 + rng.randrange(8)):
                    d[rng.randrange(len(d))] ^= 1 << rng.randrange(8)
            elif op == 1:  # an interesting value over a 4-byte field after a signature
                sigs = [i for i in range(len(d) - 4) if d[i:i + 2] == b"PK"] or [0]
                at = rng.choice(sigs) + rng.choice([4, 8, 14, 18, 22, 26, 28, 42]) if sigs != [0] else rng.randrange(max(1, len(d) - 4))
                at = min(at, len(d) - 4)
                d[at:at + 4] = struct.pack("<I", rng.choice(interesting))
            elif op == 2:  # a span deleted or duplicated
                a = rng.randrange(len(d))
                b = min(len(d), a + 1 + rng.randrange(256))
                d = d[:a] + d[b:] if rng.random() < 0.5 else d[:b] + d[a:b] + d[b:]
            else:  # an entry's content mutated, the archive rebuilt right
                if data[:2] == b"PK":
                    entries = read_entries(real)
                    docs = [k for k, (n, _) in enumerate(entries) if n.endswith((".pkl", ".py", ".json"))]
                    k = rng.choice(docs) if docs else rng.randrange(len(entries))
                    name, body = entries[k]
                    body = bytearray(body)
                    at = rng.randrange(len(body) + 1)
                    tok = rng.choice(tokens)
                    if rng.random() < 0.5:
                        body[at:at] = tok
                    else:
                        body[at:at + len(tok)] = tok
                    entries[k] = (name, bytes(body))
                    d = bytearray(rebuild(entries))
                else:
                    for _ in range(4):
                        d[rng.randrange(len(d))] = rng.randrange(256)
            c.add(kind, f"{stem}_mutant_{v:03d}", bytes(d), command=cmd, variant=True)


def kind_of(path):
    if path.endswith(".pt2"):
        return "pt2"
    if path.endswith((".ts", ".pt")):
        return "torchscript"
    if path.endswith(".pkl"):
        return "pickle"
    if path.endswith(".npy"):
        return "npy"
    if path.endswith(".safetensors"):
        return "safetensors"
    return "json"


# The real files' commands: `run` on random inputs where the input shape is
# known (a correct run must be a run), `inspect` otherwise.
INPUT_SHAPES = {"sigmoid_then_pool.ts": "1,3,16,16", "unet2d.ts": "1,1,64,64", "resnet18_traced.ts": "1,3,64,64"}
RUN_MODEL = os.path.join(VALID, "sigmoid_then_pool.ts")


def run_command(real):
    shape = INPUT_SHAPES.get(os.path.basename(real))
    return ("run", "--random", shape) if shape else ("inspect",)


def command_for(real):
    kind = kind_of(real)
    if kind == "npy":
        return ("run", RUN_MODEL, "-i")
    if kind in ("pickle", "safetensors") or real.endswith(".treespec.json"):
        return None  # not a model: fuzz seeds only
    return run_command(real)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=50)
    ap.add_argument("--variants", type=int, default=8, help="mutants of each real file")
    ap.add_argument("--max-bytes", type=int, default=1 << 20)
    ap.add_argument("--fuzz-seeds", action="store_true", help="no file over --max-bytes; bombs sized to fit")
    ap.add_argument("--real", action="append", default=[], help="a real model file (default: tests/data/valid's)")
    ap.add_argument("--only", default="", help="comma-separated kinds to write (default all)")
    ap.add_argument("--reals-per-kind", type=int, default=2, help="real TorchScript and .pt2 files the structure cases edit")
    args = ap.parse_args()

    reals = args.real or sorted(os.path.join(VALID, f) for f in os.listdir(VALID))
    c = Cases(args)
    ts_reals = [r for r in reals if r.endswith((".ts", ".pt"))]
    pt2_reals = [r for r in reals if r.endswith(".pt2")]
    code_cases(c)
    pickle_cases(c)
    for r in ts_reals[:args.reals_per_kind]:
        weight_bombs(c, r) if any(n.endswith("/data/0") for n, _ in read_entries(r)) else None
        zip_structure_cases(c, r)
    for r in pt2_reals[:args.reals_per_kind]:
        pt2_cases(c, r)
    count = 70000 if c.big is None else 5000
    c.add("zip", f"entries_{count}", many_entries(c, count), expect="limit_exceeded")
    c.add("zip", f"entries_{count}_pt2", many_entries(c, count)[:-22] + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF,
                                                                              0xFFFFFFFF, 0xFFFFFFFF, 0), ext=".pt2",
          expect="limit_exceeded")
    npy_cases(c, RUN_MODEL, [1, 3, 16, 16])
    json_cases(c)
    inflate_cases(c)
    real_variants(c, reals)

    only = set(filter(None, args.only.split(",")))
    kinds = ["torchscript", "pt2", "zip", "pickle", "npy", "json", "safetensors", "inflate"]
    manifest = []
    for kind in kinds:
        os.makedirs(os.path.join(args.out, kind), exist_ok=True)
    names = set()
    for it in c.items:
        if only and it["kind"] not in only:
            continue
        rel = os.path.join(it["kind"], it["name"])
        assert rel not in names, rel
        names.add(rel)
        path = os.path.join(args.out, rel)
        old = None
        if os.path.exists(path):
            with open(path, "rb") as f:
                old = hashlib.sha256(f.read()).digest()
        if old != hashlib.sha256(it["data"]).digest():
            with open(path, "wb") as f:
                f.write(it["data"])
        if it["command"] is not None:
            manifest.append(dict(file=rel, kind=it["kind"], command=it["command"], expect=it["expect"], bytes=len(it["data"]),
                                 variant=it["variant"]))
    # Files of an earlier run with other parameters go.
    for kind in kinds:
        for f in os.listdir(os.path.join(args.out, kind)):
            if os.path.join(kind, f) not in names:
                os.remove(os.path.join(args.out, kind, f))
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(dict(seed=args.seed, variants=args.variants, files=manifest), f, indent=1)
    total = sum(len(it["data"]) for it in c.items)
    print(f"make_hostile_archives: {len(names)} files ({total / 1e6:.1f} MB) in {args.out}, {len(manifest)} in the manifest"
          + (f"; over --max-bytes, left out: {', '.join(c.skipped)}" if c.skipped else ""))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes tests/data/malformed/: hostile inputs for the three loaders, and
manifest.json naming each file's loader, the error code it must get and a
piece of the message. Regenerate with `python3 scripts/make_malformed_corpus.py`;
never edit the files by hand. Also writes tests/data/valid/ (the base case)."""
import copy
import json
import os
import shutil
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")
OUT = os.path.join(ROOT, "malformed")
VALID = os.path.join(ROOT, "valid")


def safetensors(header, data=b"", pad=True):
    text = json.dumps(header, separators=(",", ":")).encode() if not isinstance(header, bytes) else header
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


W_DATA = struct.pack("<4f", 1.0, -2.0, 3.0, 0.5)
GOOD_WEIGHTS = safetensors({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, W_DATA)

LEAF = {"type": None, "context": None, "children_spec": []}
BASE = {
    "format": "tracegraph",
    "schema_version": 1,
    "metadata": {"producer": "make_malformed_corpus.py"},
    "weights": "good.safetensors",
    "graph": {
        "name": "main",
        "values": [
            {"id": 0, "name": "x", "dtype": "float32", "shape": ["N", 4]},
            {"id": 1, "name": "w", "dtype": "float32", "shape": [4], "constant": "w"},
            {"id": 2, "name": "y", "dtype": "float32", "shape": ["N", 4]},
            {"id": 3, "name": "z", "dtype": "float32", "shape": ["N", 4]},
        ],
        "nodes": [
            {"id": 0, "name": "mul_0", "op": "mul", "inputs": [0, 1], "outputs": [2], "attributes": {}},
            {"id": 1, "name": "relu_1", "op": "relu", "inputs": [2], "outputs": [3],
             "attributes": {"note": {"type": "string", "value": "ok"}}},
        ],
        "inputs": [0],
        "outputs": [3],
    },
    "in_spec": [1, {"type": "builtins.tuple", "context": "null", "children_spec": [LEAF]}],
    "out_spec": None,
}

cases = []  # (file name, loader, code, message piece)


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def st_case(name, data, code, piece):
    write(name + ".safetensors", data)
    cases.append((name + ".safetensors", "safetensors", code, piece))


def graph_case(name, mutate, code, piece, raw=None):
    doc = copy.deepcopy(BASE)
    if mutate:
        mutate(doc)
    write(name + ".json", raw if raw is not None else json.dumps(doc, indent=1).encode())
    cases.append((name + ".json", "graph", code, piece))


def ts_case(name, text, code, piece):
    write(name + ".treespec.json", text.encode())
    cases.append((name + ".treespec.json", "tree_spec", code, piece))


def nested(depth):
    return "[" * depth + "]" * depth


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    os.makedirs(VALID, exist_ok=True)
    write("good.safetensors", GOOD_WEIGHTS)
    with open(os.path.join(VALID, "good.safetensors"), "wb") as f:
        f.write(GOOD_WEIGHTS)
    with open(os.path.join(VALID, "small.json"), "w") as f:
        json.dump(BASE, f, indent=1)
    with open(os.path.join(VALID, "example.treespec.json"), "w") as f:
        f.write(json.dumps([1, BASE["in_spec"][1]]))

    w16 = {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}
    # ---- safetensors -------------------------------------------------------
    st_case("st_empty", b"", "truncated", "too short for the 8-byte header length")
    st_case("st_short_length", b"\x10\x00\x00", "truncated", "too short")
    st_case("st_header_past_end", struct.pack("<Q", 1000) + b"{}      ", "truncated", "header length 1000 at offset 0 runs past the end")
    st_case("st_header_huge", struct.pack("<Q", 1 << 63) + b"{}", "limit_exceeded", "over the limit")
    st_case("st_header_not_json", safetensors(b"{abc"), "parse", "not valid JSON at byte")
    st_case("st_header_array", safetensors(b"[]"), "schema", "expected an object")
    st_case("st_unknown_dtype", safetensors({"w": {**w16, "dtype": "F8"}}, W_DATA), "unknown_dtype", "unknown dtype 'F8'")
    st_case("st_dtype_not_string", safetensors({"w": {**w16, "dtype": 5}}, W_DATA), "schema", "/w/dtype: expected a string")
    st_case("st_negative_dim", safetensors({"w": {**w16, "shape": [-1, 4]}}, W_DATA), "bad_shape", "negative dim -1")
    st_case("st_overflowing_shape", safetensors({"w": {**w16, "shape": [1 << 62, 1 << 62]}}, W_DATA), "bad_shape", "overflows")
    st_case("st_offsets_past_end", safetensors({"w": {**w16, "data_offsets": [0, 1000]}}, W_DATA), "out_of_range", "past the end of the 16-byte data section")
    st_case("st_offsets_reversed", safetensors({"w": {**w16, "data_offsets": [16, 0]}}, W_DATA), "out_of_range", "begins at 16 after its end 0")
    st_case("st_offsets_disagree_with_shape", safetensors({"w": {**w16, "data_offsets": [0, 12]}}, W_DATA[:12]), "bad_shape", "needs 16 bytes, its offsets span 12")
    st_case("st_overlap", safetensors({"a": {**w16, "data_offsets": [0, 16]}, "b": {**w16, "data_offsets": [8, 24]}}, W_DATA + W_DATA[:8]), "overlap", "overlaps the tensor before it")
    st_case("st_gap", safetensors({"a": {**w16, "data_offsets": [0, 16]}, "b": {**w16, "data_offsets": [20, 36]}}, W_DATA + b"\0" * 20), "gap", "[16, 20) belong to no tensor")
    st_case("st_trailing_bytes", safetensors({"w": w16}, W_DATA + b"junk"), "gap", "[16, 20) belong to no tensor")
    st_case("st_missing_offsets", safetensors({"w": {"dtype": "F32", "shape": [4]}}, W_DATA), "schema", "missing key \"data_offsets\"")
    st_case("st_three_offsets", safetensors({"w": {**w16, "data_offsets": [0, 8, 16]}}, W_DATA), "schema", "expected [begin, end]")
    st_case("st_negative_offset", safetensors({"w": {**w16, "data_offsets": [-16, 0]}}, W_DATA), "out_of_range", "non-negative")
    st_case("st_rank_too_high", safetensors({"w": {**w16, "shape": [1] * 40}}, W_DATA), "limit_exceeded", "rank 40")
    st_case("st_duplicate_key", safetensors(b'{"w":' + json.dumps(w16).encode() + b',"w":' + json.dumps(w16).encode() + b"}", W_DATA), "duplicate_name", "\"w\" appears twice")
    st_case("st_metadata_not_string", safetensors({"__metadata__": {"a": 1}, "w": w16}, W_DATA), "schema", "/__metadata__/a: expected a string")
    st_case("st_fractional_dim", safetensors({"w": {**w16, "shape": [4.5]}}, W_DATA), "schema", "expected an integer")
    st_case("st_deep_header", safetensors(('{"a":' + nested(500) + "}").encode()), "limit_exceeded", "nests deeper")

    # ---- graph JSON --------------------------------------------------------
    good_json = json.dumps(BASE, indent=1).encode()

    def set_path(path, value):
        def f(doc):
            target = doc
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
        return f

    def values(doc):
        return doc["graph"]["values"]

    def nodes(doc):
        return doc["graph"]["nodes"]

    graph_case("g_truncated", None, "parse", "not valid JSON at byte", raw=good_json[: len(good_json) // 2])
    graph_case("g_not_object", None, "schema", "expected an object, found array", raw=b"[]")
    graph_case("g_wrong_format", set_path(["format"], "onnx"), "schema", "format is 'onnx'")
    graph_case("g_wrong_version", set_path(["schema_version"], 99), "unsupported_version", "schema version 99")
    graph_case("g_version_is_string", set_path(["schema_version"], "1"), "schema", "/schema_version: expected an integer")
    graph_case("g_missing_graph", lambda d: d.pop("graph"), "schema", "missing key \"graph\"")
    graph_case("g_nodes_not_array", set_path(["graph", "nodes"], {}), "schema", "/graph/nodes: expected an array")
    graph_case("g_dangling_node_input", lambda d: nodes(d)[1].update(inputs=[77]), "dangling_id", "/graph/nodes/1/inputs/0: value id 77")
    graph_case("g_dangling_graph_output", set_path(["graph", "outputs"], [77]), "dangling_id", "/graph/outputs/0: value id 77")
    graph_case("g_duplicate_value_id", lambda d: values(d)[3].update(id=2), "duplicate_id", "value id 2 is defined twice")
    graph_case("g_duplicate_node_id", lambda d: nodes(d)[1].update(id=0), "duplicate_id", "node id 0 is defined twice")
    graph_case("g_duplicate_value_name", lambda d: values(d)[3].update(name="y"), "duplicate_name", "value name %y is used twice")
    graph_case("g_duplicate_node_name", lambda d: nodes(d)[1].update(name="mul_0"), "duplicate_name", "node name 'mul_0' is used twice")
    graph_case("g_two_producers", lambda d: nodes(d)[1].update(outputs=[2]), "multiple_producers", "value %y is written by node 'relu_1' and by node 'mul_0'")
    graph_case("g_constant_written_by_node", lambda d: nodes(d)[0].update(outputs=[1]), "multiple_producers", "is a constant")
    graph_case("g_input_written_by_node", set_path(["graph", "inputs"], [3]), "multiple_producers", "graph input %z is also written")

    def cycle(doc):
        nodes(doc)[0]["inputs"] = [3, 1]
        doc["graph"]["inputs"] = []
        doc["in_spec"] = None
    graph_case("g_cycle", cycle, "cycle", "is on a cycle")

    def unproduced(doc):
        doc["graph"]["inputs"] = []
        doc["in_spec"] = None
    graph_case("g_unproduced_value", unproduced, "unproduced_output", "reads %x, which nothing produces")
    graph_case("g_unknown_dtype", lambda d: values(d)[0].update(dtype="float8"), "unknown_dtype", "unknown dtype 'float8'")
    graph_case("g_negative_dim", lambda d: values(d)[0].update(shape=[-3, 4]), "bad_shape", "negative dim -3")
    graph_case("g_overflowing_shape", lambda d: values(d)[0].update(shape=[1 << 62, 1 << 62]), "bad_shape", "overflows")
    graph_case("g_empty_symbol", lambda d: values(d)[0].update(shape=["", 4]), "bad_shape", "symbolic dim needs a name")
    graph_case("g_negative_id", lambda d: values(d)[0].update(id=-1), "out_of_range", "non-negative")
    graph_case("g_id_is_string", lambda d: values(d)[0].update(id="0"), "schema", "/graph/values/0/id: expected a non-negative integer")
    graph_case("g_constant_tensor_missing", lambda d: values(d)[1].update(constant="nope"), "not_found", "tensor 'nope' is not in")
    graph_case("g_constant_shape_mismatch", lambda d: values(d)[1].update(shape=[2, 2]), "shape_mismatch", "says [2, 2]")
    graph_case("g_constant_dtype_mismatch", lambda d: values(d)[1].update(dtype="float16"), "dtype_mismatch", "says float16")
    graph_case("g_weights_path_escapes", set_path(["weights"], "../good.safetensors"), "schema", "plain file name")
    graph_case("g_weights_file_missing", set_path(["weights"], "absent.safetensors"), "io", "absent.safetensors")
    graph_case("g_weights_truncated", set_path(["weights"], "st_short_length.safetensors"), "truncated", "st_short_length.safetensors")
    graph_case("g_unknown_attribute_type", lambda d: nodes(d)[1]["attributes"].update(note={"type": "complex", "value": 1}), "schema", "unknown attribute type 'complex'")
    graph_case("g_attribute_value_wrong_type", lambda d: nodes(d)[1]["attributes"].update(note={"type": "ints", "value": [1, "2"]}), "schema", "/attributes/note/value/1: expected an integer")
    graph_case("g_attribute_tensor_missing", lambda d: nodes(d)[1]["attributes"].update(note={"type": "tensor", "value": "@gone"}), "not_found", "tensor '@gone'")
    graph_case("g_in_spec_protocol", set_path(["in_spec"], [7, LEAF]), "unsupported_version", "/in_spec")
    graph_case("g_in_spec_leaf_count", set_path(["in_spec"], [1, {"type": "builtins.tuple", "context": "null", "children_spec": [LEAF, LEAF]}]), "tree_spec_mismatch", "in_spec has 2 leaves for 1 graph inputs")
    graph_case("g_deep_nesting", set_path(["metadata"], json.loads(nested(300))), "limit_exceeded", "nests deeper")
    graph_case("g_op_empty", lambda d: nodes(d)[0].update(op=""), "schema", "empty op")

    # ---- tree spec JSON ----------------------------------------------------
    ts_case("ts_not_json", "[1, {", "parse", "not valid JSON")
    ts_case("ts_protocol_0", json.dumps([0, LEAF]), "unsupported_version", "protocol 0")
    ts_case("ts_not_array", json.dumps(LEAF), "schema", "expected an array")
    ts_case("ts_children_not_array", json.dumps([1, {**LEAF, "children_spec": {}}]), "schema", "/1/children_spec: expected an array")
    ts_case("ts_unknown_type", json.dumps([1, {"type": "builtins.set", "context": "null", "children_spec": []}]), "unsupported", "builtins.set")
    ts_case("ts_dict_key_count", json.dumps([1, {"type": "builtins.dict", "context": "[\"a\", \"b\"]", "children_spec": [LEAF]}]), "schema", "2 dict keys for 1 children")
    ts_case("ts_duplicate_dict_key", json.dumps([1, {"type": "builtins.dict", "context": "[\"a\", \"a\"]", "children_spec": [LEAF, LEAF]}]), "duplicate_name", "dict key 'a' appears twice")
    ts_case("ts_leaf_with_children", json.dumps([1, {**LEAF, "children_spec": [LEAF]}]), "schema", "a leaf (type null) has children")
    ts_case("ts_context_not_json", json.dumps([1, {"type": "builtins.dict", "context": "[a", "children_spec": []}]), "parse", "/1/context")
    deep = LEAF
    for _ in range(300):
        deep = {"type": "builtins.list", "context": "null", "children_spec": [deep]}
    ts_case("ts_too_deep", json.dumps([1, deep]), "limit_exceeded", "deeper")

    manifest = [{"file": f, "loader": l, "code": c, "message": m} for f, l, c, m in cases]
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"wrote {len(cases)} malformed files to {os.path.relpath(OUT)}")


if __name__ == "__main__":
    main()

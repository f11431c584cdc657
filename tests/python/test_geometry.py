"""network_geometry and module_tree through the Python package: values derived
by hand from the models' definitions (tests/models/make_test_models.py,
make_pt2_models.py, and the small modules below), and the same answers as
the CLI's ``inspect --json`` on the same file."""
from __future__ import annotations

import json
import subprocess

import pytest

import tracegraph
from conftest import CLI, DATA, EXPORTED, expected, needs_torch

# make_test_models.py's unet3d_sigmoid as torch.export saved it (44^3 in,
# 28^3 out): Sequential(UNet3d(), Sigmoid()), valid 3x3x3 convolutions, a
# max pooling by 2, a transposed convolution by 2, and the skip's centre
# crop, which torch.export records at the traced size: f0[4:36].
UNET3D_EXPORT = EXPORTED / "unet3d_sigmoid_export" / "unet3d_sigmoid_export.pt2"
NESTED_BLOCKS = DATA / "valid" / "nested_blocks.pt2"


def _cli_json(path) -> dict:
    return json.loads(subprocess.run([str(CLI), "inspect", str(path), "--json"], check=True, capture_output=True,
                                     text=True).stdout)


# Per axis, input size n: down0 (two valid convs) n - 4; the pooling
# floor((n - 4) / 2); down1 that - 4; the transposed convolution twice it.
# The crop f0[4:36] is 32 from n = 40 on (n - 8 below), so the cat's two
# sizes, 2 * (floor((n - 4) / 2) - 4) and 32, agree at n = 44 and 45 only
# (below 40: n - 12 or n - 13 against n - 8, never). The output is 32 - 4 = 28.
# Voxels: two valid convs put output voxel 0 at input 2; the pooling at 2 +
# 1/2, stride 2; down1 at 5/2 + 2 * 2 = 13/2; the transposed convolution
# ((0 - 1/2) / 2 = -1/4, stride 1/2) at 13/2 - 2/4 = 6, stride 1, where the
# crop puts the skip (2 + 4): they line up. up0's two convs: offset 8.
# Context: 8 before; after, n - 8 - 28: 8 at 44, 9 at 45.
def test_a_valid_unet_with_a_fixed_crop_takes_two_sizes():
    g = tracegraph.load(UNET3D_EXPORT)
    geometry = tracegraph.network_geometry(g)
    assert len(geometry) == 1
    o = geometry[0]
    assert (o.output, o.input) == (g.output_names[0], g.input_names[0])
    assert [a.dim for a in o.axes] == [2, 3, 4]
    out_shape = expected(UNET3D_EXPORT.with_name("unet3d_sigmoid_export.expected.json"))["output_shapes"][0]
    for a in o.axes:
        assert a.known, str(a)
        assert a.valid_sizes_str() == "44 or 45"
        assert a.finite and a.lattice is None
        assert a.smallest() == 44
        assert a.output_size(44) == 28 == out_shape[a.dim]  # what torch gave at 44
        assert a.output_size(45) == 28
        for refused in (1, 40, 43, 46, 52, 1000):
            assert a.output_size(refused) is None and not a.accepts(refused), refused
        assert a.offset == 8 and str(a.offset) == "8" and a.offset.den == 1
        assert a.stride == 1
        assert a.context_before() == 8
        assert a.context_after(44) == 8 and a.context_after(45) == 9
        assert a.context_after(46) is None
        assert a.nonlocal_nodes == []
        assert not a.edge_effects and a.halo() == 0 and float(a.reach) >= 8  # valid convolutions: no halo
        assert str(a) == "sizes 44 or 45, offset 8, stride 1"


def test_the_cli_says_the_same_geometry():
    g = tracegraph.load(UNET3D_EXPORT)
    ours = json.loads(tracegraph.geometry_json(tracegraph.network_geometry(g)))
    cli = _cli_json(UNET3D_EXPORT)["geometry"]
    assert ours == cli
    axis = dict(cli[0]["axes"][0])
    assert str(tracegraph.network_geometry(g)[0].axes[0].reach) == axis.pop("reach")
    assert axis == {"dim": 2, "valid": "44 or 45", "smallest": 44, "output_size": 28,
                    "context": ["8", "8"], "offset": "8", "stride": "1", "edge_effects": False, "halo": 0}
    # One entry's own JSON is that entry.
    assert json.loads(tracegraph.network_geometry(g)[0].json()) == cli


def test_a_graph_without_a_spatial_input_has_no_geometry():
    # nested_blocks takes a [2, 4] input: no N, C, spatial dims.
    assert tracegraph.network_geometry(tracegraph.load(NESTED_BLOCKS)) == []
    assert tracegraph.geometry_json([]) == "[]"


def test_geometry_takes_a_path_and_refuses_other_things():
    assert json.loads(tracegraph.geometry_json(tracegraph.network_geometry(str(UNET3D_EXPORT))))[0]["axes"][1]["dim"] == 3
    with pytest.raises(tracegraph.InvalidArgumentError, match="network_geometry takes a TracedGraph"):
        tracegraph.network_geometry(42)


def test_rationals_are_exact():
    r = tracegraph.Rational.of(-2, 8)
    assert (r.num, r.den) == (-1, 4)
    assert str(r) == "-1/4" and float(r) == -0.25 and not r.is_integer()
    assert r == tracegraph.Rational.of(1, -4) and r != tracegraph.Rational.of(1, 4)
    assert tracegraph.Rational.of(6, 3) == 2 and hash(r) == hash(tracegraph.Rational.of(-1, 4))


@needs_torch
def test_a_same_padded_unet_with_two_poolings_takes_multiples_of_four():
    import torch
    import torch.nn as nn

    def conv(a, b):
        return nn.Sequential(nn.Conv2d(a, b, 3, padding=1), nn.ReLU())

    class SameUNet(nn.Module):
        """Two max poolings by 2, transposed convolutions by 2 back up, skips concatenated without a crop."""

        def __init__(self):
            super().__init__()
            self.enc0, self.enc1, self.enc2, self.pool = conv(1, 4), conv(4, 8), conv(8, 8), nn.MaxPool2d(2)
            self.up1, self.dec1 = nn.ConvTranspose2d(8, 8, 2, stride=2), conv(16, 4)
            self.up0, self.dec0 = nn.ConvTranspose2d(4, 4, 2, stride=2), conv(8, 4)
            self.head = nn.Conv2d(4, 1, 1)

        def forward(self, x):
            f0 = self.enc0(x)
            f1 = self.enc1(self.pool(f0))
            f2 = self.enc2(self.pool(f1))
            d1 = self.dec1(torch.cat([f1, self.up1(f2)], 1))
            return self.head(self.dec0(torch.cat([f0, self.up0(d1)], 1)))

    g = tracegraph.trace(SameUNet(), (torch.zeros(1, 1, 32, 32),))
    (o,) = tracegraph.network_geometry(g)
    assert [a.dim for a in o.axes] == [2, 3]
    for a in o.axes:
        # The level-1 join: 2 * floor(n / 4) == floor(n / 2), n mod 4 in {0, 1};
        # the top one: 2 * floor(n / 2) == n, n even; both: n = 4k, k >= 1.
        assert a.valid_sizes_str() == "4k, k >= 1"
        assert (a.lattice.first, a.lattice.step) == (4, 4)
        assert not a.finite
        assert [a.output_size(n) for n in (4, 8, 32, 1024)] == [4, 8, 32, 1024]
        assert [a.output_size(n) for n in (1, 2, 30, 33, 34, 1022)] == [None] * 6
        # Pooling: 1/2, stride 2; twice: 3/2, stride 4; each transposed
        # convolution -1/4 of its input's stride back: 1/2, then 0.
        assert a.offset == 0 and a.stride == 1
        assert a.context_before() == 0 and a.context_after(32) == 0


@needs_torch
def test_valid_convolutions_then_a_pooling_have_a_context_and_a_stride():
    import torch
    import torch.nn as nn

    net = nn.Sequential(nn.Conv3d(1, 2, 3), nn.ReLU(), nn.Conv3d(2, 2, 3), nn.MaxPool3d(2))
    g = tracegraph.trace(net, (torch.zeros(1, 1, 12, 12, 12),))
    (o,) = tracegraph.network_geometry(g)
    for a in o.axes:
        # Sizes: floor((n - 4) / 2) >= 1 from n = 6, odd sizes too (the pooling floors).
        assert a.valid_sizes_str() == "n >= 6"
        assert (a.lattice.first, a.lattice.step) == (6, 1)
        assert a.output_size(5) is None
        assert [a.output_size(n) for n in (6, 10, 11, 12)] == [1, 3, 3, 4]
        # Two valid convs: 2; the pooling: 2 + 1/2, stride 2.
        assert str(a.offset) == "5/2" and float(a.offset) == 2.5
        assert a.stride == 2
        # Context before: offset + (1 - stride) / 2 = 2; after: n - 5/2 - 2 m + 1/2.
        assert a.context_before() == 2
        assert a.context_after(10) == 2 and a.context_after(11) == 3 and a.context_after(12) == 2


@needs_torch
def test_an_axis_the_analysis_cannot_follow_is_unknown_by_name():
    import torch
    import torch.nn as nn

    class Flattens(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)

        def forward(self, x):
            y = self.conv(x)
            return y.flatten(2).unsqueeze(-1)  # H and W made one axis: no voxel grid left

    g = tracegraph.trace(Flattens(), (torch.zeros(1, 1, 8, 8),))
    (o,) = tracegraph.network_geometry(g)
    for a in o.axes:
        assert not a.known
        assert a.unknown_node and a.unknown_reason
        assert a.output_size(8) is None and a.smallest() is None
        assert str(a).startswith(f"unknown at '{a.unknown_node}'")
    assert json.loads(o.json())[0]["axes"][0]["unknown"]["node"] == o.axes[0].unknown_node


# nested_blocks.pt2 (make_pt2_models.py's NestedBlocks, input [2, 4]):
#   encoder (Encoder) > blocks.0..2 (Block: x + mlp(attn(x))),
#     each attn (Attention: relu(qkv(x)), qkv a Linear(4, 4)) and mlp
#     (Sequential: 0 Linear(4, 4), 1 GELU); then head (Linear(4, 2)), and
#     the root's own sigmoid.
# 17 nodes: per block linear, relu, linear, gelu, add (5, x3), head's linear, the sigmoid.
# Parameters: a Linear(4, 4) 16 + 4, so a block 40, the encoder 120, the head 8 + 2, all 130.
# FLOPs: a Linear on [2, 4] to 4 is 2 * 2 * 4 * 4 = 64, so a block 128 (relu,
# gelu and add count 0), the encoder 384, the head 2 * 2 * 4 * 2 = 32, all 416.
def test_module_tree_of_nested_blocks():
    tree = tracegraph.module_tree(tracegraph.load(NESTED_BLOCKS))
    # root, encoder, 3 x (block, attn, attn.qkv, mlp, mlp.0, mlp.1), head
    assert len(tree) == 21
    root = tree.root
    assert (root.path, root.type, root.parent) == ("", "", None)
    assert root.nodes == ["sigmoid"]
    assert (root.node_count, root.parameters, root.flops) == (17, 130, 416)
    assert [c.path for c in tree.children(root)] == ["encoder", "head"]

    encoder = tree["encoder"]
    assert (encoder.type, encoder.nodes, encoder.node_count, encoder.parameters, encoder.flops) == ("Encoder", [], 15, 120, 384)
    assert encoder.parent == root.index
    blocks = tree.children(encoder)
    assert [b.path for b in blocks] == [f"encoder.blocks.{i}" for i in range(3)]
    first = blocks[0]
    assert (first.type, first.nodes, first.node_count, first.parameters, first.flops) == ("Block", ["add"], 5, 40, 128)
    assert (first.repeat_of, first.repeats) == (None, 3)
    for b in blocks[1:]:
        assert (b.repeat_of, b.repeats) == (first.index, 1)
        assert b.signature == first.signature
    assert [c.path for c in tree.children(first)] == ["encoder.blocks.0.attn", "encoder.blocks.0.mlp"]
    attn = tree["encoder.blocks.0.attn"]
    assert (attn.type, attn.nodes, attn.node_count, attn.parameters) == ("Attention", ["relu"], 2, 20)
    assert (tree["encoder.blocks.0.attn.qkv"].type, tree["encoder.blocks.0.attn.qkv"].nodes) == ("Linear", ["linear"])
    mlp = tree["encoder.blocks.0.mlp"]
    assert (mlp.type, mlp.nodes, mlp.node_count) == ("Sequential", [], 2)
    assert [(c.type, c.nodes) for c in tree.children(mlp)] == [("Linear", ["linear_1"]), ("GELU", ["gelu"])]
    assert tree["encoder.blocks.2.mlp.1"].nodes == ["gelu_2"]

    head = tree["head"]
    assert (head.type, head.nodes, head.node_count, head.parameters, head.flops) == ("Linear", ["linear_6"], 1, 10, 32)
    assert (head.repeat_of, head.repeats) == (None, 1)

    # The core's JSON form says the same.
    doc = json.loads(tree.json())["groups"]
    assert [(d["path"], d["node_count"], d["repeat_of"], d["repeats"], d["nodes"]) for d in doc] == \
        [(g.path, g.node_count, g.repeat_of, g.repeats, g.nodes) for g in tree.groups]
    assert [int(d["signature"], 16) for d in doc] == [g.signature for g in tree.groups]


def test_each_node_says_its_module():
    nodes = {n.name: n for n in tracegraph.load(NESTED_BLOCKS).nodes}
    assert nodes["linear"].module == "encoder.blocks.0.attn.qkv"
    assert nodes["linear"].module_path == [("encoder", "Encoder"), ("encoder.blocks.0", "Block"),
                                           ("encoder.blocks.0.attn", "Attention"), ("encoder.blocks.0.attn.qkv", "Linear")]
    assert nodes["gelu_2"].module == "encoder.blocks.2.mlp.1"
    assert nodes["add_2"].module_path == [("encoder", "Encoder"), ("encoder.blocks.2", "Block")]
    assert nodes["linear_6"].module_path == [("head", "Linear")]
    assert nodes["sigmoid"].module is None and nodes["sigmoid"].module_path == []  # the root's own forward


def test_a_fraction_over_zero_is_refused():
    with pytest.raises(tracegraph.InvalidArgumentError, match="denominator is 0"):
        tracegraph.Rational.of(1, 0)

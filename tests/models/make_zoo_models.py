#!/usr/bin/python3
"""Makes the real-model zoo: torchvision's architectures and the UNets people
build, with random (seeded) weights and small inputs, by the torch the native
build links. For each model, beside it, what the zoo tests assert:

  NAME.ts                the TorchScript module (traced or scripted)
  NAME.io.safetensors    a seeded input ("input.N") and the module's own outputs
  NAME.expected.json     input shapes, the expected output activation per
                         output (with the range-preserving ops after it),
                         parameters, and the set ("small" or "large")
  index.json             {"small": [...], "large": [...]}

Usage: make_zoo_models.py OUT_DIR [--set small|large|all] [--only NAME,...].
Models over ~30M parameters are the "large" set, which a separate ctest label
runs (scripts/zoo.sh). Skips models whose files are newer than this script.
"""
import json
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_test_models import leaves, spec_of, write_safetensors  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=UserWarning)

# ------------------------------------------------------------------ UNets --
# The cellmap/funlib-style UNets, in the variants people build. Every choice
# is a constructor argument so that one class covers the matrix and scripts.


def crop_to(x, target: list[int]):
    """Center-crops x's spatial dims to target's (valid-convolution skips)."""
    for d in range(2, x.dim()):
        offset = (x.shape[d] - target[d]) // 2
        x = x.narrow(d, offset, target[d])
    return x


def norm_layer(kind: str, dims: int, c: int):
    if kind == "batch":
        return (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)[dims - 1](c)
    if kind == "group":
        return nn.GroupNorm(2, c)
    if kind == "instance":
        return (nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)[dims - 1](c, affine=True)
    return nn.Identity()


def act_layer(kind: str):
    return {"relu": lambda: nn.ReLU(inplace=True), "leaky": lambda: nn.LeakyReLU(0.1), "prelu": lambda: nn.PReLU(),
            "elu": lambda: nn.ELU(), "gelu": lambda: nn.GELU(), "silu": lambda: nn.SiLU()}[kind]()


class ConvPass(nn.Module):
    def __init__(self, dims, cin, cout, norm, act, padding):
        super().__init__()
        conv = (nn.Conv1d, nn.Conv2d, nn.Conv3d)[dims - 1]
        pad = 0 if padding == "valid" else 1
        mode = "zeros" if padding in ("valid", "zeros") else padding
        self.net = nn.Sequential(conv(cin, cout, 3, padding=pad, padding_mode=mode), norm_layer(norm, dims, cout),
                                 act_layer(act), conv(cout, cout, 3, padding=pad, padding_mode=mode), act_layer(act))

    def forward(self, x):
        return self.net(x)


class Head(nn.Module):
    """How a UNet ends: an activation, several heads in a dict, or a channel
    concatenation of heads that end differently."""

    def __init__(self, dims, cin, kind):
        super().__init__()
        conv = (nn.Conv1d, nn.Conv2d, nn.Conv3d)[dims - 1]
        self.kind = kind
        self.a = conv(cin, 3 if kind in ("softmax", "log_softmax") else 1, 1)
        self.b = conv(cin, 2, 1)

    def forward(self, x) -> dict[str, torch.Tensor]:
        y = self.a(x)
        if self.kind == "sigmoid":
            return {"out": torch.sigmoid(y)}
        if self.kind == "softmax":
            return {"out": torch.softmax(y, dim=1)}
        if self.kind == "log_softmax":
            return {"out": F.log_softmax(y, dim=1)}
        if self.kind == "tanh":
            return {"out": torch.tanh(y)}
        if self.kind == "clamp":
            return {"out": torch.clamp(y, 0.0, 1.0)}
        if self.kind == "dict":
            return {"mask": torch.sigmoid(y), "affinities": self.b(x)}
        if self.kind == "cat":
            return {"out": torch.cat([torch.sigmoid(y), self.b(x)], 1)}
        return {"out": y}


class UNet(nn.Module):
    def __init__(self, dims=2, cin=1, base=4, norm="batch", act="relu", up="nearest", padding="zeros", head="sigmoid"):
        super().__init__()
        pool = (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d)[dims - 1]
        convt = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)[dims - 1]
        self.down0 = ConvPass(dims, cin, base, norm, act, padding)
        self.pool = pool(2)
        self.down1 = ConvPass(dims, base, base * 2, norm, act, padding)
        if up == "transposed":
            self.up = nn.Sequential(convt(base * 2, base, 2, stride=2))
        else:
            conv = (nn.Conv1d, nn.Conv2d, nn.Conv3d)[dims - 1]
            self.up = nn.Sequential(nn.Upsample(scale_factor=2.0, mode=up), conv(base * 2, base, 1))
        self.up0 = ConvPass(dims, base * 2, base, norm, act, padding)
        self.head = Head(dims, base, head)

    def forward(self, x):
        f0 = self.down0(x)
        u = self.up(self.down1(self.pool(f0)))
        f = self.up0(torch.cat([crop_to(f0, u.shape), u], 1))
        return self.head(f)


class Single(nn.Module):
    """A UNet whose dict has one entry, returned as a plain tensor; with
    `resize_after`, resized to twice the size after its activation (as
    segmentation models do with their logits or probabilities)."""

    def __init__(self, resize_after="", **kw):
        super().__init__()
        self.unet = UNet(**kw)
        self.resize_after = resize_after

    def forward(self, x):
        y = self.unet(x)["out"]
        if self.resize_after != "":
            y = F.interpolate(y, scale_factor=2.0, mode=self.resize_after)
        return y


class LogitsUpsampled(nn.Module):
    """A segmentation head: logits at a quarter of the size, resized bilinearly
    to the input's size (align_corners as given)."""

    def __init__(self, align_corners: bool, then_sigmoid: bool):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2, padding=1),
                                  nn.ReLU(), nn.Conv2d(8, 2, 1))
        self.align_corners = align_corners
        self.then_sigmoid = then_sigmoid

    def forward(self, x):
        y = self.body(x)
        if self.then_sigmoid:
            y = torch.sigmoid(y)
        return F.interpolate(y, size=[x.shape[2], x.shape[3]], mode="bilinear", align_corners=self.align_corners)


class SigmoidThenPool(nn.Module):
    """sigmoid, then average pooling and a channel mean: still in (0, 1)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        y = torch.sigmoid(self.conv(x))
        return F.avg_pool2d(y, 3, stride=2, ceil_mode=True).mean([1], keepdim=True)


class Bicubic(nn.Module):
    """sigmoid, then a bicubic resize: overshoots, so the range is not kept."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 1)

    def forward(self, x):
        return F.interpolate(torch.sigmoid(self.conv(x)), scale_factor=2.0, mode="bicubic", align_corners=False)


class WriteThroughSlice(nn.Module):
    """A sigmoid written in place into one channel of a tensor that is then
    returned whole (x[:, :1].sigmoid_()): a mask channel and raw affinities."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(1, 3, 1)

    def forward(self, x):
        h = self.conv(x)
        h[:, :1].sigmoid_()
        return h


class Conv1dNet(nn.Module):
    """A 1D temporal convolution net (audio, signals): strided and dilated
    convolutions, BatchNorm1d, pooling over time, a softmax over classes."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(2, 8, 5, stride=2, padding=2), nn.BatchNorm1d(8), nn.ReLU(),
                                 nn.Conv1d(8, 12, 3, dilation=2, padding=2), nn.ReLU(), nn.MaxPool1d(3, ceil_mode=True),
                                 nn.Conv1d(12, 6, 3, groups=3), nn.AdaptiveAvgPool1d(1))
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        return torch.softmax(self.fc(torch.flatten(self.net(x), 1)), dim=-1)


class ChannelMeanHead(nn.Module):
    """x.mean([2, 3]) then a linear layer: a list argument."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean([2, 3]))


class FourierUnit(nn.Module):
    """LaMa's Fourier unit (the global branch of its fast Fourier
    convolutions): rfftn over H and W, the real and imaginary parts as
    channels through a 1x1 convolution, batch norm and ReLU, back to complex,
    irfftn to the input's size."""

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(2 * channels, 2 * channels, 1, bias=False)
        self.bn = nn.BatchNorm2d(2 * channels)

    def forward(self, x):
        b, c, h, w = x.shape
        ff = torch.fft.rfftn(x, dim=(-2, -1), norm="ortho")
        ff = torch.stack((ff.real, ff.imag), dim=-1)
        ff = ff.permute(0, 1, 4, 2, 3).contiguous().view(b, -1, h, w // 2 + 1)
        ff = torch.relu(self.bn(self.conv(ff)))
        ff = ff.view(b, -1, 2, h, w // 2 + 1).permute(0, 1, 3, 4, 2).contiguous()
        ff = torch.complex(ff[..., 0], ff[..., 1])
        return torch.fft.irfftn(ff, s=(h, w), dim=(-2, -1), norm="ortho")


class FfcBlock(nn.Module):
    """A LaMa-style inpainting block: a local 3x3 branch and the Fourier
    unit's global one, summed with the input; a sigmoid head. 6 channels
    and an odd width (17: 9 frequencies)."""

    def __init__(self, channels=6):
        super().__init__()
        self.inp = nn.Conv2d(3, channels, 3, padding=1)
        self.local = nn.Conv2d(channels, channels, 3, padding=1)
        self.glob = FourierUnit(channels)
        self.head = nn.Conv2d(channels, 1, 1)

    def forward(self, x):
        h = torch.relu(self.inp(x))
        h = h + self.local(h) + self.glob(h)
        return torch.sigmoid(self.head(h))


class AfnoFilter(nn.Module):
    """FourCastNet's adaptive Fourier neural operator filter (AFNO2D) over a
    [B, H, W, C] token grid: rfft2, the channels in blocks, a two-layer
    complex MLP per block (its real and imaginary parts by einsum), softshrink,
    back to complex and irfft2; the input added."""

    def __init__(self, channels=8, blocks=2):
        super().__init__()
        self.blocks, self.size = blocks, channels // blocks
        self.w1 = nn.Parameter(0.3 * torch.randn(2, blocks, self.size, self.size))
        self.b1 = nn.Parameter(0.1 * torch.randn(2, blocks, self.size))
        self.w2 = nn.Parameter(0.3 * torch.randn(2, blocks, self.size, self.size))
        self.b2 = nn.Parameter(0.1 * torch.randn(2, blocks, self.size))

    @staticmethod
    def mix(x, w):
        return torch.einsum("...bi,bio->...bo", x, w)

    def forward(self, x):
        b, h, w, c = x.shape
        z = torch.fft.rfft2(x, dim=(1, 2), norm="ortho").reshape(b, h, w // 2 + 1, self.blocks, self.size)
        r1 = torch.relu(self.mix(z.real, self.w1[0]) - self.mix(z.imag, self.w1[1]) + self.b1[0])
        i1 = torch.relu(self.mix(z.imag, self.w1[0]) + self.mix(z.real, self.w1[1]) + self.b1[1])
        r2 = self.mix(r1, self.w2[0]) - self.mix(i1, self.w2[1]) + self.b2[0]
        i2 = self.mix(i1, self.w2[0]) + self.mix(r1, self.w2[1]) + self.b2[1]
        z = torch.view_as_complex(nn.functional.softshrink(torch.stack([r2, i2], dim=-1), lambd=0.01))
        return torch.fft.irfft2(z.reshape(b, h, w // 2 + 1, c), s=(h, w), dim=(1, 2), norm="ortho") + x


class AfnoBlock(nn.Module):
    """A patch embedding, the AFNO filter over the tokens (channels last) and
    a 1x1 head: 8 channels in 2 blocks, a 12 x 10 grid."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Conv2d(3, 8, 3, padding=1)
        self.filter = AfnoFilter()
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        t = self.embed(x).permute(0, 2, 3, 1)
        return self.head(self.filter(t).permute(0, 3, 1, 2))


class SpectralConv2d(nn.Module):
    """neuraloperator's Fourier layer (FNO's SpectralConv2d): rfft2, the
    lowest modes of both signs along the height multiplied by complex weights
    (einsum of complex operands), written into a complex zero spectrum
    (torch.zeros(dtype=cfloat), slice assignment), irfft2."""

    def __init__(self, channels, modes1, modes2):
        super().__init__()
        self.modes1, self.modes2 = modes1, modes2
        scale = 1 / (channels * channels)
        self.weights1 = nn.Parameter(scale * torch.rand(channels, channels, modes1, modes2, dtype=torch.cfloat))
        self.weights2 = nn.Parameter(scale * torch.rand(channels, channels, modes1, modes2, dtype=torch.cfloat))

    @staticmethod
    def compl_mul2d(x, w):
        return torch.einsum("bixy,ioxy->boxy", x, w)

    def forward(self, x):
        b, c, h, w = x.shape
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(b, c, h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
        out_ft[:, :, :self.modes1, :self.modes2] = self.compl_mul2d(x_ft[:, :, :self.modes1, :self.modes2], self.weights1)
        out_ft[:, :, -self.modes1:, :self.modes2] = self.compl_mul2d(x_ft[:, :, -self.modes1:, :self.modes2], self.weights2)
        return torch.fft.irfft2(out_ft, s=(h, w))


class FnoBlock(nn.Module):
    """A 2D Fourier neural operator (Li et al.): a lift, two Fourier layers
    each beside a 1x1 convolution with a GELU, a projection. 5 channels, 3 x 4
    modes on a 14 x 11 grid."""

    def __init__(self, channels=5):
        super().__init__()
        self.lift = nn.Conv2d(3, channels, 1)
        self.spectral = nn.ModuleList([SpectralConv2d(channels, 3, 4) for _ in range(2)])
        self.pointwise = nn.ModuleList([nn.Conv2d(channels, channels, 1) for _ in range(2)])
        self.project = nn.Conv2d(channels, 1, 1)

    def forward(self, x):
        h = self.lift(x)
        for spectral, pointwise in zip(self.spectral, self.pointwise):
            h = nn.functional.gelu(spectral(h) + pointwise(h))
        return self.project(h)


class SpectrogramNet(nn.Module):
    """An audio front end as speech and sound classifiers build it: torch.stft
    (hann window, centred reflect padding), magnitudes squared, a mel-like
    filterbank (a fixed matrix), log, then a small 2D convolution head with a
    sigmoid per class. n_fft 64, hop 16, 12 bands."""

    def __init__(self, n_fft=64, hop=16, bands=12, classes=3):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("filterbank", torch.rand(n_fft // 2 + 1, bands) / n_fft)
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.head = nn.Linear(4, classes)

    def forward(self, x):
        spec = torch.stft(x, self.n_fft, hop_length=self.hop, window=self.window, center=True, return_complex=True)
        mel = torch.log(torch.matmul(spec.abs().pow(2).transpose(1, 2), self.filterbank) + 1e-6)
        h = torch.relu(self.conv(mel.unsqueeze(1))).mean(dim=(2, 3))
        return torch.sigmoid(self.head(h))


# -------------------------------------------------------------- torchvision --


def tv(name, **kw):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kw)
    return make


def tv_seg(name, **kw):
    def make():
        import torchvision
        return getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, **kw)
    return make


def tv_video(name):
    def make():
        import torchvision
        return getattr(torchvision.models.video, name)(weights=None)
    return make


def small_vit():
    import torchvision
    return torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                                               mlp_dim=64, num_classes=10)


def small_swin():
    import torchvision
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=[4, 4],
                           num_classes=10)


NONE = {"kind": "none"}
SIGMOID = {"kind": "sigmoid"}
IMG = [(1, 3, 64, 64)]
IMG96 = [(1, 3, 96, 96)]
VIDEO = [(1, 3, 4, 32, 32)]


def unet(how, **kw):
    return (lambda: Single(**kw)), how


# name -> (constructor, input shapes, "trace"|"script", expected activation per output, set)
ZOO = {}


def add(name, ctor, shapes, how, activation, which="small"):
    ZOO[name] = (ctor, shapes, how, activation, which)


# torchvision classification: logits, "none".
for name, shapes, which in [
        ("alexnet", [(1, 3, 64, 64)], "large"), ("vgg11", IMG, "large"), ("vgg11_bn", IMG, "large"),
        ("resnet18", IMG, "small"), ("resnet50", IMG, "small"), ("resnext50_32x4d", IMG, "small"),
        ("wide_resnet50_2", IMG, "large"), ("densenet121", IMG, "small"), ("squeezenet1_0", IMG, "small"),
        ("squeezenet1_1", IMG, "small"), ("inception_v3", [(1, 3, 80, 80)], "small"), ("googlenet", IMG, "small"),
        ("shufflenet_v2_x0_5", IMG, "small"), ("mobilenet_v2", IMG, "small"), ("mobilenet_v3_small", IMG, "small"),
        ("mobilenet_v3_large", IMG, "small"), ("mnasnet0_5", IMG, "small"), ("efficientnet_b0", IMG, "small"),
        ("efficientnet_v2_s", IMG, "small"), ("regnet_x_400mf", IMG, "small"), ("regnet_y_400mf", IMG, "small"),
        ("convnext_tiny", IMG, "small"), ("vit_b_16", [(1, 3, 224, 224)], "large"), ("swin_t", IMG, "small"),
        ("maxvit_t", [(1, 3, 224, 224)], "large")]:
    kw = {"aux_logits": False, "init_weights": True} if name in ("inception_v3", "googlenet") else {}
    # squeezenet's classifier ends in a ReLU, then pools.
    act = [{"kind": "relu", "after": ["adaptive_avg_pool2d"]}] if name.startswith("squeezenet") else [NONE]
    add(name, tv(name, **kw), shapes, "trace", act, which)
add("vit_small_traced", small_vit, [(1, 3, 32, 32)], "trace", [NONE])
add("swin_small_traced", small_swin, [(1, 3, 32, 32)], "trace", [NONE])
# Scripted forms of torchvision models (what torch.jit.script users ship).
for name in ["resnet18", "mobilenet_v3_small", "shufflenet_v2_x0_5", "efficientnet_b0", "mnasnet0_5"]:
    add(name + "_scripted", tv(name), IMG, "script", [NONE])

# Segmentation: logits resized bilinearly to the input size, in a dict.
for name, which in [("fcn_resnet50", "large"), ("deeplabv3_resnet50", "large"),
                    ("deeplabv3_mobilenet_v3_large", "small"), ("lraspp_mobilenet_v3_large", "small")]:
    kw = {"aux_loss": False} if name != "lraspp_mobilenet_v3_large" else {}
    add(name, tv_seg(name, num_classes=3, **kw), IMG96, "trace",
        [{"kind": "none", "after": ["upsample_bilinear2d"]}], which)

# Video: 3D convolutions.
for name, which in [("r3d_18", "large"), ("mc3_18", "small"), ("r2plus1d_18", "large")]:
    add(name, tv_video(name), VIDEO, "trace", [NONE], which)

# The UNets people build, traced and scripted.
SOFTMAX1 = {"kind": "softmax", "dim": 1}
CAT = {"kind": "per_channel", "channels": [{"begin": 0, "end": 1, "kind": "sigmoid"}, {"begin": 1, "end": 3, "kind": "none"}]}
UNETS = [
    ("unet2d_bn_relu_nearest_sigmoid", dict(dims=2, norm="batch", act="relu", up="nearest", head="sigmoid"), [SIGMOID]),
    ("unet2d_gn_leaky_bilinear_softmax", dict(dims=2, norm="group", act="leaky", up="bilinear", head="softmax"), [SOFTMAX1]),
    ("unet2d_in_relu_bilinear_log_softmax", dict(dims=2, norm="instance", act="relu", up="bilinear", head="log_softmax"),
     [{"kind": "log_softmax", "dim": 1}]),
    ("unet2d_in_prelu_transposed_reflect_tanh",
     dict(dims=2, norm="instance", act="prelu", up="transposed", padding="reflect", head="tanh"), [{"kind": "tanh"}]),
    ("unet2d_elu_replicate_clamp", dict(dims=2, norm="none", act="elu", up="nearest", padding="replicate", head="clamp"),
     [{"kind": "clip", "min": 0.0, "max": 1.0}]),
    ("unet2d_valid_gelu_cat", dict(dims=2, norm="batch", act="gelu", up="transposed", padding="valid", head="cat"), [CAT]),
    ("unet3d_in_gelu_trilinear_sigmoid", dict(dims=3, norm="instance", act="gelu", up="trilinear", head="sigmoid"), [SIGMOID]),
    ("unet3d_bn_silu_nearest_dict", dict(dims=3, norm="batch", act="silu", up="nearest", head="dict"), [SIGMOID, NONE]),
    ("unet3d_valid_relu_transposed_none", dict(dims=3, norm="none", act="relu", up="transposed", padding="valid", head="none"),
     [NONE]),
    ("unet3d_sigmoid_then_trilinear", dict(dims=3, norm="group", act="relu", up="nearest", head="sigmoid",
                                           resize_after="trilinear"),
     [{"kind": "sigmoid", "after": ["upsample_trilinear3d"]}]),
    ("unet1d_bn_relu_linear_sigmoid", dict(dims=1, norm="batch", act="relu", up="linear", head="sigmoid"), [SIGMOID]),
]
SHAPES = {1: [(1, 1, 64)], 2: [(1, 1, 64, 64)], 3: [(1, 1, 24, 24, 24)]}
for name, kw, act in UNETS:
    shapes = SHAPES[kw["dims"]]
    if kw.get("padding") == "valid":
        shapes = [tuple(s if i < 2 else s + 12 for i, s in enumerate(shapes[0]))]
    ctor = (lambda kw=kw: UNet(**kw)) if kw["head"] == "dict" else (lambda kw=kw: Single(**kw))
    add(name + "_traced", ctor, shapes, "trace", act)
    add(name + "_scripted", ctor, shapes, "script", act)

add("seg_logits_bilinear", lambda: LogitsUpsampled(False, False), [(1, 3, 48, 40)], "trace",
    [{"kind": "none", "after": ["upsample_bilinear2d"]}])
add("seg_sigmoid_bilinear_aligned", lambda: LogitsUpsampled(True, True), [(1, 3, 48, 40)], "script",
    [{"kind": "sigmoid", "after": ["upsample_bilinear2d"]}])
add("sigmoid_then_pool", SigmoidThenPool, [(1, 3, 17, 15)], "trace", [{"kind": "sigmoid", "after": ["avg_pool2d", "mean"]}])
add("sigmoid_then_bicubic", Bicubic, [(1, 3, 9, 9)], "trace", [{"kind": "unknown"}])
add("write_through_slice_scripted", WriteThroughSlice, [(1, 1, 4, 5, 3)], "script", [CAT])
add("write_through_slice_traced", WriteThroughSlice, [(1, 1, 4, 5, 3)], "trace", [CAT])
add("conv1d_net_traced", Conv1dNet, [(2, 2, 50)], "trace", [{"kind": "softmax", "dim": 1}])
add("conv1d_net_scripted", Conv1dNet, [(2, 2, 50)], "script", [{"kind": "softmax", "dim": 1}])
add("channel_mean_head_scripted", ChannelMeanHead, [(1, 3, 9, 7)], "script", [NONE])
add("ffc_block_traced", FfcBlock, [(1, 3, 20, 17)], "trace", [SIGMOID])
add("ffc_block_scripted", FfcBlock, [(1, 3, 20, 17)], "script", [SIGMOID])
add("afno_block_traced", AfnoBlock, [(1, 3, 12, 10)], "trace", [NONE])
add("fno_block_traced", FnoBlock, [(1, 3, 14, 11)], "trace", [NONE])
add("spectrogram_net_traced", SpectrogramNet, [(2, 700)], "trace", [SIGMOID])


# ------------------------------------------------------------------- main --


def build(name):
    """(model in eval mode, its seeded inputs): what make() saves, and what
    make_pt2_models.py exports with torch.export."""
    ctor, shapes, how, activation, which = ZOO[name]
    torch.manual_seed(1234)
    model = ctor().eval()
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    # Layers initialized to zeros (ViT's head, most biases) would let a wrong
    # kernel go unseen: a zero head makes every output 0 whatever came before.
    with torch.no_grad():
        for p in model.parameters():
            if not p.any():
                p.normal_(0, 0.02)
    inputs = tuple(torch.randn(s) for s in shapes)
    return model, inputs


def make(name, out_dir):
    ctor, shapes, how, activation, which = ZOO[name]
    model, inputs = build(name)
    with torch.no_grad():
        if how == "trace":
            module = torch.jit.trace(model, inputs, strict=False)
        else:
            module = torch.jit.script(model)
        module = module.eval()
        outputs = module(*inputs)
        reference = model(*inputs)
    # The TorchScript module computes what the Python module does, and its
    # outputs vary (a constant output would make any backend look right).
    for a, b in zip(leaves(outputs), leaves(reference)):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-5), name
        assert a.numel() < 2 or a.float().std() > 0, f"{name}: a constant output"
    path = os.path.join(out_dir, name + ".ts")
    module.save(path)
    flat = leaves(outputs)
    write_safetensors(os.path.join(out_dir, name + ".io.safetensors"),
                      [(f"input.{i}", t) for i, t in enumerate(inputs)] + [(f"output.{i}", t) for i, t in enumerate(flat)])
    facts = {
        "name": name,
        "how": how,
        "set": which,
        "input_shapes": [list(s) for s in shapes],
        "output_shapes": [list(t.shape) for t in flat],
        "activation": activation,
        "out_spec": json.dumps([1, spec_of(outputs)]),
        "parameters": sum(p.numel() for p in model.parameters()),
        "torch_version": torch.__version__.split("+")[0],
    }
    with open(os.path.join(out_dir, name + ".expected.json"), "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)


def main():
    out_dir = sys.argv[1]
    which = sys.argv[sys.argv.index("--set") + 1] if "--set" in sys.argv else "small"
    only = set(sys.argv[sys.argv.index("--only") + 1].split(",")) if "--only" in sys.argv else None
    os.makedirs(out_dir, exist_ok=True)
    stamp = max(os.path.getmtime(__file__), os.path.getmtime(os.path.join(os.path.dirname(__file__), "make_test_models.py")))
    for name, entry in ZOO.items():
        if (which != "all" and entry[4] != which) or (only and name not in only):
            continue
        done = os.path.join(out_dir, name + ".expected.json")
        if os.path.exists(done) and os.path.getmtime(done) > stamp:
            continue
        make(name, out_dir)
        print(f"[zoo] {name}", flush=True)
    index = {"small": [n for n, e in ZOO.items() if e[4] == "small"], "large": [n for n, e in ZOO.items() if e[4] == "large"]}
    with open(os.path.join(out_dir, "index.json"), "w") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()

"""Models from the model libraries people build on (MONAI's 3D segmentation
networks, timm's classifiers and vision transformers, segmentation_models_pytorch's
2D segmenters), with seeded random weights (no download), saved as torch.export
archives in both IRs, for scripts/library_zoo.sh:

  OUT/NAME.pt2, OUT/NAME.core.pt2, OUT/NAME.io.safetensors, OUT/NAME.expected.json
  OUT/index.json   {"models": [...], "refused": {NAME: torch.export's reason}, "versions": {...}}

The same files make_pt2_models.py writes, so tests/js/pt2.test.mjs runs them in
wasm as it runs our own. Each model's expected activation is what its last
module is (a convolution or a linear layer: none; smp's `activation`; MONAI's
HighResNet ends in a norm and a ReLU).

Usage: make_library_models.py OUT_DIR [--only NAME,...]. Needs timm, monai and
segmentation_models_pytorch importable (scripts/library_zoo.sh installs them).
"""
import json
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_test_models import leaves, write_safetensors  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore")

NONE = [{"kind": "none"}]


def monai_models():
    from monai.networks import nets
    vol = (1, 1, 32, 32, 32)
    return {
        "monai_unet3d": (lambda: nets.UNet(3, 1, 2, channels=(8, 16, 32, 64), strides=(2, 2, 2), num_res_units=2), vol, NONE),
        "monai_unet2d": (lambda: nets.UNet(2, 1, 3, channels=(8, 16, 32), strides=(2, 2), num_res_units=1), (1, 1, 64, 64), NONE),
        "monai_basic_unet": (lambda: nets.BasicUNet(3, 1, 2, features=(8, 8, 16, 32, 64, 8)), vol, NONE),
        "monai_segresnet": (lambda: nets.SegResNet(3, init_filters=8, in_channels=1, out_channels=2), vol, NONE),
        "monai_attention_unet": (lambda: nets.AttentionUnet(3, 1, 2, channels=(8, 16, 32), strides=(2, 2)), vol, NONE),
        "monai_dynunet": (lambda: nets.DynUNet(3, 1, 2, kernel_size=[3, 3, 3], strides=[1, 2, 2], upsample_kernel_size=[2, 2]), vol, NONE),
        "monai_vnet": (lambda: nets.VNet(3, 1, 2), vol, NONE),
        "monai_unetr": (lambda: nets.UNETR(1, 2, img_size=(32, 32, 32), feature_size=8, hidden_size=96, mlp_dim=192, num_heads=4), vol, NONE),
        # Its deepest stage is 1/32 of the input: 64^3 leaves it 2^3 (instance norm needs more than one voxel).
        "monai_swin_unetr": (lambda: nets.SwinUNETR(in_channels=1, out_channels=2, feature_size=12, spatial_dims=3), (1, 1, 64, 64, 64), NONE),
        # Its last block is a convolution, a norm and a ReLU: logits clipped at 0.
        "monai_highresnet": (lambda: nets.HighResNet(3, 1, 2), (1, 1, 24, 24, 24), [{"kind": "relu"}]),
    }


def timm_models():
    import timm
    img = (1, 3, 64, 64)

    def make(name, **kw):
        return lambda: timm.create_model(name, pretrained=False, num_classes=10, **kw)

    return {
        "timm_resnet18": (make("resnet18"), img, NONE),
        "timm_resnet50d": (make("resnet50d"), img, NONE),
        "timm_efficientnet_b0": (make("efficientnet_b0"), img, NONE),
        "timm_mobilenetv3_small": (make("mobilenetv3_small_100"), img, NONE),
        "timm_convnext_atto": (make("convnext_atto"), img, NONE),
        "timm_regnetx_002": (make("regnetx_002"), img, NONE),
        "timm_ghostnet": (make("ghostnet_100"), img, NONE),
        "timm_poolformer_s12": (make("poolformer_s12"), img, NONE),
        "timm_vit_tiny": (make("vit_tiny_patch16_224", img_size=64), img, NONE),
        "timm_deit_tiny_distilled": (make("deit_tiny_distilled_patch16_224", img_size=64), img, NONE),
        "timm_swin_tiny": (make("swin_tiny_patch4_window7_224", img_size=224), (1, 3, 224, 224), NONE),
        "timm_mobilevit_xxs": (make("mobilevit_xxs"), (1, 3, 128, 128), NONE),
        "timm_levit_128s": (make("levit_128s", img_size=128), (1, 3, 128, 128), NONE),
        "timm_efficientformer_l1": (make("efficientformer_l1"), (1, 3, 224, 224), NONE),
    }


def smp_models():
    import segmentation_models_pytorch as smp
    img = (1, 3, 64, 64)

    def make(arch, encoder="resnet18", **kw):
        return lambda: getattr(smp, arch)(encoder_name=encoder, encoder_weights=None, in_channels=3, classes=2, **kw)

    return {
        "smp_unet_resnet18": (make("Unet"), img, NONE),
        "smp_unet_sigmoid": (make("Unet", activation="sigmoid"), img, [{"kind": "sigmoid"}]),
        "smp_unetplusplus": (make("UnetPlusPlus"), img, NONE),
        "smp_fpn": (make("FPN"), img, NONE),
        "smp_deeplabv3plus": (make("DeepLabV3Plus"), img, NONE),
        "smp_linknet": (make("Linknet"), img, NONE),
        "smp_pspnet": (make("PSPNet"), img, NONE),
        "smp_manet": (make("MAnet"), img, NONE),
        "smp_pan": (make("PAN"), (1, 3, 256, 256), NONE),  # its pyramid pools the 1/32 map by 7, 5 and 3
        "smp_unet_efficientnet": (make("Unet", encoder="efficientnet-b0"), img, NONE),
        "smp_segformer": (make("Segformer", encoder="mit_b0"), img, NONE),
    }


def models():
    out = {}
    for group in (monai_models, timm_models, smp_models):
        out.update(group())
    return out


def make(name, entry, out_dir):
    ctor, shape, activation = entry
    torch.manual_seed(1234)
    model = ctor().eval()
    x = torch.randn(shape)
    with torch.no_grad():
        program = torch.export.export(model, (x,), strict=False)
        outputs = program.module()(x)
        reference = model(x)
    flat = leaves(outputs)
    for a, b in zip(flat, leaves(reference)):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-5), name
    torch.export.save(program, os.path.join(out_dir, name + ".pt2"))
    torch.export.save(program.run_decompositions(), os.path.join(out_dir, name + ".core.pt2"))
    # The same model as TorchScript, traced (what a torch.jit.trace user ships): a
    # trace the library's code refuses is a fact kept with its reason, not a failure.
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.jit.trace(model, (x,), check_trace=False, strict=False).save(os.path.join(out_dir, name + ".ts"))
        traced = None
    except Exception as e:
        traced = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:300]
    write_safetensors(os.path.join(out_dir, name + ".io.safetensors"),
                      [("input.0", x)] + [(f"output.{i}", t) for i, t in enumerate(flat)], keep_integers=True)
    facts = {"name": name, "input_shapes": [list(shape)], "output_shapes": [list(t.shape) for t in flat],
             "activation": activation * len(flat), "symbolic_inputs": []}
    with open(os.path.join(out_dir, name + ".expected.json"), "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)
    return traced


def main():
    out_dir = sys.argv[1]
    only = set(sys.argv[sys.argv.index("--only") + 1].split(",")) if "--only" in sys.argv else None
    os.makedirs(out_dir, exist_ok=True)
    import monai
    import segmentation_models_pytorch
    import timm
    index = {"models": [], "refused": {}, "traced": [], "trace_refused": {},
             "versions": {"torch": torch.__version__, "timm": timm.__version__, "monai": monai.__version__,
                          "segmentation_models_pytorch": segmentation_models_pytorch.__version__}}
    for name, entry in models().items():
        if only and name not in only:
            continue
        try:
            traced = make(name, entry, out_dir)
        except Exception as e:  # the library's model or torch.export refusing it: a fact about them, kept with its reason
            index["refused"][name] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:300]
            print(f"[library] {name}: refused: {index['refused'][name]}", flush=True)
            continue
        index["models"].append(name)
        if traced:
            index["trace_refused"][name] = traced
        else:
            index["traced"].append(name)
        print(f"[library] {name}" + (f" (no trace: {traced})" if traced else ""), flush=True)
    with open(os.path.join(out_dir, "index.json"), "w") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()

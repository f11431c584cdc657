"""The benchmark models, made by real PyTorch (Debian's /usr/bin/python3):
mobilenet_v2 and resnet18 at 224, a 2D UNet at 256 and a cellmap-style 3D
UNet at 64^3, each as TorchScript (traced) and as ONNX exported by
torch.onnx.export from the same module with the same weights.

Usage: /usr/bin/python3 bench/make_models.py OUT_DIR
Writes OUT_DIR/<model>.ts, <model>.onnx and models.json (input shapes).
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))
from make_test_models import UNet2d, UNet3d, torchvision_model  # noqa: E402

MODELS = {
    "mobilenet_v2": (lambda: torchvision_model("mobilenet_v2"), [1, 3, 224, 224]),
    "resnet18": (lambda: torchvision_model("resnet18"), [1, 3, 224, 224]),
    "unet2d": (lambda: UNet2d(3, 16, 2), [1, 3, 256, 256]),
    "unet3d": (lambda: UNet3d(1, 12, 2), [1, 1, 64, 64, 64]),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    index = {}
    for name, (ctor, shape) in MODELS.items():
        index[name] = {"input_shape": shape}
        ts, onnx = os.path.join(out, name + ".ts"), os.path.join(out, name + ".onnx")
        if os.path.exists(ts) and os.path.exists(onnx) and os.path.getmtime(ts) > os.path.getmtime(__file__):
            continue
        torch.manual_seed(0)
        model = ctor().eval()
        x = torch.randn(*shape)
        with torch.no_grad():
            torch.jit.trace(model, x).save(ts)
            torch.onnx.export(model, x, onnx, opset_version=13, input_names=["input"], output_names=["output"])
        print(f"[bench] {name}: {ts}, {onnx}")
    with open(os.path.join(out, "models.json"), "w") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()

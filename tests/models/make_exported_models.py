"""Exports some of the test models with tracegraph.export (python/), through
torch.export (NAME_export: OUT/NAME/NAME.pt2, as torch.export gives it or in
core ATen) and through the fx trace (NAME_fx: OUT/NAME/NAME.{json,safetensors}),
in the layout the exported TorchScript models have, plus the module's own
outputs (NAME.io.safetensors) and facts (NAME.expected.json, whose "file"
names the model file).
The weights and inputs are make_test_models.py's, seeded the same way, so each
equals the TorchScript model it names in "torchscript".

Usage: make_exported_models.py OUT_DIR. Run by the torch of bootstrap's venv
with python/ on PYTHONPATH (tracegraph.export is pure Python over torch).
"""
import json
import os
import sys
import warnings

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_test_models as tm  # noqa: E402
from tracegraph.export import export  # noqa: E402

warnings.filterwarnings("ignore", category=FutureWarning, module="torch")
torch.set_num_threads(1)


def scripted_unet_then_sigmoid():
    """The seed's case for the fx path: a TorchScript UNet inside a Sequential with its sigmoid."""
    return nn.Sequential(torch.jit.script(tm.UNet3d()), nn.Sigmoid())


# name -> (the TorchScript test model with the same weights, constructor, method,
# whether the program is saved in core ATen)
EXPORTED = {
    "unet3d_sigmoid_export": ("unet3d_sigmoid_traced", None, "export", False),
    "unet3d_two_heads_export": ("unet3d_two_heads", None, "export", True),
    "unet3d_dict_out_export": ("unet3d_dict_out", None, "export", False),
    "unet3d_softmax_export": ("unet3d_softmax", None, "export", True),
    "unet3d_clamp_export": ("unet3d_clamp", None, "export", False),
    "unet2d_export": ("unet2d", None, "export", True),
    "resnet18_export": ("resnet18_traced", None, "export", False),
    "mobilenet_v2_export": ("mobilenet_v2_traced", None, "export", True),
    "unet3d_sigmoid_fx": ("unet3d_sigmoid_traced", scripted_unet_then_sigmoid, "fx", False),
    "unet3d_dict_out_fx": ("unet3d_dict_out", None, "fx", False),
    "unet2d_fx": ("unet2d", None, "fx", False),
}


def make(name, out_dir):
    torchscript, ctor, method, decompose = EXPORTED[name]
    base_ctor, shapes, _, activation = tm.MODELS[torchscript]
    torch.manual_seed(1234)
    model = (ctor or base_ctor)().eval()
    for m in model.modules():  # as make_test_models.py does
        if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm3d)):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    inputs = tuple(torch.randn(s) for s in shapes)
    with torch.no_grad():
        outputs = model(*inputs)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    written = export(model, inputs, os.path.join(d, name), method=method, decompose=decompose)
    flat = tm.leaves(outputs)
    tm.write_safetensors(os.path.join(d, name + ".io.safetensors"),
                         [(f"input.{i}", t) for i, t in enumerate(inputs)] + [(f"output.{i}", t) for i, t in enumerate(flat)])
    facts = {"name": name, "torchscript": torchscript, "reader": written.reader, "file": os.path.basename(written.path),
             "core_aten": decompose, "input_shapes": [list(s) for s in shapes],
             "output_shapes": [list(t.shape) for t in flat], "activation": activation, "out_spec": written.out_spec}
    with open(os.path.join(d, name + ".expected.json"), "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name in EXPORTED:
        make(name, out_dir)
        print(f"[exported] {name}")
    with open(os.path.join(out_dir, "exported_programs.json"), "w") as f:
        json.dump(sorted(EXPORTED), f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A traced 1,000-node model for scripts/bench_read.sh: 250 residual blocks
of conv 3x3, batch norm, ReLU and an add, 16 channels. Usage: OUT.ts"""
import sys
import warnings

import torch
import torch.nn as nn

warnings.filterwarnings("ignore")


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return x + torch.relu(self.bn(self.conv(x)))


torch.manual_seed(0)
model = nn.Sequential(*[Block(16) for _ in range(250)]).eval()
with torch.no_grad():
    torch.jit.trace(model, torch.randn(1, 16, 32, 32)).save(sys.argv[1])

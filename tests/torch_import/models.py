"""Models for torch_import_test.py: the two of seed document 003 and a small network using the other handlers."""

import torch
import torch.nn.functional as F
from torch import nn


class SeedMatmulRelu(nn.Module):
    """Seed 003's first model: matmul with a parameter, then relu (function calls and get_attr, no modules)."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(128, 128))

    def forward(self, x):
        return torch.relu(torch.matmul(x, self.weight))


class SeedMlp(nn.Module):
    """Seed 003's MLP: linear0 -> relu -> linear1 on a (1, 784) input."""

    def __init__(self):
        super().__init__()
        self.linear0 = nn.Linear(784, 128, bias=True)
        self.relu = nn.ReLU()
        self.linear1 = nn.Linear(128, 10, bias=True)

    def forward(self, x):
        return self.linear1(self.relu(self.linear0(x)))


class Mixed(nn.Module):
    """Conv with bias, functional forms, avg_pool, view, transpose, layer_norm, gelu, softmax, mean, scalars."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1, bias=True)
        self.pool = nn.AvgPool2d(2)
        self.norm = nn.LayerNorm(16)
        self.proj = nn.Linear(16, 4)
        self.head_weight = nn.Parameter(torch.randn(6, 16))

    def forward(self, x):
        y = F.max_pool2d(self.pool(F.relu(self.conv(x))), kernel_size=1)   # (1, 8, 4, 4)
        y = y.view(1, 8, 16).transpose(1, 2)                                # (1, 16, 8)
        y = y.permute(0, 2, 1) * 0.5 - 1.0                                  # (1, 8, 16)
        y = F.gelu(self.norm(y))
        z = torch.softmax(self.proj(y), dim=-1)                             # (1, 8, 4)
        w = F.linear(y, self.head_weight)                                   # (1, 8, 6)
        return torch.sigmoid(z.mean(dim=-1, keepdim=True)) + w


class Unsupported(nn.Module):
    """Uses torch.cumprod, which the importer does not know."""

    def forward(self, x):
        return torch.cumprod(x, dim=0)


def seed_matmul_relu():
    return SeedMatmulRelu()


def seed_mlp():
    return SeedMlp()


def mixed():
    return Mixed()


def unsupported():
    return Unsupported()

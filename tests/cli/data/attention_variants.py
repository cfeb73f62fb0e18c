"""Implementations `genesis compare` is tried on in tests/cli/test_compare_cmd.py."""
import math

import genesis
import genesis.nn.functional as F
from genesis import nn


def naive(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.softmax(-1) @ v


def fused(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def unscaled(q, k, v):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    return scores.softmax(-1) @ v


class Square(genesis.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x  # the bug: d(x*x)/dx is 2x


def square(x):
    return x * x


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x).tanh()


class MixerAgain(Mixer):
    def forward(self, x):
        return (2 * self.proj(x)).sigmoid() * 2 - 1  # tanh written another way


class NeedsWidth(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)

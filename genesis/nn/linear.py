"""`Linear` (y = x W^T + b), `Bilinear` (y = x1^T W x2 + b) and `Identity`."""
from __future__ import annotations

import math

from ..creation import empty
from ..tensor import Tensor
from . import init
from ._layers import bilinear, linear
from .module import Module
from .parameter import Parameter

__all__ = ["Linear", "Bilinear", "Identity"]


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """`y = x @ weight.T + bias` for x of shape (*, in_features).

    Initialised like PyTorch: weight ~ kaiming_uniform_(a=sqrt(5)), i.e.
    U(-1/sqrt(in_features), 1/sqrt(in_features)), and bias from the same range.

    >>> import genesis
    >>> layer = genesis.nn.Linear(3, 2)
    >>> layer.weight.shape, layer.bias.shape, layer(genesis.ones(5, 3)).shape
    (genesis.Size([2, 3]), genesis.Size([2]), genesis.Size([5, 2]))
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features, device=device, dtype=dtype))
        self.register_parameter("bias", Parameter(empty(out_features, device=device, dtype=dtype))
                                if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh weights with the default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """`y_o = x1 @ weight[o] @ x2 + bias[o]` for x1 of shape (*, in1_features) and x2 of
    shape (*, in2_features); weight and bias drawn from U(-1/sqrt(in1), 1/sqrt(in1)).

    >>> import genesis
    >>> layer = genesis.nn.Bilinear(3, 4, 2)
    >>> layer.weight.shape, layer(genesis.ones(5, 3), genesis.ones(5, 4)).shape
    (genesis.Size([2, 3, 4]), genesis.Size([5, 2]))
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, device=device,
                                      dtype=dtype))
        self.register_parameter("bias", Parameter(empty(out_features, device=device, dtype=dtype))
                                if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw weight and bias from U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        bound = 1 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")

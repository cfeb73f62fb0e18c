"""The reparameterised draws of Gamma and Dirichlet, as autograd Functions: forward draws from
the device's generator, backward applies the implicit derivatives of
`implicit_gradients` (PyTorch's `_standard_gamma` and `_sample_dirichlet` nodes)."""
from __future__ import annotations

from ..autograd.function import Function
from ..dtypes import finfo
from ..random import generator_for
from ..tensor import Tensor, wrap_array
from .implicit_gradients import beta_sample_derivative, gamma_sample_derivative

__all__ = ["DirichletSample", "StandardGamma"]


class StandardGamma(Function):
    """x ~ Gamma(concentration, 1), elementwise, with dx/dconcentration = -(dP/da) / p.

    >>> import genesis
    >>> alpha = genesis.tensor([2.0, 5.0], dtype=genesis.float64, requires_grad=True)
    >>> StandardGamma.apply(alpha).sum().backward()
    >>> bool((alpha.grad > 0).all())
    True
    """

    node_name = "StandardGamma"
    nondeterministic = True

    @staticmethod
    def forward(ctx, concentration: Tensor):
        device, data = concentration._device, concentration._data
        drawn = generator_for(device).standard_gamma(data.astype("float64"))
        drawn = device.xp.maximum(device.xp.asarray(drawn).astype(data.dtype), finfo(concentration.dtype).tiny)
        ctx.concentration, ctx.drawn = data, drawn
        return drawn

    @staticmethod
    def backward(ctx, grad: Tensor):
        xp = grad._device.xp
        derivative = gamma_sample_derivative(xp, ctx.concentration, ctx.drawn)
        return grad * wrap_array(derivative.astype(ctx.drawn.dtype), grad._device)


class DirichletSample(Function):
    """x ~ Dirichlet(concentration) over the last dimension (normalised Gamma draws), with the
    gradient of the Beta(αᵢ, Σα - αᵢ) marginals spread to keep Σx = 1: with
    gᵢ = (dxᵢ/dαᵢ) / (1 - xᵢ), dL/dαᵢ = gᵢ (dL/dxᵢ - Σⱼ xⱼ dL/dxⱼ)."""

    node_name = "SampleDirichlet"
    nondeterministic = True

    @staticmethod
    def forward(ctx, concentration: Tensor):
        device, data = concentration._device, concentration._data
        xp = device.xp
        gammas = xp.asarray(generator_for(device).standard_gamma(data.astype("float64")))
        drawn = (gammas / gammas.sum(-1, keepdims=True)).astype(data.dtype)
        drawn = xp.maximum(drawn, finfo(concentration.dtype).tiny)
        ctx.concentration, ctx.drawn = data, drawn
        return drawn

    @staticmethod
    def backward(ctx, grad: Tensor):
        xp = grad._device.xp
        alpha, x = ctx.concentration.astype("float64"), ctx.drawn.astype("float64")
        total = alpha.sum(-1, keepdims=True)
        derivative = beta_sample_derivative(xp, x, alpha, total - alpha)
        room = 1 - x
        scaled = xp.where(room > 0, derivative / xp.where(room > 0, room, 1.0), 0.0)
        scaled = wrap_array(scaled.astype(ctx.drawn.dtype), grad._device)
        drawn = wrap_array(ctx.drawn, grad._device)
        return scaled * (grad - (drawn * grad).sum(-1, keepdim=True))

"""Recurrent layers: `RNN`, `LSTM`, `GRU` and their single-step cells, as in PyTorch.

Same parameters (names, shapes, gate order, initialisation U(-1/sqrt(hidden), 1/sqrt(hidden)))
and the same options: `num_layers`, `bias`, `batch_first`, `dropout` between layers,
`bidirectional`, LSTM's `proj_size`, unbatched inputs, and a `PackedSequence` input
(`genesis.nn.utils.rnn`): each sequence runs for its own length, the output is packed like
the input and the final states come in the batch's original order. Each step is written with ops, so
gradients (of any order) come from them; the input projections of a whole sequence are one
matrix product, only the hidden-state products run step by step. Each step declares itself
(`genesis.autograd.module_scope.time_step`) with its unit: "" for a one-layer, one-direction
layer, else "l{k}" or "l{k}_reverse" as in the parameters' names.

Gates: LSTM (input, forget, cell, output) = chunks of x W_ih^T + b_ih + h W_hh^T + b_hh;
c' = f * c + i * g, h' = o * tanh(c'). GRU (reset, update, new): r, z from the summed
projections, n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)), h' = (1 - z) * n + z * h.

>>> import genesis
>>> lstm = genesis.nn.LSTM(input_size=3, hidden_size=4, num_layers=2, batch_first=True)
>>> output, (h, c) = lstm(genesis.randn(5, 7, 3))      # batch 5, 7 steps
>>> output.shape, h.shape, c.shape
(genesis.Size([5, 7, 4]), genesis.Size([2, 5, 4]), genesis.Size([2, 5, 4]))
"""
from __future__ import annotations

import itertools
import math

from ..autograd.grad_mode import grad_state
from ..autograd.module_scope import time_step
from ..creation import empty, zeros
from ..dtypes import float32
from ..ops.activation import relu
from ..ops.join import cat, stack
from ..ops.unary import sigmoid, tanh
from ..tensor import Tensor
from . import init
from ._layers import dropout, linear
from ._packed_steps import run_packed
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

__all__ = ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# -- one step ---------------------------------------------------------------------------------
def _rnn_step(projected: Tensor, h: Tensor, w_hh, b_hh, nonlinearity) -> Tensor:
    return nonlinearity(projected + linear(h, w_hh, b_hh))


def _lstm_step(projected: Tensor, state: tuple, w_hh, b_hh, w_hr) -> tuple:
    h, c = state
    i, f, g, o = (projected + linear(h, w_hh, b_hh)).chunk(4, -1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    return (h if w_hr is None else linear(h, w_hr)), c


def _gru_step(projected: Tensor, h: Tensor, w_hh, b_hh) -> Tensor:
    input_r, input_z, input_n = projected.chunk(3, -1)
    hidden_r, hidden_z, hidden_n = linear(h, w_hh, b_hh).chunk(3, -1)
    r = sigmoid(input_r + hidden_r)
    z = sigmoid(input_z + hidden_z)
    n = tanh(input_n + r * hidden_n)
    return (1 - z) * n + z * h


# -- whole sequences ----------------------------------------------------------------------------
class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU (`mode` picks the step)."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if not (isinstance(dropout, int | float) and 0 <= dropout <= 1):
            raise ValueError(f"{name}: dropout must be a number in [0, 1], got {dropout!r}")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError(f"{name}: hidden_size and num_layers must be positive, got "
                             f"{hidden_size} and {num_layers}")
        if proj_size < 0 or (proj_size and (mode != "LSTM" or proj_size >= hidden_size)):
            raise ValueError(f"{name}: proj_size must be 0, or (LSTM only) between 1 and "
                             f"hidden_size - 1, got {proj_size}")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        directions = 2 if bidirectional else 1
        output_size = proj_size or hidden_size
        gate_size = _GATES[mode] * hidden_size
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else output_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = {"weight_ih": (gate_size, layer_input), "weight_hh": (gate_size, output_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                for kind, shape in shapes.items():
                    setattr(self, kind + suffix, Parameter(empty(*shape, device=device, dtype=dtype)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1 / math.sqrt(self.hidden_size)
        for parameter in self.parameters():
            init.uniform_(parameter, -bound, bound)

    def _weights(self, layer: int, direction: int) -> tuple:
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        return tuple(getattr(self, kind + suffix, None)
                     for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def forward(self, input: Tensor | PackedSequence, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        name = type(self).__name__
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: expected an input of shape (L, N, H_in), (N, L, H_in) with "
                             f"batch_first, or unbatched (L, H_in); got {tuple(input.shape)}")
        batched = input.ndim == 3
        if not batched:
            input = input.unsqueeze(1)
            hx = _map_state(hx, lambda t: t.unsqueeze(1))
        elif self.batch_first:
            input = input.transpose(0, 1)
        if input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: expected input_size {self.input_size} in the last dim, got "
                             f"shape {tuple(input.shape)}")
        input, hx = self._autocast(input, hx)
        hx = self._initial_state(input, input.shape[1], hx)
        output, final = self._run(input, hx)
        if not batched:
            return output.squeeze(1), _map_state(final, lambda t: t.squeeze(1))
        if self.batch_first:
            output = output.transpose(0, 1)
        return output, final

    def _forward_packed(self, input: PackedSequence, hx) -> tuple:
        """The layer over packed sequences: a PackedSequence of outputs like `input`, and
        the final states in the batch's original order (as `hx` is given)."""
        data, batch_sizes, sorted_indices, unsorted_indices = input
        if data.ndim != 2 or data.shape[-1] != self.input_size:
            raise ValueError(f"{type(self).__name__}: expected packed data of shape (steps, "
                             f"{self.input_size}), got {tuple(data.shape)}")
        sizes = [int(size) for size in batch_sizes.tolist()]
        if sorted_indices is not None:  # hx comes in the batch's order, the rows are sorted
            hx = _map_state(hx, lambda t: t.index_select(1, sorted_indices))
        data, hx = self._autocast(data, hx)
        hx = self._initial_state(data, sizes[0] if sizes else 0, hx)
        output, final = self._run(data, hx, sizes)
        if unsorted_indices is not None:
            final = _map_state(final, lambda t: t.index_select(1, unsorted_indices))
        return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), final

    def _autocast(self, input: Tensor, hx) -> tuple:
        """PyTorch's autocast runs the whole LSTM in the lower dtype."""
        autocast = grad_state.autocast_on(input._device.type)
        if self.mode == "LSTM" and autocast is not None and input.dtype is float32:
            lower = autocast.dtype
            input = input.to(lower)
            hx = _map_state(hx, lambda t: t.to(lower) if t.dtype is float32 else t)
        return input, hx

    def _initial_state(self, input: Tensor, batch: int, hx):
        directions = 2 if self.bidirectional else 1
        h_shape = (self.num_layers * directions, batch, self.proj_size or self.hidden_size)
        c_shape = (self.num_layers * directions, batch, self.hidden_size)
        if hx is None:
            h = zeros(*h_shape, dtype=input.dtype, device=input.device)
            return (h, zeros(*c_shape, dtype=input.dtype, device=input.device)) \
                if self.mode == "LSTM" else h
        states = hx if self.mode == "LSTM" else (hx,)
        if self.mode == "LSTM" and not (isinstance(hx, tuple | list) and len(hx) == 2):
            raise ValueError("LSTM: hx must be a tuple (h_0, c_0)")
        for state, shape, what in zip(states, (h_shape, c_shape), ("h_0", "c_0")):
            if tuple(state.shape) != shape:
                raise ValueError(f"{type(self).__name__}: expected {what} of shape {shape}, got "
                                 f"{tuple(state.shape)}")
        return tuple(hx) if self.mode == "LSTM" else hx

    def _run(self, input: Tensor, hx, batch_sizes: list | None = None) -> tuple:
        """Every layer and direction over `input`: padded (T, B, H), or the data of a
        PackedSequence with its `batch_sizes`."""
        directions = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        finals = []
        layer_input = input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                state = (hx[0][index], hx[1][index]) if lstm else hx[index]
                sequence, state = self._run_direction(layer_input, state, layer, direction,
                                                      batch_sizes)
                outputs.append(sequence)
                finals.append(state)
            layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = dropout(layer_input, self.dropout, True)
        if lstm:
            return layer_input, (stack([h for h, _ in finals]), stack([c for _, c in finals]))
        return layer_input, stack(finals)

    def _run_direction(self, input: Tensor, state, layer: int, direction: int,
                       batch_sizes: list | None) -> tuple:
        w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
        projected = linear(input, w_ih, b_ih)  # every step's input projection in one product
        if self.mode == "LSTM":
            def step(projected_rows, state):
                return _lstm_step(projected_rows, state, w_hh, b_hh, w_hr)

            def output_of(state):
                return state[0]
        else:
            if self.mode == "GRU":
                def step(projected_rows, h):
                    return _gru_step(projected_rows, h, w_hh, b_hh)
            else:
                nonlinearity = tanh if self.mode == "RNN_TANH" else relu

                def step(projected_rows, h):
                    return _rnn_step(projected_rows, h, w_hh, b_hh, nonlinearity)

            def output_of(h):
                return h
        # Each step declares itself, so that tools file its ops by their role in a step (the
        # output tanh of layer 1's reverse direction), not by their order in the call.
        unit = f"l{layer}" + ("_reverse" if direction else "") \
            if self.num_layers > 1 or self.bidirectional else ""
        count = itertools.count()

        def declared_step(projected_rows, state):
            time_step(unit, next(count))
            return step(projected_rows, state)

        if batch_sizes is not None:
            outputs, state = run_packed(projected, state, batch_sizes, declared_step, output_of,
                                        reverse=direction == 1)
        else:
            steps = range(input.shape[0] - 1, -1, -1) if direction else range(input.shape[0])
            outputs = [None] * input.shape[0]
            for t in steps:
                state = declared_step(projected[t], state)
                outputs[t] = output_of(state)
            outputs = stack(outputs)
        time_step(None)
        return outputs, state

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


def _map_state(hx, function):
    if hx is None:
        return None
    if isinstance(hx, tuple | list):
        return tuple(function(t) for t in hx)
    return function(hx)


class RNN(RNNBase):
    """Elman RNN: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu), stacked and
    optionally bidirectional. Returns (output, h_n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r}; use 'tanh' or 'relu'")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory; returns (output, (h_n, c_n)). With `proj_size`, h is projected
    to that size by `weight_hr_l{k}` each step."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit; returns (output, h_n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)


# -- single steps -------------------------------------------------------------------------------
class RNNCellBase(Module):
    """One step of RNN, LSTM or GRU for an input of shape (N, input_size) or (input_size,);
    it declares itself a time step, as the layers' steps do."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gate_size = self.gates * hidden_size
        self.weight_ih = Parameter(empty(gate_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(gate_size, hidden_size, device=device, dtype=dtype))
        for name in ("bias_ih", "bias_hh"):
            self.register_parameter(name, Parameter(empty(gate_size, device=device, dtype=dtype))
                                    if bias else None)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def _prepared(self, input: Tensor, hx):
        """(input as a batch, hx as a batch or zeros, whether the input was batched)."""
        name = type(self).__name__
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: expected an input of shape (N, {self.input_size}) or "
                             f"({self.input_size},), got {tuple(input.shape)}")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
            hx = _map_state(hx, lambda t: t.unsqueeze(0))
        if hx is None:
            h = zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (h, h) if self.gates == 4 else h
        return input, hx, batched

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            text += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"  # unquoted, as PyTorch prints it
        return text


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: unknown nonlinearity {nonlinearity!r}; use 'tanh' or 'relu'")
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx=None) -> Tensor:
        input, h, batched = self._prepared(input, hx)
        time_step("", 0)
        h = _rnn_step(linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                      tanh if self.nonlinearity == "tanh" else relu)
        time_step(None)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    gates = 4

    def forward(self, input: Tensor, hx=None) -> tuple:
        input, state, batched = self._prepared(input, hx)
        time_step("", 0)
        h, c = _lstm_step(linear(input, self.weight_ih, self.bias_ih), tuple(state),
                          self.weight_hh, self.bias_hh, None)
        time_step(None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: returns h'."""

    gates = 3

    def forward(self, input: Tensor, hx=None) -> Tensor:
        input, h, batched = self._prepared(input, hx)
        time_step("", 0)
        h = _gru_step(linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        time_step(None)
        return h if batched else h.squeeze(0)

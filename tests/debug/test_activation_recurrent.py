"""A recurrent layer's activations are one entry per role in a time step, every step merged
(not one per step): a saturated nn.RNN is one finding, an LSTM's and a GRU's keys do not
grow with the sequence, stacked and bidirectional layers keep one entry per layer and
direction. A module's own loop over time steps merges too; a loop over layers, and two
gates cut from one product, do not."""
import numpy as np
import pytest

import genesis
import genesis.nn as nn
from tests.debug.activations import watched
from genesis.nn.utils.rnn import pack_padded_sequence


class Last(nn.Module):
    """A recurrent layer's output at the last step, through a Linear head."""

    def __init__(self, rnn, width: int):
        super().__init__()
        self.rnn, self.head = rnn, nn.Linear(width, 1)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


def keys(rnn, width: int, length: int) -> list:
    return list(watched(Last(rnn, width), 1, lambda: genesis.randn(4, length, 3)).to_dict())


def test_a_saturated_rnn_is_one_finding_naming_the_module():
    rnn = nn.RNN(3, 16, batch_first=True)
    with genesis.no_grad():
        for parameter in rnn.parameters():
            parameter.mul_(20.0)
    watch = watched(Last(rnn, 16), 6, lambda: genesis.randn(8, 30, 3))
    assert [key for key in watch.to_dict() if key.startswith("rnn.")] == ["rnn.tanh"]
    (finding,) = watch.findings()
    assert finding.kind == "saturated_activation" and finding.module == "rnn"
    assert finding.details["activation"] == "rnn.tanh"
    assert "the tanh in rnn's forward (all its time steps together: 30 in the last sample)" \
        in finding.message


def test_lstm_and_gru_keys_do_not_grow_with_the_sequence():
    for make, width in ((lambda: nn.LSTM(3, 8, batch_first=True), 8),
                        (lambda: nn.GRU(3, 8, batch_first=True), 8)):
        genesis.manual_seed(0)
        short, long = keys(make(), width, 5), keys(make(), width, 50)
        assert short == long
    assert keys(nn.LSTM(3, 8, batch_first=True), 8, 5) == [
        "rnn.sigmoid", "rnn.sigmoid#2", "rnn.tanh", "rnn.sigmoid#3", "rnn.tanh#2", "rnn",
        "head", "Last"]
    assert keys(nn.GRU(3, 8, batch_first=True), 8, 5) == [
        "rnn.sigmoid", "rnn.sigmoid#2", "rnn.tanh", "rnn", "head", "Last"]


def test_merged_time_steps_add_up():
    """rnn.tanh's figures are those of the outputs of every step together."""
    genesis.manual_seed(0)
    rnn = nn.RNN(3, 6, batch_first=True)
    x = genesis.randn(4, 7, 3)
    output = rnn(x)[0]._data  # (4, 7, 6): each step's tanh
    watch = watched(lambda x: rnn(x)[0], 1, lambda: x)
    latest = watch.latest(0)["RNN.tanh"]
    assert latest["mean"] == pytest.approx(output.mean(dtype=np.float64))
    assert latest["std"] == pytest.approx(output.std(dtype=np.float64))
    assert latest["saturated"] == pytest.approx((np.abs(output) > 0.99).mean())
    (sample,) = watch.to_dict()["RNN.tanh"]["values"]
    assert sample["count"] == output.size
    assert sample["percentiles"][-1] == pytest.approx(output.max())  # all 168 values drawn


def test_stacked_bidirectional_lstm_keeps_each_layer_and_direction():
    lstm = nn.LSTM(3, 8, num_layers=2, bidirectional=True, batch_first=True)
    found = keys(lstm, 16, 6)
    for unit in ("l0", "l0_reverse", "l1", "l1_reverse"):
        assert [key for key in found if key.startswith(f"rnn.{unit}.")] == [
            f"rnn.{unit}.{op}" for op in ("sigmoid", "sigmoid#2", "tanh", "sigmoid#3", "tanh#2")]
    assert len(found) == 4 * 5 + 3
    assert found == keys(nn.LSTM(3, 8, num_layers=2, bidirectional=True, batch_first=True), 16, 20)


def test_packed_sequences_merge_their_shrinking_steps():
    lstm = nn.LSTM(3, 8)
    watch = watched(lambda x: lstm(pack_padded_sequence(x, [6, 4, 2]))[0].data, 1,
                    lambda: genesis.randn(6, 3, 3))
    assert [key for key in watch.to_dict() if key.startswith("LSTM.")] == [
        "LSTM.sigmoid", "LSTM.sigmoid#2", "LSTM.tanh", "LSTM.sigmoid#3", "LSTM.tanh#2"]
    (sample,) = watch.to_dict()["LSTM.tanh#2"]["values"]
    assert sample["count"] == (6 + 4 + 2) * 8


class CellLoop(nn.Module):
    """A user's loop over an LSTMCell, with a ReLU head applied at each step in its forward."""

    def __init__(self, bias: float = 0.0):
        super().__init__()
        self.cell, self.proj, self.head = nn.LSTMCell(3, 8), nn.Linear(8, 8), nn.Linear(8, 1)
        with genesis.no_grad():
            self.proj.bias.fill_(bias)

    def forward(self, x):
        state, outputs = None, []
        for t in range(x.shape[1]):
            state = self.cell(x[:, t], state)
            outputs.append(self.proj(state[0]).relu())
        return self.head(genesis.stack(outputs, 1)).squeeze(-1)


def test_a_users_loop_over_a_cell_merges_its_steps():
    for length in (4, 12):
        found = list(watched(CellLoop(), 1, lambda: genesis.randn(16, length, 3)).to_dict())
        assert found == ["cell.sigmoid", "cell.sigmoid#2", "cell.tanh", "cell.sigmoid#3",
                         "cell.tanh#2", "cell", "proj", "CellLoop.relu", "head", "CellLoop"]


def test_a_dead_relu_in_a_users_time_loop_is_found_once():
    watch = watched(CellLoop(bias=-50.0), 12, lambda: genesis.randn(16, 6, 3))
    (finding,) = watch.findings()
    assert finding.kind == "dead_activation" and finding.details["activation"] == "CellLoop.relu"
    assert finding.module == "CellLoop" and "8 of 8" in finding.title
    assert "(all its runs in a step together: 6 in the last sample)" in finding.message


class HandLSTM(nn.Module):
    """An LSTM written by hand: gates cut from one sum of two Linears, two on one line."""

    def __init__(self):
        super().__init__()
        self.W, self.U = nn.Linear(3, 16), nn.Linear(4, 16, bias=False)

    def forward(self, x):
        h = c = genesis.zeros(x.shape[0], 4)
        for t in range(x.shape[1]):
            i, f, g, o = (self.W(x[:, t]) + self.U(h)).chunk(4, 1)
            c = genesis.sigmoid(f) * c + genesis.sigmoid(i) * genesis.tanh(g)
            h = genesis.sigmoid(o) * genesis.tanh(c)
        return h.sum(1)


class RawRNN(nn.Module):
    """An Elman RNN on raw parameters."""

    def __init__(self):
        super().__init__()
        self.W, self.U = nn.Parameter(genesis.randn(3, 4)), nn.Parameter(genesis.randn(4, 4))

    def forward(self, x):
        h, outputs = genesis.zeros(x.shape[0], 4), []
        for t in range(x.shape[1]):
            h = genesis.tanh(x[:, t] @ self.W + h @ self.U)
            outputs.append(h)
        return genesis.stack(outputs).sum()


def test_hand_written_recurrences_merge_their_steps_and_keep_their_gates_apart():
    for length in (3, 15):
        assert list(watched(HandLSTM(), 1, lambda: genesis.randn(8, length, 3)).to_dict()) == [
            "W", "U", "HandLSTM.sigmoid", "HandLSTM.sigmoid#2", "HandLSTM.tanh",
            "HandLSTM.sigmoid#3", "HandLSTM.tanh#2", "HandLSTM"]
        assert list(watched(RawRNN(), 1, lambda: genesis.randn(8, length, 3)).to_dict()) == [
            "RawRNN.tanh", "RawRNN"]


class Stack(nn.Module):
    """Linear + ReLU layers in a Python loop, and the same on raw parameters."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.weights = nn.ParameterList([nn.Parameter(genesis.randn(4, 4)) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).relu()
        for weight in self.weights:
            x = (x @ weight).relu()
        return x.sum(1)


class Halves(nn.Module):
    """Two tanh on one line, of the two halves of one Linear's output."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        a, b = self.fc(x).chunk(2, 1)
        return (genesis.tanh(a) + genesis.tanh(b)).sum(1)


def test_a_loop_over_layers_keeps_one_entry_per_layer():
    found = list(watched(Stack(), 1, lambda: genesis.randn(8, 4)).to_dict())
    assert found == ["layers.0", "Stack.relu", "layers.1", "Stack.relu#2", "layers.2",
                     "Stack.relu#3", "Stack.relu#4", "Stack.relu#5", "Stack.relu#6", "Stack"]
    assert list(watched(Halves(), 1, lambda: genesis.randn(8, 4)).to_dict()) == [
        "fc", "Halves.tanh", "Halves.tanh#2", "Halves"]

"""A sigmoid that gates a product (an LSTM's or a GRU's gates, a highway layer's carry gate,
the sigmoid of x * sigmoid(x)) is open or shut by design, so ActivationWatch does not judge
its saturation; a saturated sigmoid layer whose output a Linear takes is still found, as is
one scaled by a number."""
import genesis
import genesis.nn as nn
from genesis.debug.activation_figures import multiplies
from tests.debug.activations import watched


class ChronoLSTM(nn.Module):
    """An LSTM whose forget-gate biases are large and input-gate biases as negative (chrono
    initialisation): most of its gates are shut or open from the first step."""

    def __init__(self, hidden: int = 16):
        super().__init__()
        self.lstm = nn.LSTM(3, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)
        with genesis.no_grad():
            self.lstm.bias_ih_l0.zero_()
            self.lstm.bias_hh_l0.zero_()
            self.lstm.bias_ih_l0[hidden:2 * hidden] = 7.0   # forget gate
            self.lstm.bias_ih_l0[:hidden] = -7.0            # input gate

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


class Gated(nn.Module):
    """Inputs of large scale through x * sigmoid(x), then a highway layer whose gate's bias
    keeps it shut."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 16)
        self.norm = nn.LayerNorm(16)
        self.gate = nn.Linear(16, 16)
        self.candidate = nn.Linear(16, 16)
        self.head = nn.Linear(16, 1)
        with genesis.no_grad():
            self.gate.bias.fill_(-8.0)

    def forward(self, x):
        h = self.fc(x)
        h = self.norm(h * genesis.sigmoid(h))
        carry = genesis.sigmoid(self.gate(h))
        return self.head(carry * self.candidate(h).tanh() + (1 - carry) * h)


def test_lstm_and_gru_gates_saturated_by_design_are_not_findings():
    watch = watched(ChronoLSTM(), 8, lambda: genesis.randn(16, 6, 3))
    saturated = [entry for entry in watch.to_dict().values() if entry["kind"] == "sigmoid"
                 and entry["saturated"]["values"][0] > 0.5]
    assert saturated  # the gates are saturated, and not judged
    assert watch.findings() == []
    gru = nn.GRU(3, 8, batch_first=True)
    with genesis.no_grad():
        gru.bias_ih_l0[:16] = 9.0  # reset and update gates open; the new gate as it was
    assert watched(lambda x: gru(x)[0][:, -1], 8, lambda: genesis.randn(16, 5, 3)).findings() == []


def test_self_gated_and_highway_sigmoids_are_not_findings():
    watch = watched(Gated(), 8, lambda: genesis.randn(32, 4) * 40)
    history = watch.to_dict()
    assert min(history[key]["saturated"]["values"][0] for key in ("Gated.sigmoid", "Gated.sigmoid#2")) > 0.5
    assert watch.findings() == []


def test_a_saturated_sigmoid_layer_is_still_found():
    """Its output is taken by a Linear: no gate."""
    model = nn.Sequential(nn.Linear(4, 16), nn.Sigmoid(), nn.Linear(16, 1))
    watch = watched(lambda x: model(x) * 2.0, 8, lambda: genesis.randn(32, 4) * 200)
    (finding,) = watch.findings()
    assert finding.kind == "saturated_activation" and finding.details["activation"] == "1"
    assert "nor a sigmoid gating a product as an LSTM's gates do" in finding.message


def test_a_gate_is_a_product_with_another_tensor_not_with_a_number():
    x = genesis.randn(3, 4, requires_grad=True)
    s = x.sigmoid()
    assert multiplies((s * x).grad_fn, (s, x), s) and multiplies((x * s).grad_fn, (x, s), s)
    assert not multiplies((s * 3.0).grad_fn, (s, 3.0), s)
    assert not multiplies((s + x).grad_fn, (s, x), s)

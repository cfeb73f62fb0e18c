"""The NaN/Inf watch of `genesis trace`: a NaN born is a finding, an Inf only once it does
harm (reaches the loss or a gradient, or a NaN is born from it); each defect is found once,
at its birth, with the right word; knock-on effects and intended -inf masks are not
findings. The same findings on the GPU code path (counts judged after the fetch)."""
import math

import numpy as np
import pytest

import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset
from genesis.debug.nan_watch import NaNWatch
from genesis.debug.readings import Readings
from genesis.debug.session import TraceSession
from tests.cuda.conftest import array_ops, fake_cuda  # noqa: F401  (fixtures of the GPU path)
from tests.helpers import line_of

# NumPy's words on 0/0, log(0), 0 * inf: these tests are about what genesis says.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def watched(run) -> list:
    """The findings of the NaN/Inf watch over `run()`."""
    watch = NaNWatch(Readings())
    watch.start()
    try:
        run()
    finally:
        watch.stop()
    return watch.findings


class CausalSelfAttention(nn.Module):
    """Single-head causal attention with both kinds of intended -inf: an additive mask made
    as log(tril(ones)) and `masked_fill(mask, -inf)`."""

    def __init__(self, width: int = 8, block: int = 5):
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.register_buffer("bias", genesis.ones(block, block).tril().log())
        self.register_buffer("mask", genesis.ones(block, block).tril() == 0)

    def forward(self, x):
        q, k, v = self.qkv(x).split(x.shape[-1], dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
        scores = scores.masked_fill(self.mask, float("-inf")) + self.bias
        return F.softmax(scores, dim=-1) @ v


def test_an_intended_minus_inf_mask_is_no_finding():
    genesis.manual_seed(0)
    attention = CausalSelfAttention()
    optimizer = genesis.optim.SGD(attention.parameters(), lr=0.1)

    def train():
        for _ in range(2):
            loss = attention(genesis.randn(2, 5, 8)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    assert watched(train) == []


def test_a_nan_born_in_forward_is_a_finding_with_the_word_nan():
    x = genesis.tensor([0.0, 1.0], requires_grad=True)
    (finding,) = watched(lambda: (x / x).sum().backward())  # 0/0
    assert finding.kind == "nan_forward" and finding.title == "NaN born in forward: Div"
    assert finding.message.startswith("anomaly detected in forward: Div produced NaN from finite "
                                      "inputs: 1 of 2 values")
    assert "Inf" not in finding.title + finding.message.splitlines()[0]
    assert finding.source == f"{__file__}:{line_of(__file__, '(x / x).sum()')}"


@pytest.mark.parametrize("how", ["model cast to bfloat16", "bfloat16 autocast"])
def test_a_nan_born_in_bfloat16_is_found_at_its_birth(how):
    """bfloat16 (dtype kind "V" in NumPy) is floating: its outputs are watched, so the NaN of
    a log under bfloat16 is found at the log, not at the first float32 op after it (which
    was said to have "produced NaN from finite inputs")."""
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    inputs = genesis.randn(4, 8)
    if how == "model cast to bfloat16":
        model, inputs = model.to(genesis.bfloat16), inputs.to(genesis.bfloat16)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)

    def train():
        with genesis.autocast("cpu", dtype=genesis.bfloat16, enabled=how == "bfloat16 autocast"):
            loss = (model(inputs) - 3.0).log().mean()  # log of negatives
        optimizer.zero_grad()
        loss.float().backward()
        optimizer.step()
    (finding,) = watched(train)
    assert finding.title == "NaN born in forward: Log"
    assert finding.source == f"{__file__}:{line_of(__file__, '(model(inputs) - 3.0).log()')}"


def test_an_inf_that_reaches_the_loss_is_found_at_its_birth_with_the_word_inf():
    probabilities = genesis.tensor([[0.0, 0.5, 0.5], [0.2, 0.3, 0.5]], requires_grad=True)
    target = genesis.tensor([[0.1, 0.4, 0.5], [0.3, 0.3, 0.4]])

    def run():
        loss = -(target * probabilities.log()).sum(dim=1).mean()   # log(0) = -inf
        loss.backward()
    (finding,) = watched(run)
    assert finding.kind == "nan_forward" and finding.title == "Inf born in forward: Log"
    assert finding.op == "LogBackward" and finding.source.endswith(f":{line_of(__file__, 'probabilities.log()')}")
    first = finding.message.splitlines()[0]
    assert "Log produced Inf from finite inputs: 1 of 6 values" in first and "NaN" not in first
    assert "It reached the loss: backward started from the output of Neg" in finding.message
    # log's backward then divides by 0: a knock-on, told inside this finding, not a second one
    assert "LogBackward returned Inf in its gradient for input 0" in finding.message
    assert finding.details["knock_on"] == ["LogBackward returned Inf in its gradient for input 0: "
                                           "1 of 6 values"]


def test_a_nan_born_from_an_intended_inf_names_where_the_inf_came_from():
    probabilities = genesis.tensor([[0.0, 0.5, 0.5]], requires_grad=True)
    target = genesis.tensor([[0.0, 0.5, 0.5]])                       # 0 * log(0) = 0 * -inf

    def run():
        logs = probabilities.log()
        loss = -(target * logs).sum()
        loss.backward()
    (finding,) = watched(run)
    assert finding.title == "NaN born in forward: Mul"
    assert finding.source.endswith(f":{line_of(__file__, '-(target * logs)')}")
    assert "Mul produced NaN from inputs holding Inf but no NaN: 1 of 3 values is NaN " \
           "(0 * inf and inf - inf are NaN)" in finding.message
    assert f"Inf in Log (born there from finite inputs) at {__file__}:" \
           f"{line_of(__file__, 'logs = probabilities.log()')}" in finding.message


def test_a_finding_is_counted_once_per_line_over_steps():
    weight = genesis.tensor([1.0, 2.0], requires_grad=True)

    def train():
        for _ in range(3):
            weight.grad = None
            ((weight - weight) / (weight - weight)).sum().backward()   # 0/0 every step
    (finding,) = watched(train)
    assert finding.details["count"] == 3 and finding.details["first_step"] == 0


def test_ops_consuming_a_nan_get_no_findings_of_their_own():
    x = genesis.tensor([0.0, 1.0], requires_grad=True)

    def run():
        nan = x / x
        y = (nan * 2 + 1).exp().log() * genesis.tensor([0.0, 3.0])   # NaN in, NaN out
        y.sum().backward()
    assert [finding.title for finding in watched(run)] == ["NaN born in forward: Div"]


def test_an_inf_gradient_is_one_finding_at_its_birth_not_again_downstream():
    w = genesis.tensor([0.0, 2.0], requires_grad=True)

    def run():
        root = (w ** 2).sqrt()       # sqrt's gradient at 0 is Inf; pow's backward makes NaN of it
        root.sum().backward()
    (finding,) = watched(run)
    assert finding.kind == "nan_backward" and finding.title == "Inf produced by its backward: SqrtBackward"
    assert "SqrtBackward returned Inf in its gradient" in finding.message
    assert np.isnan(w.grad.numpy()[0])   # the NaN downstream is real, and not a second finding


def test_a_nan_made_by_a_backward_says_nan():
    x = genesis.tensor([0.0, 4.0], requires_grad=True)
    (finding,) = watched(lambda: (x ** 0.5).backward(genesis.tensor([0.0, 1.0])))   # 0 * inf
    assert finding.title == "NaN produced by its backward: PowBackward"
    assert "returned NaN in its gradient" in finding.message and "Inf" not in finding.title


def test_an_inf_that_reaches_a_gradient_is_found_where_the_gradient_goes_bad():
    x = genesis.tensor([0.0, 1.0], requires_grad=True)

    def run():
        safe = genesis.where(x > 0, x.log(), genesis.zeros(2))  # forward fine, log(0) unused
        safe.sum().backward()                                    # but LogBackward: 0 / 0 = NaN
    (finding,) = watched(run)
    assert finding.title == "NaN produced by its backward: LogBackward"
    assert "Its forward saw non-finite values:" in finding.message
    assert "Inf in Log (born there from finite inputs)" in finding.message


def test_nan_data_reaching_the_loss_is_found_where_it_came_in():
    genesis.manual_seed(0)
    layer = nn.Linear(3, 1)
    data = genesis.tensor([[1.0, float("nan"), 2.0], [0.5, 0.5, 0.5]])
    (finding,) = watched(lambda: layer(data).mean().backward())
    assert finding.title.startswith("NaN reaches the loss: it came into Linear through input 0")
    assert "It reached the loss" in finding.message


def test_a_minus_inf_constant_consumed_by_logsumexp_and_max_is_no_finding():
    x = genesis.randn(3, 4, requires_grad=True)
    keep = genesis.tensor([[True, True, False, False], [True, False, False, False],
                           [True, True, True, True]])

    def run():
        masked = x.masked_fill(~keep, float("-inf"))
        total = masked.logsumexp(dim=1).sum() + masked.max(dim=1)[0].sum() + masked.exp().sum()
        total.backward()
    assert watched(run) == []


def test_softmax_of_a_fully_masked_row_is_a_nan_finding_naming_the_mask():
    x = genesis.randn(2, 3, requires_grad=True)
    padding = genesis.tensor([[False, False, True], [True, True, True]])   # row 1: all masked

    def run():
        F.softmax(x.masked_fill(padding, float("-inf")), dim=1).sum().backward()
    (finding,) = watched(run)
    assert finding.title == "NaN born in forward: Softmax"
    assert "brought in by a number argument (-inf)" in finding.message


class PaddedAttention(nn.Module):
    """Attention over padded sequences, as people write it: a padded query sees no key, so
    its row of scores is all -inf, softmax makes it NaN, and nan_to_num zeroes it."""

    def __init__(self, width: int = 8):
        super().__init__()
        self.query = nn.Linear(width, width)

    def forward(self, x, lengths):
        padding = genesis.arange(x.shape[1], device=x.device)[None, :] >= lengths[:, None]
        mask = padding[:, None, :] | padding[:, :, None]
        scores = self.query(x) @ x.transpose(1, 2) / math.sqrt(x.shape[-1])
        weights = genesis.nan_to_num(F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1))
        return weights @ x


def _padded_attention_step(to_device=lambda value: value, start=lambda: None):
    """Findings of two traced steps of PaddedAttention, and its weight's gradient."""
    genesis.manual_seed(0)
    attention = to_device(PaddedAttention())
    x, lengths = to_device(genesis.randn(2, 5, 8)), to_device(genesis.tensor([5, 3]))
    start()
    with TraceSession(steps=1, check=False) as session:
        for _ in range(2):
            attention.zero_grad()
            attention(x, lengths).pow(2).mean().backward()
    return session.result().findings, attention.query.weight.grad


def test_a_gradient_nan_that_a_later_backward_drops_is_no_finding():
    # softmax's backward turns the NaN rows into NaN gradients, and masked_fill's backward
    # zeroes them before any parameter: the gradients are right, nothing to report
    findings, gradient = _padded_attention_step()
    assert findings == []
    assert np.isfinite(gradient.numpy()).all()


def test_the_gpu_path_also_lets_a_dropped_gradient_nan_pass(counted_gpu):
    findings, gradient = _padded_attention_step(counted_gpu, counted_gpu.counting)
    assert findings == []


def test_a_gradient_nan_handed_back_by_autograd_grad_is_a_finding():
    x = genesis.tensor([0.0, 4.0], requires_grad=True)
    with TraceSession(steps=1, check=False) as session:
        middle = x * 1.0
        (gradient,) = genesis.autograd.grad(middle.sqrt().sum(), [middle])  # Inf at 0
    (finding,) = session.result().findings
    assert finding.title == "Inf produced by its backward: SqrtBackward"
    assert np.isinf(gradient.numpy()[0])


def test_a_dropped_gradient_nan_does_not_hide_one_that_reaches_a_parameter():
    genesis.manual_seed(0)
    attention = PaddedAttention()
    scale = genesis.zeros(1, requires_grad=True)
    with TraceSession(steps=1, check=False) as session:
        out = attention(genesis.randn(2, 5, 8), genesis.tensor([5, 3]))
        (out.pow(2).mean() + scale.sqrt().sum()).backward()   # sqrt's gradient at 0 is Inf
    (finding,) = session.result().findings
    assert finding.title == "Inf produced by its backward: SqrtBackward"
    assert np.isinf(scale.grad.numpy()).all()


# -- the same findings on the GPU path ------------------------------------------------

@pytest.fixture
def counted_gpu(array_ops):  # noqa: F811
    """Move tensors and modules to a "cuda" device; `to_gpu.counting()` then makes its
    namespace the counting stand-in of CuPy, so the watch takes its device path (counts
    judged when the readings are fetched)."""
    cuda = genesis.device("cuda")
    cuda.xp  # the fake GPU's NumPy, for the moves
    array_ops._install_fake_cupyx()

    def to_gpu(value):
        if isinstance(value, genesis.Tensor):
            return array_ops.on_counted_gpu(value)
        return array_ops._on_counted_gpu(value)

    def counting():
        cuda._xp = array_ops.CountingNumPy()
    to_gpu.counting = counting
    yield to_gpu
    cuda._xp = None


def _scenarios(to_device, start=lambda: None) -> list:
    """Findings (without the call chains) of a run mixing every rule, on `to_device`;
    `start()` is called once the tensors are there."""
    genesis.manual_seed(0)
    attention = to_device(CausalSelfAttention())
    zero = to_device(genesis.zeros(2)).requires_grad_()
    probabilities = to_device(genesis.tensor([[0.0, 0.5, 0.5]])).requires_grad_()
    target = to_device(genesis.tensor([[0.0, 0.5, 0.5]]))
    inputs = to_device(genesis.randn(2, 5, 8))
    start()

    with TraceSession(steps=2, check=False) as session:   # records every call site
        for _ in range(2):
            loss = attention(inputs).mean() + zero.sqrt().sum() - (target * probabilities.log()).sum()
            loss.backward()
    return [(f.kind, f.title, _own_lines(f.message), f.source, f.details)
            for f in session.result().findings]


def _own_lines(message: str) -> list:
    """The message without the callers of the test's own function."""
    return [line for line in message.splitlines() if "called from" not in line]


def test_the_gpu_path_finds_what_the_cpu_finds(counted_gpu):
    on_cpu = _scenarios(lambda value: value)
    assert [title for _, title, *_ in on_cpu] == ["NaN born in forward: Mul",
                                                   "Inf produced by its backward: SqrtBackward"]
    assert _scenarios(counted_gpu, counted_gpu.counting) == on_cpu


def test_gradchecks_own_evaluations_are_not_watched():
    x = genesis.tensor([1.0, float("nan"), 0.0], dtype=genesis.float64, requires_grad=True)
    results = []
    assert watched(lambda: results.append(genesis.autograd.gradcheck(
        lambda t: t.log() * 2, x, raise_exception=False))) == []
    assert results == [False]


def test_a_minus_inf_constant_reaching_the_loss_is_found_where_it_came_in():
    scores = genesis.randn(3, 3, requires_grad=True)
    future = genesis.ones(3, 3).tril() == 0

    def run():
        scores.masked_fill(future, float("-inf")).sum().backward()   # summed, never consumed
    (finding,) = watched(run)
    assert finding.title == "Inf reaches the loss: it came into MaskedFill through a number argument (-inf)"
    assert finding.message.splitlines()[0].endswith("3 of 9 values of its output")


def test_nan_in_a_datasets_sample_is_found_where_the_batch_is_computed_with():
    """A DataLoader's views of its dataset (one per sample) are not looked at: the NaN is
    found at the first op that computes with the data, as having come in there."""
    genesis.manual_seed(0)
    images = genesis.randn(8, 3)
    images[5, 1] = float("nan")
    loader = DataLoader(TensorDataset(images, genesis.zeros(8, dtype=genesis.int64)), batch_size=4)
    layer = nn.Linear(3, 2)

    def run():
        for batch, target in loader:
            F.cross_entropy(layer(batch), target).backward()
    (finding,) = watched(run)
    assert finding.title.startswith("NaN reaches the loss: it came into Stack through input")


def test_a_view_of_a_parameter_is_looked_at():
    """(Under genesis trace, the finding then names the parameter: test_nan_watch_harm.)"""
    genesis.manual_seed(0)
    layer = nn.Linear(3, 2)
    with genesis.no_grad():
        layer.weight[0, 1] = float("nan")
    x = genesis.randn(4, 3)
    (finding,) = watched(lambda: (x @ layer.weight.t()).sum().backward())
    assert finding.title == "NaN reaches the loss: it came into Transpose through input 0"


def test_nan_carried_into_a_view_of_data_is_followed_through_it():
    data = genesis.tensor([1.0, 0.0, 2.0])
    w = genesis.tensor([1.0, 1.0], requires_grad=True)

    def run():
        logs = data.log()            # -inf born here (data requires no grad)
        picked = logs[:2]            # a view of it: followed, since -inf is being carried
        (picked * w).sum().backward()
    (finding,) = watched(run)
    assert "Log" in finding.title and "born" in finding.message


def test_a_nan_a_step_wrote_into_parameters_stays_one_finding_through_detach():
    """An Inf born at step 0 poisons the gradients, the step writes NaN into the weights, and
    at step 1 it reaches the loss through a straight-through estimator's `y.detach()` (and
    `.data`): the same defect, a knock-on of the step-0 finding, not a second one that 'came
    into Sub through input 1, whose values no watched op made'."""
    genesis.manual_seed(0)
    model = nn.Linear(4, 3)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
    x = genesis.randn(8, 4)
    with TraceSession(steps=1, check=False) as session:
        for _ in range(2):
            soft = model(x).softmax(-1)
            hard = (soft > 0.5).float()
            straight_through = hard - soft.detach() + soft + 0 * soft.data
            p = (model(x) * 200).sigmoid()
            loss = straight_through.sum() - (p * (1 - p).log()).sum()   # log(0) where p is 1
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    (finding,) = session.result().findings
    assert finding.title == "Inf born in forward: Log"
    assert finding.source.endswith(f":{line_of(__file__, '(p * (1 - p).log())')}")
    assert any("SGD.step" in line and "into weight" in line
               for line in finding.details["knock_on"])

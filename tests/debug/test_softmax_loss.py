"""The softmax_into_loss rule on captured graphs: which paths from a softmax to a loss it
follows (views, reshapes, transposes, casts) and which it does not (any other op; a
softmax that is only a target)."""
import pytest

import genesis
import genesis.nn.functional as F
from genesis.debug import capture_graph
from genesis.debug.softmax_loss import softmax_loss_findings

TARGET = genesis.tensor([0, 1, 2, 0])


def found(loss) -> list:
    return [(finding.details["loss"], finding.details["through"])
            for finding in softmax_loss_findings([capture_graph(loss)])]


def scores():
    return genesis.randn(4, 3, requires_grad=True)


@pytest.mark.parametrize("make, expected", [
    (lambda x: F.cross_entropy(F.softmax(x, 1), TARGET), [("cross_entropy", [])]),
    (lambda x: F.cross_entropy(x.softmax(-1).double(), TARGET), [("cross_entropy", ["ToCopy"])]),
    (lambda x: F.cross_entropy(x.softmax(1).t().t(), TARGET, weight=genesis.ones(3)),
     [("cross_entropy", ["Transpose", "Transpose"])]),
    (lambda x: F.cross_entropy(x.softmax(1), TARGET, label_smoothing=0.1), [("cross_entropy", [])]),
    (lambda x: F.cross_entropy(x.softmax(1).reshape(2, 2, 3).view(4, 3),
                               F.one_hot(TARGET, 3).float()),
     [("log_softmax", ["View", "View"])]),
    (lambda x: F.nll_loss(F.softmax(x, 1), TARGET), [("nll", [])]),
    (lambda x: F.nll_loss(F.softmax(x, 1), genesis.tensor([0, 1, -100, 2]),
                          weight=genesis.tensor([1., 2., 1.])), [("nll", [])]),
    (lambda x: F.kl_div(F.softmax(x / 2, dim=-1), F.softmax(genesis.randn(4, 3) / 2, dim=-1),
                        reduction="batchmean"), [("kl_div", [])]),
    (lambda x: genesis.nn.KLDivLoss(reduction="batchmean", log_target=True)(
        x.softmax(1).view(4, 3), F.log_softmax(genesis.randn(4, 3), 1)), [("kl_div", ["View"])]),
], ids=["cross_entropy", "cast", "transposes, weights", "label smoothing",
        "probability targets", "nll_loss", "nll_loss weighted, ignored", "kl_div",
        "KLDivLoss, log targets"])
def test_probabilities_into_a_loss_are_found(make, expected):
    assert found(make(scores())) == expected


@pytest.mark.parametrize("make", [
    lambda x: F.cross_entropy(x, TARGET),
    lambda x: F.nll_loss(F.log_softmax(x, 1), TARGET),
    lambda x: F.nll_loss(F.softmax(x, 1).log(), TARGET),
    lambda x: F.nll_loss(F.softmax(x, 1).clamp_min(1e-8).log(), TARGET),
    lambda x: F.cross_entropy(x, TARGET) + (x.softmax(1).argmax(1) == TARGET).float().mean()
    + x.softmax(1).max(1).values.mean(),
    lambda x: F.cross_entropy(x * 2, F.softmax(x, 1)),
    lambda x: F.kl_div(F.log_softmax(x * 2, 1), F.softmax(x, 1), reduction="batchmean"),
    lambda x: F.cross_entropy((x.softmax(1) @ genesis.randn(3, 3)), TARGET),
    lambda x: -(x.softmax(1).gather(1, TARGET[:, None])).sum(),
    lambda x: F.cross_entropy(x, TARGET, label_smoothing=0.2),
    lambda x: F.kl_div(F.softmax(x, 1).log(), F.softmax(genesis.randn(4, 3), 1), reduction="batchmean"),
    lambda x: F.kl_div(F.log_softmax(genesis.randn(4, 3), 1), F.softmax(x, 1), reduction="batchmean"),
], ids=["logits", "log_softmax", "log", "clamp_min log", "softmax for metrics",
        "soft targets", "kl_div target", "softmax then linear", "gather, not squeezed", "label smoothing on logits",
        "kl_div of softmax's log", "kl_div target needing gradient"])
def test_look_alikes_are_not(make):
    assert found(make(scores())) == []


def test_one_finding_per_line_over_graphs_and_the_module_is_named():
    model = genesis.nn.Sequential(genesis.nn.Linear(2, 3), genesis.nn.Softmax(dim=1))
    graphs = [capture_graph(F.cross_entropy(model(genesis.randn(4, 2)), TARGET)) for _ in range(2)]
    (finding,) = softmax_loss_findings(graphs)
    assert finding.module == "1" and finding.graph == 0
    assert "softmax in module 1 (Softmax)" in finding.message

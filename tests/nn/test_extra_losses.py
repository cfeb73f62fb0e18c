"""multi_margin_loss, multilabel_margin_loss, triplet_margin_with_distance_loss, ctc_loss and
their modules against PyTorch: values, gradients, exception types; plus finite differences."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from tests.helpers import torch_or_skip


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def leaf(array):
    return genesis.tensor(array, dtype=genesis.float64, requires_grad=True)


def constant(torch, value):
    return torch.tensor(value) if isinstance(value, np.ndarray) else value


def compare(name, differentiable, constants, options, rtol=1e-10):
    """Run F.name in genesis and PyTorch; compare values and the gradients of a weighted sum."""
    torch = torch_or_skip()
    mine = [leaf(a) for a in differentiable]
    theirs = [torch.tensor(a, requires_grad=True) for a in differentiable]
    ours = getattr(F, name)(*mine, *[genesis.tensor(c) if isinstance(c, np.ndarray) else c
                                     for c in constants], **options)
    their = getattr(torch.nn.functional, name)(*theirs, *[constant(torch, c) for c in constants],
                                               **options)
    np.testing.assert_allclose(ours.detach().numpy(), their.detach().numpy(), rtol=rtol, atol=1e-12)
    weights = data(tuple(ours.shape), 9)
    (ours * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (their * torch.tensor(weights)).sum().backward()
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=1e-12)


CLASSES = np.array([0, 3, 1, 2, 3])
LABELS = np.array([[3, 0, -1, 1], [1, 1, 2, -1], [-1, 0, 0, 0], [0, 1, 2, 3], [2, -1, 3, 3]])


@pytest.mark.parametrize("options", [{}, {"p": 2, "margin": 0.7}, {"reduction": "none"},
                                     {"reduction": "sum", "margin": 2.0}])
def test_multi_margin_loss_matches_pytorch(options):
    compare("multi_margin_loss", [data((5, 4))], [CLASSES], options)


@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss_with_class_weights_matches_pytorch(p):
    torch = torch_or_skip()
    weights, x = np.random.default_rng(1).uniform(0.5, 2, 4), data((5, 4))
    mine, theirs = leaf(x), torch.tensor(x, requires_grad=True)
    ours = F.multi_margin_loss(mine, genesis.tensor(CLASSES), p=p,
                               weight=genesis.tensor(weights, dtype=genesis.float64))
    their = torch.nn.functional.multi_margin_loss(theirs, torch.tensor(CLASSES), p=p,
                                                  weight=torch.tensor(weights))
    np.testing.assert_allclose(ours.item(), their.item(), rtol=1e-12)
    ours.backward(), their.backward()
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_multi_margin_loss_of_one_sample_and_its_module():
    torch = torch_or_skip()
    compare("multi_margin_loss", [data(4)], [np.array(2)], {"reduction": "none"})
    weights = np.array([1.0, 2.0, 0.5, 1.5])
    ours = genesis.nn.MultiMarginLoss(p=2, weight=genesis.tensor(weights, dtype=genesis.float64))
    theirs = torch.nn.MultiMarginLoss(p=2, weight=torch.tensor(weights))
    x = data((5, 4))
    np.testing.assert_allclose(ours(leaf(x), genesis.tensor(CLASSES)).item(),
                               theirs(torch.tensor(x), torch.tensor(CLASSES)).item(), rtol=1e-12)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("options", [{}, {"reduction": "none"}, {"reduction": "sum"}])
def test_multilabel_margin_loss_matches_pytorch(options):
    compare("multilabel_margin_loss", [data((5, 4))], [LABELS], options)
    compare("multilabel_margin_loss", [data(4)], [np.array([2, 0, -1, 3])], options)


@pytest.mark.parametrize("name, constants", [("multi_margin_loss", [CLASSES]),
                                             ("multilabel_margin_loss", [LABELS])])
def test_hinge_losses_gradients_against_finite_differences(name, constants):
    fixed = [genesis.tensor(c) for c in constants]
    assert genesis.autograd.gradcheck(lambda x: getattr(F, name)(x, *fixed), (leaf(data((5, 4)) * 3),))


def test_hinge_losses_refuse_what_pytorch_refuses():
    torch = torch_or_skip()
    x = data((3, 4))
    cases = [("multi_margin_loss", np.array([0, 1, 4]), {}, RuntimeError),
             ("multi_margin_loss", np.array([0, 1, 2]), {"p": 3}, ValueError),
             ("multilabel_margin_loss", np.array([[0, 1, 5, -1]] * 3), {}, RuntimeError),
             ("multilabel_margin_loss", np.array([[0, 1, -1]] * 3), {}, RuntimeError)]
    for name, target, options, error in cases:
        with pytest.raises(error):
            getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(target), **options)
        with pytest.raises(error, match=name):
            getattr(F, name)(genesis.tensor(x), genesis.tensor(target), **options)
    with pytest.raises(ValueError):
        torch.nn.functional.multi_margin_loss(torch.tensor(x), torch.tensor([0, 1, 2]), weight=torch.ones(2, 2))
    with pytest.raises(ValueError, match="one-dimensional"):
        F.multi_margin_loss(genesis.tensor(x), genesis.tensor([0, 1, 2]), weight=genesis.ones(2, 2))


@pytest.mark.parametrize("options", [{}, {"swap": True, "margin": 0.5}, {"reduction": "none"},
                                     {"distance": "cosine", "reduction": "sum"}])
def test_triplet_margin_with_distance_loss_matches_pytorch(options):
    torch = torch_or_skip()
    options = dict(options)
    if options.pop("distance", None):
        mine = lambda a, b: 1 - F.cosine_similarity(a, b)  # noqa: E731
        theirs = lambda a, b: 1 - torch.nn.functional.cosine_similarity(a, b)  # noqa: E731
    else:
        mine = theirs = None
    arrays = [data((4, 3)), data((4, 3), 1), data((4, 3), 2)]
    ours = [leaf(a) for a in arrays]
    their_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = F.triplet_margin_with_distance_loss(*ours, distance_function=mine, **options)
    their = torch.nn.functional.triplet_margin_with_distance_loss(*their_in, distance_function=theirs, **options)
    np.testing.assert_allclose(out.detach().numpy(), their.detach().numpy(), rtol=1e-10)
    out.sum().backward(), their.sum().backward()
    for a, b in zip(ours, their_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_triplet_margin_with_distance_loss_module_and_errors():
    torch = torch_or_skip()
    assert repr(genesis.nn.TripletMarginWithDistanceLoss()) == repr(torch.nn.TripletMarginWithDistanceLoss())
    for make in (torch.nn.TripletMarginWithDistanceLoss, genesis.nn.TripletMarginWithDistanceLoss):
        with pytest.raises(ValueError, match="margin"):
            make(margin=0)
    with pytest.raises(RuntimeError):
        torch.nn.functional.triplet_margin_with_distance_loss(torch.randn(3, 4), torch.randn(3, 4), torch.randn(4))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(genesis.randn(3, 4), genesis.randn(3, 4), genesis.randn(4))
    a, p, n = (leaf(data((3, 2), seed)) for seed in range(3))
    loss = genesis.nn.TripletMarginWithDistanceLoss(swap=True, reduction="sum")
    assert genesis.autograd.gradcheck(lambda *t: loss(*t), (a, p, n))


def log_probs(frames, batch, classes, seed=0):
    logits = data((frames, batch, classes), seed)
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


CTC_CASES = [
    (log_probs(6, 2, 4), np.array([[1, 2, 2], [3, 1, 0]]), (6, 5), (3, 2), {}),
    (log_probs(7, 3, 3), np.array([1, 2, 2, 1, 1]), (7, 6, 3), (2, 3, 0), {"reduction": "sum"}),
    (log_probs(5, 2, 5), np.array([[4, 4], [1, 3]]), (5, 3), (2, 2), {"reduction": "none", "blank": 2}),
    (log_probs(3, 2, 3), np.array([[1, 1, 1], [2, 0, 0]]), (3, 3), (3, 1), {"zero_infinity": True}),
    (log_probs(3, 2, 3), np.array([[1, 1, 1], [2, 0, 0]]), (3, 3), (3, 1),
     {"zero_infinity": True, "reduction": "none"}),
    (data((5, 2, 4)), np.array([[1, 2], [3, 3]]), (5, 5), (2, 2), {}),  # not normalised
]


@pytest.mark.parametrize("array, targets, input_lengths, target_lengths, options", CTC_CASES)
def test_ctc_loss_matches_pytorch_values_and_gradients(array, targets, input_lengths,
                                                       target_lengths, options):
    compare("ctc_loss", [array], [targets, input_lengths, target_lengths], options, rtol=1e-9)


def test_ctc_loss_unbatched_with_tensor_lengths_and_the_module():
    torch = torch_or_skip()
    array = log_probs(5, 1, 4)[:, 0]
    mine, theirs = leaf(array), torch.tensor(array, requires_grad=True)
    ours = genesis.nn.CTCLoss(blank=3)(mine, genesis.tensor([1, 2]), genesis.tensor(5), genesis.tensor(2))
    their = torch.nn.CTCLoss(blank=3)(theirs, torch.tensor([1, 2]), torch.tensor(5), torch.tensor(2))
    np.testing.assert_allclose(ours.item(), their.item(), rtol=1e-10)
    ours.backward(), their.backward()
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-12)
    assert repr(genesis.nn.CTCLoss()) == repr(torch.nn.CTCLoss())


def test_ctc_loss_of_logits_against_finite_differences():
    """Through a log_softmax (what ctc_loss's gradient assumes) the gradient is exact."""
    logits = leaf(data((6, 2, 4)))
    targets = genesis.tensor([[1, 2, 2], [3, 1, 0]])
    assert genesis.autograd.gradcheck(
        lambda x: F.ctc_loss(x.log_softmax(2), targets, (6, 5), (3, 2)), (logits,))


def test_ctc_loss_has_no_double_backward_as_pytorch():
    logits = leaf(data((4, 1, 3)))
    loss = F.ctc_loss(logits.log_softmax(2), genesis.tensor([[1, 2]]), (4,), (2,))
    (gradient,) = genesis.autograd.grad(loss, logits, create_graph=True)
    with pytest.raises(RuntimeError, match="double backward"):
        gradient.sum().backward()


def test_ctc_loss_refuses_what_pytorch_refuses():
    torch = torch_or_skip()
    array, targets = log_probs(5, 2, 4), np.array([[1, 2], [1, 1]])
    cases = [((6, 5), (2, 2), {}, RuntimeError), ((5, 5), (3, 2), {}, RuntimeError),
             ((5, 5), (2, 2), {"reduction": "foo"}, ValueError)]
    for inputs, lengths, options, error in cases:
        with pytest.raises(error):
            torch.nn.functional.ctc_loss(torch.tensor(array), torch.tensor(targets), inputs, lengths, **options)
        with pytest.raises(error, match="ctc_loss"):
            F.ctc_loss(genesis.tensor(array), genesis.tensor(targets), inputs, lengths, **options)


def _twin_adaptive_softmax(torch, *args, **kwargs):
    """An AdaptiveLogSoftmaxWithLoss in genesis with the PyTorch one's initial weights."""
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    ours = genesis.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    ours.load_state_dict({name: genesis.tensor(value.detach().numpy(), dtype=genesis.float64)
                          for name, value in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("head_bias, targets", [(False, [1, 5, 9, 0, 12, 7]), (True, [2, 3, 1, 0, 1, 2])])
def test_adaptive_log_softmax_matches_pytorch(head_bias, targets):
    torch = torch_or_skip()
    ours, theirs = _twin_adaptive_softmax(torch, 8, 14, [4, 8, 11], div_value=2.0, head_bias=head_bias)
    x = data((6, 8))
    mine, their_x = leaf(x), torch.tensor(x, requires_grad=True)
    out, their = ours(mine, genesis.tensor(targets)), theirs(their_x, torch.tensor(targets))
    np.testing.assert_allclose(out.output.detach().numpy(), their.output.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(out.loss.item(), their.loss.item(), rtol=1e-10)
    out.loss.backward(), their.loss.backward()
    np.testing.assert_allclose(mine.grad.numpy(), their_x.grad.numpy(), rtol=1e-9, atol=1e-12)
    their_grads = dict(theirs.named_parameters())
    for name, parameter in ours.named_parameters():
        expected = their_grads[name].grad
        if expected is None:  # a cluster no target fell in
            assert parameter.grad is None or not parameter.grad.numpy().any()
        else:
            np.testing.assert_allclose(parameter.grad.numpy(), expected.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(ours.log_prob(genesis.tensor(x, dtype=genesis.float64)).detach().numpy(),
                               theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-10)
    np.testing.assert_array_equal(ours.predict(genesis.tensor(x * 5, dtype=genesis.float64)).numpy(),
                                  theirs.predict(torch.tensor(x * 5)).numpy())
    assert repr(ours) == repr(theirs)


def test_adaptive_log_softmax_one_sample_and_errors():
    torch = torch_or_skip()
    ours, theirs = _twin_adaptive_softmax(torch, 4, 6, [2])
    x = data(4)
    out, their = ours(genesis.tensor(x, dtype=genesis.float64), genesis.tensor(4)), theirs(torch.tensor(x), torch.tensor(4))
    assert out.output.shape == tuple(their.output.shape) == ()
    np.testing.assert_allclose(out.output.item(), their.output.item(), rtol=1e-10)
    for cutoffs in ([], [3, 2], [0, 2], [6]):
        with pytest.raises(ValueError):
            torch.nn.AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs)
        with pytest.raises(ValueError, match="cutoffs"):
            genesis.nn.AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs)
    for x, target in [(data((2, 4)), [1, 6]), (data((2, 4)), [1]), (data((2, 4)), [[1, 2]])]:
        with pytest.raises(RuntimeError):
            theirs(torch.tensor(x), torch.tensor(target))
        with pytest.raises(RuntimeError, match="AdaptiveLogSoftmaxWithLoss"):
            ours(genesis.tensor(x, dtype=genesis.float64), genesis.tensor(target))

"""Losses: values and gradients against PyTorch for every option, plus gradcheck and errors."""
import warnings

import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis import nn
from genesis.autograd import gradcheck, gradgradcheck
from tests.helpers import torch_or_skip

REDUCTIONS = ["mean", "sum", "none"]


def _pair(torch, array, requires_grad=True):
    return (genesis.from_numpy(array.copy()).requires_grad_(requires_grad),
            torch.from_numpy(array.copy()).requires_grad_(requires_grad))


def _compare(torch, ours, theirs, leaves, rtol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=1e-12)
    weights = np.random.default_rng(5).standard_normal(ours.shape)
    ours.backward(genesis.from_numpy(weights))
    theirs.backward(torch.from_numpy(weights))
    for mine, reference in leaves:
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, options", [("mse_loss", {}), ("l1_loss", {}),
                                           ("smooth_l1_loss", {"beta": 0.7}),
                                           ("smooth_l1_loss", {"beta": 0.0}),
                                           ("huber_loss", {"delta": 0.6})])
def test_regression_losses_match_pytorch(name, options, reduction, rng):
    torch = torch_or_skip()
    x, tx = _pair(torch, rng.standard_normal((4, 3)))
    y, ty = _pair(torch, rng.standard_normal((4, 3)))
    ours = getattr(F, name)(x, y, reduction=reduction, **options)
    theirs = getattr(torch.nn.functional, name)(tx, ty, reduction=reduction, **options)
    _compare(torch, ours, theirs, [(x, tx), (y, ty)])


CLASS_CASES = [
    dict(), dict(weight=True), dict(ignore_index=1), dict(weight=True, ignore_index=2),
    dict(label_smoothing=0.2), dict(label_smoothing=0.3, weight=True, ignore_index=0),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("options", CLASS_CASES, ids=[str(c) for c in CLASS_CASES])
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 2), (4,)])
def test_cross_entropy_and_nll_with_class_targets_match_pytorch(shape, options, reduction, rng):
    torch = torch_or_skip()
    classes = shape[0] if len(shape) == 1 else shape[1]
    target_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    target = rng.integers(0, classes, target_shape)
    options = dict(options)
    weight = rng.uniform(0.5, 2.0, classes) if options.pop("weight", False) else None
    logits, torch_logits = _pair(torch, rng.standard_normal(shape))
    kwargs = dict(reduction=reduction, **options)
    our_weight = genesis.from_numpy(weight) if weight is not None else None
    torch_weight = torch.from_numpy(weight) if weight is not None else None
    ours = F.cross_entropy(logits, genesis.from_numpy(target), weight=our_weight, **kwargs)
    theirs = torch.nn.functional.cross_entropy(torch_logits, torch.from_numpy(target),
                                               weight=torch_weight, **kwargs)
    _compare(torch, ours, theirs, [(logits, torch_logits)])
    if options.get("label_smoothing"):
        return
    log_probs, torch_log_probs = _pair(torch, rng.standard_normal(shape))
    ours = F.nll_loss(log_probs, genesis.from_numpy(target), weight=our_weight, **kwargs)
    theirs = torch.nn.functional.nll_loss(torch_log_probs, torch.from_numpy(target),
                                          weight=torch_weight, **kwargs)
    _compare(torch, ours, theirs, [(log_probs, torch_log_probs)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("options", [dict(), dict(weight=True), dict(label_smoothing=0.25, weight=True)])
def test_cross_entropy_with_probability_targets_matches_pytorch(options, reduction, rng):
    torch = torch_or_skip()
    options = dict(options)
    weight = rng.uniform(0.5, 2.0, 4) if options.pop("weight", False) else None
    logits, torch_logits = _pair(torch, rng.standard_normal((3, 4, 2)))
    probabilities = np.exp(rng.standard_normal((3, 4, 2)))
    probabilities /= probabilities.sum(1, keepdims=True)
    target, torch_target = _pair(torch, probabilities)
    ours = F.cross_entropy(logits, target, reduction=reduction, **options,
                           weight=None if weight is None else genesis.from_numpy(weight))
    theirs = torch.nn.functional.cross_entropy(torch_logits, torch_target, reduction=reduction, **options,
                                               weight=None if weight is None else torch.from_numpy(weight))
    _compare(torch, ours, theirs, [(logits, torch_logits), (target, torch_target)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("with_weight", [False, True])
def test_binary_cross_entropy_losses_match_pytorch(reduction, with_weight, rng):
    torch = torch_or_skip()
    weight = rng.uniform(0.5, 2.0, (4, 3)) if with_weight else None
    our_weight = genesis.from_numpy(weight) if with_weight else None
    torch_weight = torch.from_numpy(weight) if with_weight else None
    probabilities, torch_probabilities = _pair(torch, rng.uniform(0.05, 0.95, (4, 3)))
    target, torch_target = _pair(torch, rng.uniform(0, 1, (4, 3)))
    ours = F.binary_cross_entropy(probabilities, target, our_weight, reduction)
    theirs = torch.nn.functional.binary_cross_entropy(torch_probabilities, torch_target, torch_weight,
                                                      reduction=reduction)
    _compare(torch, ours, theirs, [(probabilities, torch_probabilities), (target, torch_target)],
             rtol=1e-9)
    logits, torch_logits = _pair(torch, rng.standard_normal((4, 3)) * 30)  # large: stability
    pos_weight = rng.uniform(0.5, 3.0, 3)
    ours = F.binary_cross_entropy_with_logits(logits, target.detach(), our_weight, reduction,
                                              genesis.from_numpy(pos_weight))
    theirs = torch.nn.functional.binary_cross_entropy_with_logits(
        torch_logits, torch_target.detach(), torch_weight, reduction=reduction,
        pos_weight=torch.from_numpy(pos_weight))
    _compare(torch, ours, theirs, [(logits, torch_logits)], rtol=1e-9)


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides:UserWarning")  # torch's advice
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_matches_pytorch(reduction, log_target, rng):
    torch = torch_or_skip()
    log_probs, torch_log_probs = _pair(torch, np.log(rng.dirichlet(np.ones(5), 3)))
    target = rng.dirichlet(np.ones(5), 3)
    target[0, 1] = 0.0  # 0 * log 0 counts as 0
    target = np.log(target + 1e-3) if log_target else target
    ours = F.kl_div(log_probs, genesis.from_numpy(target), reduction, log_target)
    theirs = torch.nn.functional.kl_div(torch_log_probs, torch.from_numpy(target),
                                        reduction=reduction, log_target=log_target)
    _compare(torch, ours, theirs, [(log_probs, torch_log_probs)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("target_shape", [(4, 3), (3,), (4, 1)], ids=["same", "row", "column"])
def test_mse_loss_node_passes_gradcheck_and_gradgradcheck(reduction, target_shape, rng):
    x = genesis.from_numpy(rng.standard_normal((4, 3))).requires_grad_()
    y = genesis.from_numpy(rng.standard_normal(target_shape)).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the broadcast targets' size warning
        assert F.mse_loss(x, y, reduction=reduction).grad_fn.name() == "MseLossBackward0"
        assert gradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), (x, y))
        assert gradgradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), (x, y))
        transposed = genesis.from_numpy(rng.standard_normal((3, 4))).T.requires_grad_()
        assert gradcheck(lambda a: F.mse_loss(a, x.detach(), reduction=reduction), (transposed,))


def test_mse_loss_of_nothing():
    empty = genesis.zeros(0, 3, requires_grad=True)
    assert F.mse_loss(empty, genesis.zeros(0, 3)).isnan().item()
    assert F.mse_loss(empty, genesis.zeros(0, 3), reduction="sum").item() == 0.0


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weights", [False, True], ids=["plain", "weight and pos_weight"])
def test_bce_with_logits_node_passes_gradcheck_and_gradgradcheck(reduction, weights, rng):
    x = genesis.from_numpy(rng.standard_normal((4, 3)) * 3).requires_grad_()
    target = genesis.from_numpy(rng.uniform(0, 1, (4, 3)))
    options = dict(weight=genesis.from_numpy(rng.uniform(0.5, 2, 3)),
                   pos_weight=genesis.from_numpy(rng.uniform(0.5, 3, 3))) if weights else {}

    def loss(a):
        return F.binary_cross_entropy_with_logits(a, target, reduction=reduction, **options)

    assert loss(x).grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"
    assert gradcheck(loss, (x,))
    assert gradgradcheck(loss, (x,))
    assert gradcheck(loss, (genesis.from_numpy(rng.standard_normal((3, 4))).T.requires_grad_(),))


def test_bce_with_logits_gradient_at_zero_is_sigmoid_minus_target():
    x = genesis.zeros(3, dtype=genesis.float64, requires_grad=True)
    F.binary_cross_entropy_with_logits(x, genesis.tensor([0.0, 0.5, 1.0], dtype=genesis.float64),
                                       reduction="sum").backward()
    assert x.grad.tolist() == [0.5, 0.0, -0.5]  # PyTorch's; subgradients of |x| would say 1 - t


def test_bce_with_logits_target_that_needs_a_gradient_gets_one(rng):
    x = genesis.from_numpy(rng.standard_normal(4)).requires_grad_()
    target = genesis.from_numpy(rng.uniform(0, 1, 4)).requires_grad_()
    assert gradcheck(lambda a, t: F.binary_cross_entropy_with_logits(a, t), (x, target))


def test_losses_have_correct_second_derivatives(rng):
    logits = genesis.from_numpy(rng.standard_normal((3, 4))).requires_grad_()
    target = genesis.tensor([0, 3, 1])
    assert gradgradcheck(lambda x: F.cross_entropy(x, target, label_smoothing=0.1), (logits,))
    y = genesis.from_numpy(rng.standard_normal((3, 4)))
    assert gradcheck(lambda x: F.huber_loss(x, y, delta=0.5), (logits,), atol=1e-6, rtol=1e-5)
    assert gradgradcheck(lambda x: F.binary_cross_entropy_with_logits(x, y.sigmoid()), (logits,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_fused_cross_entropy_passes_gradcheck_and_gradgradcheck(reduction, rng):
    logits = genesis.from_numpy(rng.standard_normal((3, 4, 2))).requires_grad_()
    target = genesis.tensor([[0, 3], [1, 2], [3, 3]])
    weight = genesis.from_numpy(rng.uniform(0.5, 2.0, 4))

    def loss(x):
        return F.cross_entropy(x, target, weight, ignore_index=2, reduction=reduction,
                               label_smoothing=0.2)

    assert gradcheck(loss, (logits,), atol=1e-6, rtol=1e-5)
    assert gradgradcheck(loss, (logits,), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(3, 4, 2), (5, 3), (4,)])
def test_plain_cross_entropy_passes_gradcheck_and_gradgradcheck(shape, reduction, rng):
    logits = genesis.from_numpy(rng.standard_normal(shape)).requires_grad_()
    classes = shape[0] if len(shape) == 1 else shape[1]
    target = genesis.from_numpy(rng.integers(0, classes, () if len(shape) == 1 else (shape[0],) + shape[2:]))

    def loss(x):
        return F.cross_entropy(x, target, reduction=reduction)

    assert loss(logits).grad_fn.name() == "CrossEntropyBackward0"
    assert gradcheck(loss, (logits,), atol=1e-6, rtol=1e-5)
    assert gradgradcheck(loss, (logits,), atol=1e-6, rtol=1e-5)
    if len(shape) == 2:  # a non-contiguous input
        assert gradcheck(loss, (genesis.from_numpy(rng.standard_normal(shape[::-1])).T.requires_grad_(),),
                         atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_plain_and_weighted_cross_entropy_agree(dtype, reduction, rng):
    logits = genesis.from_numpy(rng.standard_normal((6, 5)))
    target = genesis.from_numpy(rng.integers(0, 5, 6).astype(dtype))
    plain = F.cross_entropy(logits.requires_grad_(), target, reduction=reduction)
    ones = genesis.ones(5, dtype=genesis.float64)
    weighted = F.cross_entropy(logits, target, weight=ones, reduction=reduction)
    assert plain.grad_fn.name() == "CrossEntropyBackward0"
    assert weighted.grad_fn.name() == "WeightedCrossEntropyBackward0"
    np.testing.assert_allclose(plain.detach().numpy(), weighted.detach().numpy(), rtol=1e-14)
    seed = genesis.from_numpy(rng.standard_normal(plain.shape))
    (plain_grad,) = genesis.autograd.grad(plain, logits, seed)
    (weighted_grad,) = genesis.autograd.grad(weighted, logits, seed)
    np.testing.assert_allclose(plain_grad.numpy(), weighted_grad.numpy(), rtol=1e-13, atol=1e-16)


def test_cross_entropy_takes_the_weighted_node_for_ignored_targets():
    logits = genesis.zeros(2, 3, requires_grad=True)
    ignored = F.cross_entropy(logits, genesis.tensor([0, -100]))
    assert ignored.grad_fn.name() == "WeightedCrossEntropyBackward0"
    assert ignored.item() == pytest.approx(np.log(3))
    in_range = F.cross_entropy(logits, genesis.tensor([0, 2]), ignore_index=2)
    assert in_range.grad_fn.name() == "WeightedCrossEntropyBackward0"
    assert F.cross_entropy(genesis.zeros(0, 3), genesis.zeros(0, dtype=genesis.int64)).isnan().item()


def test_cross_entropy_in_half_precision_matches_float32(rng):
    logits = rng.standard_normal((8, 5)).astype(np.float16)
    target = genesis.from_numpy(rng.integers(0, 5, 8))
    half = genesis.from_numpy(logits).requires_grad_()
    single = genesis.from_numpy(logits.astype(np.float32)).requires_grad_()
    loss_half, loss_single = F.cross_entropy(half, target), F.cross_entropy(single, target)
    assert loss_half.dtype == genesis.float16
    assert loss_half.item() == pytest.approx(loss_single.item(), rel=1e-3)
    loss_half.backward()
    loss_single.backward()
    assert half.grad.dtype == genesis.float16
    np.testing.assert_allclose(half.grad.numpy(), single.grad.numpy(), atol=1e-3)


def test_modules_wrap_the_functions_and_keep_weights_as_buffers():
    weight = genesis.tensor([1.0, 2.0])
    criterion = nn.CrossEntropyLoss(weight=weight, ignore_index=1, label_smoothing=0.1)
    assert repr(criterion) == "CrossEntropyLoss()" and "weight" in criterion.state_dict()
    logits, target = genesis.tensor([[1.0, 0.0], [0.0, 3.0]]), genesis.tensor([0, 1])
    assert criterion(logits, target).item() == pytest.approx(
        F.cross_entropy(logits, target, weight, 1, "mean", 0.1).item())
    assert nn.MSELoss(reduction="sum")(genesis.ones(2), genesis.zeros(2)).item() == 2.0
    assert nn.L1Loss()(genesis.ones(2), genesis.zeros(2)).item() == 1.0
    assert nn.SmoothL1Loss(beta=2.0)(genesis.ones(1), genesis.zeros(1)).item() == 0.25
    assert nn.HuberLoss(delta=0.5)(genesis.ones(1), genesis.zeros(1)).item() == 0.375
    assert nn.NLLLoss()(genesis.tensor([[-1.0, -2.0]]), genesis.tensor([1])).item() == 2.0
    assert nn.BCELoss()(genesis.tensor([0.5]), genesis.tensor([1.0])).item() == pytest.approx(0.6931472)
    assert nn.BCEWithLogitsLoss(pos_weight=genesis.tensor([2.0]))(
        genesis.tensor([0.0]), genesis.tensor([1.0])).item() == pytest.approx(2 * 0.6931472)
    assert nn.KLDivLoss(reduction="batchmean")(genesis.tensor([[0.0]]), genesis.tensor([[1.0]])).item() == 0.0


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("loss", [F.cross_entropy, F.nll_loss])
def test_class_targets_of_every_integer_dtype_are_checked_at_both_ends(loss, dtype):
    classes = 4 if np.dtype(dtype).itemsize == 1 else 300
    logits = genesis.zeros(3, classes)
    assert np.isfinite(loss(logits, genesis.tensor(np.array([0, classes - 1, 1], dtype=dtype))).item())
    with pytest.raises(IndexError, match=f"target {classes} is out of bounds for {classes} classes"):
        loss(logits, genesis.tensor(np.array([0, classes, 1], dtype=dtype)))
    if np.dtype(dtype).kind == "i":
        with pytest.raises(IndexError, match=f"target -1 is out of bounds for {classes} classes"):
            loss(logits, genesis.tensor(np.array([0, -1, 1], dtype=dtype)))
        ignored = genesis.tensor(np.array([0, -7, 1], dtype=dtype))
        assert loss(logits, ignored, ignore_index=-7).item() == pytest.approx(
            loss(logits[[0, 2]], genesis.tensor([0, 1])).item())


def test_cross_entropy_mean_over_kept_targets_matches_pytorch(rng):
    torch = torch_or_skip()
    x, tx = _pair(torch, rng.standard_normal((5, 4)))
    target = np.array([1, 3, 2, 3, 0])
    weight = np.array([0.5, 2.0, 1.0, 3.0])
    ours = F.cross_entropy(x, genesis.tensor(target), weight=genesis.tensor(weight), ignore_index=3)
    theirs = torch.nn.functional.cross_entropy(tx, torch.tensor(target), weight=torch.tensor(weight),
                                               ignore_index=3)
    _compare(torch, ours, theirs, [(x, tx)])


def test_errors_name_the_problem():
    logits = genesis.zeros(2, 3)
    with pytest.raises(IndexError, match="target 3 is out of bounds for 3 classes"):
        F.cross_entropy(logits, genesis.tensor([0, 3]))
    with pytest.raises(ValueError, match=r"needs a target of shape \(2,\), got \(3,\)"):
        F.cross_entropy(logits, genesis.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="integer tensor"):
        F.nll_loss(logits, genesis.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="'avg' is not a valid value for reduction"):
        F.mse_loss(logits, logits, reduction="avg")
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(genesis.tensor([1.5]), genesis.tensor([1.0]))
    with pytest.warns(UserWarning, match="target size"):
        F.mse_loss(genesis.zeros(2, 1), genesis.zeros(2))
    assert F.cross_entropy(logits, genesis.tensor([-100, -100])).item() != \
        F.cross_entropy(logits, genesis.tensor([-100, -100])).item()  # all ignored: NaN, as in torch


def test_bce_clamps_the_log_at_minus_100():
    assert F.binary_cross_entropy(genesis.tensor([0.0]), genesis.tensor([1.0])).item() == 100.0


def test_bce_of_a_confident_correct_prediction_has_zero_gradient():
    p = genesis.tensor([1.0, 0.0], requires_grad=True)
    loss = F.binary_cross_entropy(p, genesis.tensor([1.0, 0.0]))
    loss.backward()
    assert loss.item() == 0.0 and p.grad.tolist() == [0.0, 0.0]  # no 0 * inf from a clamp


def _saturated_probabilities(library, dtype):
    p = library.tensor([0.0, 1.0, 0.0, 1.0, 0.3], dtype=dtype, requires_grad=True)
    t = library.tensor([0.0, 1.0, 1.0, 0.0, 0.6], dtype=dtype, requires_grad=True)
    return p, t, library.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("with_weight", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bce_at_saturated_probabilities_matches_pytorch_exactly(dtype, with_weight, reduction):
    """Loss, gradients (PyTorch's floor of 1e-12 on x (1 - x)) and second derivatives at
    x = 0 and 1, right and wrong."""
    torch = torch_or_skip()
    results = []
    for library in (genesis, torch):
        p, t, weight = _saturated_probabilities(library, getattr(library, dtype))
        loss = library.nn.functional.binary_cross_entropy(p, t, weight if with_weight else None,
                                                         reduction=reduction)
        grads = library.autograd.grad(loss.sum(), (p, t), create_graph=True)
        second = library.autograd.grad((grads[0] * library.arange(5.0, dtype=p.dtype)).sum(), (p, t))
        results.append([loss.tolist()] + [g.tolist() for g in grads + second])
    for ours, theirs in zip(*results):  # (a sum's last bit may differ: its order)
        np.testing.assert_allclose(ours, theirs, rtol=1e-15 if dtype == "float64" else 1e-7)


def test_bce_through_a_saturated_sigmoid_matches_pytorch():
    x = genesis.tensor([20.0, -20.0], requires_grad=True)  # sigmoid(20) is 1.0 in float32
    loss = F.binary_cross_entropy(x.sigmoid(), genesis.tensor([0.0, 1.0]))
    loss.backward()
    assert loss.item() == 60.0 and x.grad[0].item() == 0.0
    assert x.grad[1].item() == pytest.approx(-0.5)
    q = genesis.tensor([0.0, 1.0], requires_grad=True)
    F.binary_cross_entropy(q, genesis.tensor([1.0, 0.0])).backward()
    assert q.grad.tolist() == [-499999997952.0, 499999997952.0]  # PyTorch's clamped value


def test_bce_refuses_what_pytorch_refuses():
    p = genesis.tensor([0.3, 0.4])
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        F.binary_cross_entropy(p, genesis.tensor([0.0, 1.0]),
                               genesis.tensor([1.0, 2.0], requires_grad=True))
    with pytest.raises(RuntimeError, match="target should be between 0 and 1"):
        F.binary_cross_entropy(p, genesis.tensor([0.0, 1.5]))
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(p, genesis.tensor([[0.0, 1.0]]))
    with pytest.raises(RuntimeError, match="float64.*float32.*to\\(input.dtype\\)"):
        F.binary_cross_entropy(p.double(), genesis.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="respect to argument 'pos_weight'"):
        F.binary_cross_entropy_with_logits(p, genesis.tensor([0.0, 1.0]), pos_weight=genesis.tensor(
            [1.0, 2.0], requires_grad=True))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("pos_weight", [None, 2.0])
def test_bce_with_logits_at_large_and_zero_logits_matches_pytorch(pos_weight, dtype):
    """PyTorch's gradient (pw t + 1 - t) sigmoid(x) - pw t: no cancellation at -100, and the
    target's gradient at x = 0 (where |x| and relu have kinks) through the same node."""
    torch = torch_or_skip()
    results = []
    for library in (genesis, torch):
        kind = getattr(library, dtype)
        x = library.tensor([20.0, -20.0, 100.0, -100.0, 0.0], dtype=kind, requires_grad=True)
        t = library.tensor([0.0, 1.0, 1.0, 0.0, 1.0], dtype=kind, requires_grad=True)
        options = {} if pos_weight is None else {"pos_weight": library.tensor(pos_weight, dtype=kind)}
        loss = library.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="none",
                                                                      **options)
        loss.sum().backward()
        results.append([x.grad.tolist(), t.grad.tolist()])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=0)


ALL_IGNORED_CASES = [
    ("cross_entropy", {}), ("cross_entropy", {"weight": True}),
    ("cross_entropy", {"label_smoothing": 0.1}),
    ("cross_entropy", {"label_smoothing": 0.1, "weight": True}),
    ("nll_loss", {}), ("nll_loss", {"weight": True}), ("nll_of_log_softmax", {}),
    ("zero_weight_targets", {}), ("zero_weight_targets", {"label_smoothing": 0.1}),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, options", ALL_IGNORED_CASES, ids=[f"{n} {o}" for n, o in ALL_IGNORED_CASES])
def test_an_all_padding_batch_has_zero_gradient_as_in_pytorch(name, options, reduction):
    """Every target ignored: "mean" is nan (a mean of nothing) but the gradient is 0; targets
    of weight 0 that are not ignored give nan gradients (0 / 0), as PyTorch's."""
    torch = torch_or_skip()
    results = []
    for library in (genesis, torch):
        functional = library.nn.functional
        x = library.arange(6.0, dtype=library.float64).reshape(2, 3).requires_grad_()
        kwargs = dict(options, reduction=reduction)
        if kwargs.pop("weight", False) or name == "zero_weight_targets":
            kwargs["weight"] = library.tensor([0.0, 1.0, 1.0], dtype=library.float64)
        target = library.tensor([0, 0] if name == "zero_weight_targets" else [-100, -100])
        if name == "nll_of_log_softmax":
            loss = functional.nll_loss(x.log_softmax(1), target, **kwargs)
        elif name == "nll_loss":
            loss = functional.nll_loss(x, target, **kwargs)
        else:
            loss = functional.cross_entropy(x, target, **kwargs)
        loss.sum().backward()
        results.append((loss.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)


def test_kl_div_target_gradient_at_zero_matches_pytorch():
    """PyTorch composes xlogy(t, t) - t * input: the target's gradient is nan at t = 0."""
    torch = torch_or_skip()
    grads = []
    for library in (genesis, torch):
        t = library.tensor([[0.0, 1.0, 0.5]], requires_grad=True)
        library.nn.functional.kl_div(library.tensor([[-1.0, -2.0, -0.5]]), t,
                                     reduction="sum").backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)

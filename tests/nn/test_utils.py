"""nn.utils: gradient clipping (vs PyTorch) and parameters <-> vector."""
import math
import warnings

import numpy as np
import pytest

import genesis
from genesis import nn
from genesis.nn.utils import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from tests.helpers import torch_or_skip


def _params_with_grads(lib, grads, dtype):
    params = []
    for grad in grads:
        param = lib.from_numpy(np.zeros_like(grad, dtype=dtype)).requires_grad_()
        param.grad = lib.from_numpy(grad.astype(dtype))
        params.append(param)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, -math.inf, 0.0])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_grad_norm_matches_pytorch(norm_type, max_norm, dtype):
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(shape) for shape in ((3, 4), (5,), (2, 2, 2))]
    ours = _params_with_grads(genesis, grads, dtype)
    theirs = _params_with_grads(torch, grads, dtype)
    total = clip_grad_norm_(ours, max_norm, norm_type, foreach=True)
    torch_total = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type, foreach=False)
    assert total.shape == () and total.dtype == getattr(genesis, np.dtype(dtype).name)
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    assert total.item() == pytest.approx(torch_total.item(), rel=rtol)
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=rtol, atol=1e-7)


def test_clip_grads_with_norm_scales_by_a_norm_given_as_pytorchs():
    """The second half of clip_grad_norm_, with a total norm from get_total_norm (here of more
    gradients than those clipped); foreach= is accepted everywhere, as PyTorch's."""
    torch = torch_or_skip()
    grads = [np.array([3.0, 4.0]), np.array([12.0])]
    results = []
    for lib, clip in ((genesis, clip_grads_with_norm_), (torch, torch.nn.utils.clip_grads_with_norm_)):
        params = _params_with_grads(lib, grads, np.float64)
        total = lib.nn.utils.get_total_norm([p.grad for p in params], foreach=False)
        clip(params[:1], 1.0, total, foreach=False)
        lib.nn.utils.clip_grad_value_(params[1:], 5.0, foreach=False)
        results.append([total.item()] + [value for p in params for value in p.grad.tolist()])
    assert results[0] == pytest.approx(results[1], rel=1e-12) and results[0][0] == 13.0


def test_clip_grad_norm_single_tensor_no_grads_and_nonfinite():
    w = genesis.tensor([3.0, 4.0], requires_grad=True)
    assert clip_grad_norm_(w, 10.0).item() == 0.0  # no grad yet
    w.grad = genesis.tensor([3.0, 4.0])
    grad = w.grad
    assert clip_grad_norm_(w, 1.0).item() == 5.0
    assert w.grad is grad and w.grad.tolist() == pytest.approx([0.6, 0.8], rel=1e-6)
    w.grad = genesis.tensor([math.inf, 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_([w], 1.0, error_if_nonfinite=True)
    assert math.isinf(clip_grad_norm_([w], 1.0).item())
    assert math.isnan(w.grad.tolist()[0]) and w.grad.tolist()[1] == 0.0  # as in PyTorch


def test_get_total_norm_of_several_tensors():
    assert get_total_norm([genesis.tensor([3.0]), genesis.tensor([4.0])]).item() == 5.0
    assert get_total_norm([genesis.tensor([-3.0]), genesis.tensor([2.0])], math.inf).item() == 3.0


def test_clip_grad_value_clamps_in_place():
    layer = nn.Linear(2, 2)
    layer(genesis.ones(1, 2) * 10).sum().backward()
    grad = layer.weight.grad
    clip_grad_value_(layer.parameters(), 0.5)
    assert layer.weight.grad is grad
    assert np.abs(grad.numpy()).max() == 0.5 and layer.bias.grad.tolist() == [0.5, 0.5]


def test_clip_grad_value_clamps_every_gradient_that_is_part_of_a_graph():
    """Gradients a create_graph backward left (each with a grad_fn) are replaced by clamped
    copies, every one of them (it stopped after the first)."""
    first = genesis.tensor([3.0, -4.0], requires_grad=True)
    second = genesis.tensor([5.0, 6.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reference-cycle warning of create_graph
        ((first * first).sum() + (second * second).sum()).backward(create_graph=True)
    clip_grad_value_([first, second], 1.0)
    assert first.grad.tolist() == [1.0, -1.0] and second.grad.tolist() == [1.0, 1.0]


def test_clipping_after_backward_into_the_model_changes_the_update():
    model = nn.Linear(4, 1)
    optimizer = genesis.optim.SGD(model.parameters(), lr=1.0)
    before = model.weight.detach().numpy().copy()
    model(genesis.ones(8, 4) * 100).sum().backward()
    clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    step = np.concatenate([(model.weight.detach().numpy() - before).ravel()])
    assert np.linalg.norm(step) <= 1.0


def test_parameters_to_vector_and_back():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vector = nn.utils.parameters_to_vector(model.parameters())
    expected = np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])
    np.testing.assert_array_equal(vector.detach().numpy(), expected)
    (vector * genesis.arange(11.0)).sum().backward()  # differentiable, like torch.cat
    assert model[1].bias.grad.tolist() == [10.0]
    weight = model[0].weight
    version = weight._version
    nn.utils.vector_to_parameters(genesis.arange(11.0), model.parameters())
    assert model[0].weight is weight and weight._version == version + 1
    assert weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and model[1].bias.tolist() == [10.0]
    with pytest.raises(RuntimeError, match=r"vec has shape \(5,\), but the parameters hold 11"):
        nn.utils.vector_to_parameters(genesis.zeros(5), model.parameters())
    with pytest.raises(TypeError, match="genesis Tensor"):
        nn.utils.vector_to_parameters([0.0] * 11, model.parameters())


def test_deprecated_clip_grad_norm_warns_as_pytorch_and_clips_like_clip_grad_norm_():
    torch = torch_or_skip()
    grads = [np.array([3.0, 4.0]), np.array([[12.0]])]
    ours, theirs = _params_with_grads(genesis, grads, np.float64), _params_with_grads(torch, grads, np.float64)
    with pytest.warns(FutureWarning) as ours_warned:
        total = genesis.nn.utils.clip_grad_norm(ours, 1.0)
    with pytest.warns(FutureWarning) as theirs_warned:
        torch_total = torch.nn.utils.clip_grad_norm(theirs, 1.0)
    assert str(ours_warned[0].message) == str(theirs_warned[0].message)
    assert total.item() == pytest.approx(torch_total.item(), rel=1e-12)
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=1e-12)


def test_skip_init_builds_the_module_without_using_the_random_generator():
    """torch.nn.utils.skip_init (weights loaded afterwards): the module's shapes and device,
    the generator's state untouched, PyTorch's refusals."""
    genesis.manual_seed(3)
    expected = genesis.rand(2)
    genesis.manual_seed(3)
    layer = genesis.nn.utils.skip_init(genesis.nn.Linear, in_features=6, out_features=2, bias=False)
    assert tuple(layer.weight.shape) == (2, 6) and layer.bias is None and layer.weight.requires_grad
    assert genesis.equal(genesis.rand(2), expected)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        genesis.nn.utils.skip_init(int)

    class NoDevice(genesis.nn.Module):
        def __init__(self, width):
            super().__init__()
    with pytest.raises(RuntimeError, match="must support a 'device' arg"):
        genesis.nn.utils.skip_init(NoDevice, 3)

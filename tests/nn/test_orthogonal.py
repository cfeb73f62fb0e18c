"""nn.utils.parametrizations.orthogonal against PyTorch's: the weight, the parameter and
buffer names, the gradient reaching `original` and the weight after an SGD step, for the
matrix-exponential and Cayley maps, trivialized or not; wide and tall weights stay
orthogonal, and the Householder map (the default for them) matches PyTorch's too."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


@pytest.mark.parametrize("orthogonal_map, use_trivialization, shape", [
    ("matrix_exp", True, (4, 4)), ("cayley", True, (4, 4)), ("matrix_exp", False, (4, 4)),
    ("cayley", False, (4, 4)), (None, True, (4, 4)), ("householder", True, (4, 4)),
    ("householder", False, (4, 4)), ("householder", False, (6, 4)), ("householder", False, (3, 4)),
    (None, False, (4, 6))])
def test_weights_match_pytorch(orthogonal_map, use_trivialization, shape):
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    out_features, in_features = shape
    weight = rng.standard_normal(shape)
    x = rng.standard_normal((3, in_features))
    results = []
    for lib in (genesis, torch):
        layer = lib.nn.Linear(in_features, out_features, bias=False, dtype=lib.float64)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(weight, dtype=lib.float64))
        lib.nn.utils.parametrizations.orthogonal(layer, orthogonal_map=orthogonal_map,
                                                 use_trivialization=use_trivialization)
        names = ([n for n, _ in layer.named_parameters()], [n for n, _ in layer.named_buffers()])
        before = layer.weight.detach().numpy().copy()
        optimizer = lib.optim.SGD(layer.parameters(), lr=0.1)
        layer(lib.tensor(x, dtype=lib.float64)).pow(3).sum().backward()
        grad = layer.parametrizations.weight.original.grad.numpy().copy()
        optimizer.step()
        results.append((names, before, grad, layer.weight.detach().numpy()))
    (names, before, grad, after), (t_names, t_before, t_grad, t_after) = results
    assert names == t_names
    np.testing.assert_allclose(before, t_before, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad, t_grad, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(after, t_after, rtol=1e-9, atol=1e-12)
    gram = after @ after.T if out_features <= in_features else after.T @ after
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-10)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 3)])
def test_wide_tall_and_batched_weights_stay_orthogonal(shape):
    module = genesis.nn.Module()
    module.weight = genesis.nn.Parameter(genesis.randn(*shape, dtype=genesis.float64))
    genesis.nn.utils.parametrizations.orthogonal(module, orthogonal_map="matrix_exp")
    w = module.weight.detach().numpy()
    small = min(shape[-2:])
    gram = w @ np.swapaxes(w, -1, -2) if shape[-2] < shape[-1] else np.swapaxes(w, -1, -2) @ w
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(small), gram.shape), atol=1e-10)


def test_refusals():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), name="bias")
        with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr")

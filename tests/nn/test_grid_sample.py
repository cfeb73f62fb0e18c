"""affine_grid and grid_sample against PyTorch: values, gradients w.r.t. input, grid and
theta, every mode and padding mode, and the exception types; plus finite differences."""
import itertools
import warnings

import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from tests.helpers import torch_or_skip


def data(shape, seed=0, low=None, high=None):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) if low is None else rng.uniform(low, high, shape)


def leaf(array):
    return genesis.tensor(array, dtype=genesis.float64, requires_grad=True)


CASES = [(dims, mode, padding, align) for dims, mode, padding, align in itertools.product(
    (2, 3), ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (False, True))
    if not (dims == 3 and mode == "bicubic")]


@pytest.mark.parametrize("dims, mode, padding_mode, align_corners", CASES)
def test_grid_sample_matches_pytorch(dims, mode, padding_mode, align_corners):
    torch = torch_or_skip()
    shape = (2, 3, 4, 5) if dims == 2 else (2, 2, 3, 4, 5)
    image, points = data(shape), data((2,) + (3,) * dims + (dims,), 1, -1.6, 1.6)  # some outside
    mine, grid = leaf(image), leaf(points)
    theirs, their_grid = torch.tensor(image, requires_grad=True), torch.tensor(points, requires_grad=True)
    out = F.grid_sample(mine, grid, mode, padding_mode, align_corners)
    their = torch.nn.functional.grid_sample(theirs, their_grid, mode, padding_mode, align_corners)
    np.testing.assert_allclose(out.detach().numpy(), their.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = data(tuple(out.shape), 2)
    (out * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (their * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-12)
    if mode == "nearest":  # the output is piecewise constant in the grid: no gradient flows
        assert not grid.grad.numpy().any() and not their_grid.grad.any()  # zeros, as torch
    else:
        np.testing.assert_allclose(grid.grad.numpy(), their_grid.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dims, padding_mode, align_corners", list(itertools.product(
    (2, 3), ("border", "reflection"), (False, True))))
def test_points_on_the_edges_pass_no_grid_gradient_through_the_padding_as_pytorchs(
        dims, padding_mode, align_corners):
    """The identity grid puts points exactly on the edge pixels: PyTorch counts them as
    outside the clamp (zero gradient along that axis), not as reading a zero corner beyond."""
    torch = torch_or_skip()
    size = (2, 2, 4, 5) if dims == 2 else (1, 2, 3, 4, 5)
    identity = np.concatenate([np.eye(dims), np.zeros((dims, 1))], 1)[None].repeat(size[0], 0)
    points = torch.nn.functional.affine_grid(torch.tensor(identity), size, align_corners).numpy()
    points = points + np.where(data(points.shape, 4) > 0.5, 0.0, 0.3)  # some beyond the edges too
    image = data(size)
    grid, their_grid = leaf(points), torch.tensor(points, requires_grad=True)
    out = F.grid_sample(genesis.tensor(image, dtype=genesis.float64), grid, "bilinear", padding_mode,
                        align_corners)
    their = torch.nn.functional.grid_sample(torch.tensor(image), their_grid, "bilinear", padding_mode,
                                            align_corners)
    np.testing.assert_allclose(out.detach().numpy(), their.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = data(tuple(out.shape), 5)
    (out * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (their * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(grid.grad.numpy(), their_grid.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode, padding_mode, align_corners", [
    ("bilinear", "zeros", False), ("bilinear", "reflection", True), ("bicubic", "border", False)])
def test_grid_sample_gradients_against_finite_differences(mode, padding_mode, align_corners):
    image, points = leaf(data((1, 2, 3, 4))), leaf(data((1, 2, 3, 2), 1, -1.2, 1.2))
    assert genesis.autograd.gradcheck(
        lambda x, g: F.grid_sample(x, g, mode, padding_mode, align_corners), (image, points))


@pytest.mark.parametrize("size, align_corners", [
    ((2, 3, 4, 5), False), ((2, 3, 4, 5), True), ((2, 1, 1, 3), False), ((2, 1, 3, 4, 5), False),
    ((1, 2, 2, 1, 3), True)])
def test_affine_grid_matches_pytorch(size, align_corners):
    torch = torch_or_skip()
    dims = len(size) - 2
    matrices = data((size[0], dims, dims + 1))
    theta, their_theta = leaf(matrices), torch.tensor(matrices, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note on unit-size grids with align_corners
        their = torch.nn.functional.affine_grid(their_theta, size, align_corners)
    out = F.affine_grid(theta, size, align_corners)
    np.testing.assert_allclose(out.detach().numpy(), their.detach().numpy(), rtol=1e-12, atol=1e-14)
    weights = data(tuple(out.shape), 3)
    (out * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (their * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(theta.grad.numpy(), their_theta.grad.numpy(), rtol=1e-10)


def test_spatial_transformer_rotation_matches_pytorch():
    """affine_grid into grid_sample, as a spatial transformer network does it."""
    torch = torch_or_skip()
    angle = 0.3
    matrix = np.array([[[np.cos(angle), -np.sin(angle), 0.1], [np.sin(angle), np.cos(angle), 0.0]]])
    image = data((1, 3, 6, 6))
    theta, mine = leaf(matrix), leaf(image)
    their_theta, theirs = torch.tensor(matrix, requires_grad=True), torch.tensor(image, requires_grad=True)
    out = F.grid_sample(mine, F.affine_grid(theta, (1, 3, 6, 6), False), align_corners=False)
    their = torch.nn.functional.grid_sample(
        theirs, torch.nn.functional.affine_grid(their_theta, (1, 3, 6, 6), False), align_corners=False)
    np.testing.assert_allclose(out.detach().numpy(), their.detach().numpy(), rtol=1e-10, atol=1e-12)
    out.square().sum().backward(), their.square().sum().backward()
    np.testing.assert_allclose(theta.grad.numpy(), their_theta.grad.numpy(), rtol=1e-9)
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_refuses_what_pytorch_refuses():
    torch = torch_or_skip()
    image, points = data((1, 2, 4, 4)), data((1, 3, 3, 2))
    cases = [
        ((image, points), {"mode": "foo"}, ValueError),
        ((image, points), {"padding_mode": "foo"}, ValueError),
        ((image, data((2, 3, 3, 2))), {}, RuntimeError),
        ((image, data((1, 3, 3, 3))), {}, RuntimeError),
        ((data((1, 2, 3, 4, 4)), data((1, 3, 3, 3, 3))), {"mode": "bicubic"}, RuntimeError),
    ]
    for (x, g), kwargs, error in cases:
        with pytest.raises(error):
            torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), align_corners=False, **kwargs)
        with pytest.raises(error, match="grid_sample"):
            F.grid_sample(genesis.tensor(x), genesis.tensor(g), align_corners=False, **kwargs)
    for theta, size, error in [(data((1, 3, 3)), (1, 1, 4, 4), ValueError),
                               (data((1, 2, 3)), (1, 1, 4), NotImplementedError)]:
        with pytest.raises(error):
            torch.nn.functional.affine_grid(torch.tensor(theta), size, align_corners=False)
        with pytest.raises(error, match="affine_grid"):
            F.affine_grid(genesis.tensor(theta), size, align_corners=False)


def test_unset_align_corners_warns_and_means_false():
    image, points = genesis.randn(1, 1, 3, 3), genesis.rand(1, 2, 2, 2) * 2 - 1
    with pytest.warns(UserWarning, match="align_corners"):
        out = F.grid_sample(image, points)
    np.testing.assert_allclose(out.numpy(), F.grid_sample(image, points, align_corners=False).numpy())

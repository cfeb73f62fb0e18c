"""geqrf and householder_product (orgqr) against PyTorch: geqrf's compact QR (its values,
batches, wide and tall matrices, and no gradient), the product rebuilding Q, and the
refusals; householder_product's gradients are checked by the op registry."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_geqrf_and_the_product_match_pytorch(shape):
    torch = torch_or_skip()
    values = np.random.default_rng(0).standard_normal(shape)
    a, tau = genesis.geqrf(genesis.tensor(values, dtype=genesis.float64))
    t_a, t_tau = torch.geqrf(torch.tensor(values))
    np.testing.assert_allclose(a.numpy(), t_a.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tau.numpy(), t_tau.numpy(), rtol=1e-10, atol=1e-12)
    assert not a.requires_grad
    if shape[-2] >= shape[-1]:
        q = genesis.linalg.householder_product(a, tau)
        np.testing.assert_allclose(q.numpy(), torch.linalg.householder_product(t_a, t_tau).numpy(),
                                   rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(genesis.orgqr(a, tau).numpy(), q.numpy())
        np.testing.assert_allclose((q @ a.triu()[..., : shape[-1], :]).numpy(), values, atol=1e-12)


def test_householder_product_refuses_what_pytorch_refuses():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        with pytest.raises(RuntimeError, match=r"input.shape\[-2\] must be greater than or equal"):
            lib.linalg.householder_product(lib.ones(2, 3), lib.ones(2))
        with pytest.raises(RuntimeError, match=r"must be greater than or equal to tau.shape\[-1\]"):
            lib.linalg.householder_product(lib.ones(4, 3), lib.ones(4))

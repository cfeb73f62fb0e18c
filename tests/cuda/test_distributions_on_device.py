"""Every distribution family on "cuda": its samples are drawn by the device's generator and
stay there, and its log-probabilities, entropies and gradients match the same family's on
the CPU (faked with NumPy everywhere, on the real GPU where there is one: there a sampler the
device's generator lacks shows)."""
import numpy as np
import pytest

import genesis
from genesis import distributions as D

# family name -> (parameters as lists, a value in its support, has entropy)
FAMILIES = {
    "Normal": (lambda t: D.Normal(t([0.5, -1.0]), t([1.5, 0.5])), [0.2, -0.7]),
    "Uniform": (lambda t: D.Uniform(t([0.0, -1.0]), t([1.0, 2.0])), [0.3, 0.5]),
    "LogNormal": (lambda t: D.LogNormal(t([0.1, -0.2]), t([0.5, 0.8])), [1.2, 0.4]),
    "Laplace": (lambda t: D.Laplace(t([0.0, 1.0]), t([1.0, 0.5])), [0.4, 1.3]),
    "Exponential": (lambda t: D.Exponential(t([1.5, 0.5])), [0.3, 2.0]),
    "Cauchy": (lambda t: D.Cauchy(t([0.0, 1.0]), t([1.0, 2.0])), [0.5, -3.0]),
    "Gumbel": (lambda t: D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0])), [0.5, 2.0]),
    "Gamma": (lambda t: D.Gamma(t([2.0, 0.7]), t([1.5, 1.0])), [0.8, 0.2]),
    "Beta": (lambda t: D.Beta(t([2.0, 0.7]), t([1.5, 3.0])), [0.3, 0.1]),
    "Dirichlet": (lambda t: D.Dirichlet(t([[2.0, 0.7, 1.5]])), [[0.2, 0.3, 0.5]]),
    "Bernoulli": (lambda t: D.Bernoulli(probs=t([0.3, 0.8])), [1.0, 0.0]),
    "Categorical": (lambda t: D.Categorical(logits=t([[0.1, 0.5, -0.3]])), [2]),
    "OneHotCategorical": (lambda t: D.OneHotCategorical(logits=t([[0.1, 0.5, -0.3]])), [[0.0, 1.0, 0.0]]),
    "Poisson": (lambda t: D.Poisson(t([2.0, 0.5])), [3.0, 0.0]),
    "Geometric": (lambda t: D.Geometric(probs=t([0.3, 0.8])), [2.0, 0.0]),
    "Binomial": (lambda t: D.Binomial(5, probs=t([0.3, 0.8])), [2.0, 5.0]),
    "TransformedDistribution": (lambda t: D.TransformedDistribution(
        D.Normal(t([0.5, -1.0]), t([1.5, 0.5])), [D.transforms.TanhTransform(cache_size=1)]),
        [0.2, -0.7]),
}


def _parameters(device):
    made = []

    def tensor(values):
        made.append(genesis.tensor(values, dtype=genesis.float32, device=device, requires_grad=True))
        return made[-1]
    return tensor, made


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_family_samples_on_the_device_and_scores_as_on_the_cpu(cuda, family):
    build, value = FAMILIES[family]
    tensor_here, here = _parameters(cuda)
    tensor_cpu, on_cpu = _parameters("cpu")
    dist, reference = build(tensor_here), build(tensor_cpu)

    sample = dist.sample((4,))
    assert sample.device.type == "cuda"
    assert tuple(sample.shape) == (4, *dist.batch_shape, *dist.event_shape)
    assert dist.support.check(sample).all().item()
    if dist.has_rsample:
        drawn = dist.rsample((3,))
        assert drawn.device.type == "cuda"
        drawn.sum().backward()
        assert all(p.grad is not None and p.grad.device.type == "cuda" for p in here)
        for p in here:
            p.grad = None

    dtype = genesis.int64 if family == "Categorical" else genesis.float32
    scored = dist.log_prob(genesis.tensor(value, dtype=dtype, device=cuda))
    expected = reference.log_prob(genesis.tensor(value, dtype=dtype))
    assert scored.device.type == "cuda"
    np.testing.assert_allclose(scored.detach().cpu().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    scored.sum().backward()
    expected.sum().backward()
    for mine, theirs in zip(here, on_cpu):
        np.testing.assert_allclose(mine.grad.cpu().numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-6)
    if family not in ("Poisson", "Binomial", "Geometric", "TransformedDistribution", "Cauchy"):
        np.testing.assert_allclose(dist.entropy().detach().cpu().numpy(), reference.entropy().detach().numpy(),
                                   rtol=1e-5, atol=1e-6)

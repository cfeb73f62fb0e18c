"""Unmodified PyTorch programs that use torch.distributions run on genesis under
`serve_torch()` (what `genesis trace --torch` does): the submodules they import from
(transforms, constraints, kl, one module per family) are served."""
import genesis
from genesis.compat import is_served, serve_torch

SAC_ACTOR = """
import torch
import torch.nn as nn
from torch.distributions import Normal, TransformedDistribution, constraints
from torch.distributions.transforms import TanhTransform
from torch.distributions.kl import kl_divergence
from torch.distributions.beta import Beta
from torch.distributions.mixture_same_family import MixtureSameFamily
from torch.distributions.categorical import Categorical

torch.manual_seed(0)
net = nn.Linear(3, 4)
obs = torch.randn(8, 3)
mu, log_std = net(obs).chunk(2, dim=-1)
policy = TransformedDistribution(Normal(mu, log_std.clamp(-5, 2).exp()), [TanhTransform(cache_size=1)])
action = policy.rsample()
log_pi = policy.log_prob(action).sum(-1)
loss = (0.2 * log_pi - action.sum(-1)).mean()
loss = loss + kl_divergence(Beta(torch.ones(2) * 2, torch.ones(2)), Beta(torch.ones(2), torch.ones(2))).sum()
mixture = MixtureSameFamily(Categorical(logits=torch.zeros(2)), Normal(torch.zeros(2), torch.ones(2)))
loss = loss - mixture.log_prob(torch.tensor(0.5))
loss.backward()
assert constraints.positive.check(torch.tensor([1.0])).all()
result = (loss.item(), net.weight.grad.abs().sum().item())
"""


def test_a_sac_actor_script_runs_on_genesis_unmodified():
    namespace = {"__name__": "__main__"}
    with serve_torch():
        import torch.distributions.transforms as transforms
        assert is_served(transforms) and transforms.TanhTransform is genesis.distributions.transforms.TanhTransform
        exec(compile(SAC_ACTOR, "sac_actor.py", "exec"), namespace)
    loss, gradient = namespace["result"]
    assert loss == loss and gradient > 0


def test_transforms_are_served_from_torch_distributions_itself():
    """PyTorch re-exports every transform from torch.distributions (`from torch.distributions
    import AffineTransform, TanhTransform`), as genesis.distributions does."""
    import genesis.distributions as D
    from genesis.distributions import transforms
    for name in transforms.__all__:
        if name != "identity_transform":
            assert getattr(D, name) is getattr(transforms, name) and name in D.__all__
    namespace = {"__name__": "__main__"}
    with serve_torch():
        exec(compile("from torch.distributions import AffineTransform, Normal, TanhTransform, "
                     "TransformedDistribution\n"
                     "import torch\n"
                     "d = TransformedDistribution(Normal(torch.zeros(2), torch.ones(2)), "
                     "[TanhTransform(cache_size=1), AffineTransform(1.0, 2.0)])\n"
                     "result = d.log_prob(torch.tensor([0.5, 1.5])).tolist()\n",
                     "affine.py", "exec"), namespace)
    assert all(value == value for value in namespace["result"])

"""SAC on a toy 1-D task: a squashed Gaussian actor whose log-probability comes two ways
(the hand-written tanh correction, and TransformedDistribution with a cached TanhTransform),
twin Q critics with Polyak-averaged targets, a learned temperature log_alpha with its own
optimizer against a target entropy, and MixtureSameFamily as a bonus density head fitted to
the actions. Reparameterisation noise comes from NumPy so both frameworks match."""
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, MixtureSameFamily, Normal, TransformedDistribution
from torch.distributions.transforms import TanhTransform

torch.manual_seed(0)
rng = np.random.default_rng(0)
GAMMA, TAU, BATCH, LOG_STD_MIN, LOG_STD_MAX = 0.9, 0.01, 32, -5, 2


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(1, 32), nn.ReLU())
        self.mu, self.log_std = nn.Linear(32, 1), nn.Linear(32, 1)

    def forward(self, state, eps):
        h = self.trunk(state)
        mu, log_std = self.mu(h), torch.clamp(self.log_std(h), LOG_STD_MIN, LOG_STD_MAX)
        std = log_std.exp()
        x_t = mu + std * eps
        y_t = torch.tanh(x_t)
        log_prob = Normal(mu, std).log_prob(x_t) - torch.log(1 - y_t.pow(2) + 1e-6)
        squashed = TransformedDistribution(Normal(mu, std), [TanhTransform(cache_size=1)])
        return y_t, log_prob.sum(1, keepdim=True), squashed, x_t


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.q1 = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
        self.q2 = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, s, a):
        sa = torch.cat([s, a], -1)
        return self.q1(sa), self.q2(sa)


class MixtureHead(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.logits = nn.Parameter(torch.zeros(k))
        self.means = nn.Parameter(torch.linspace(-0.5, 0.5, k))
        self.log_scales = nn.Parameter(torch.full((k,), -1.0))

    def forward(self):
        return MixtureSameFamily(Categorical(logits=self.logits), Normal(self.means, self.log_scales.exp()))


actor, critic, mixture = Actor(), Critic(), MixtureHead()
log_alpha = nn.Parameter(torch.zeros(1))
models = {"actor": actor, "critic": critic, "mixture": mixture}
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{f"{name}.{k}": v.detach().numpy()
                                            for name, m in models.items() for k, v in m.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    saved = np.load(os.environ["LOAD_WEIGHTS"])
    for name, m in models.items():
        m.load_state_dict({k[len(name) + 1:]: torch.from_numpy(v) for k, v in saved.items()
                           if k.startswith(name + ".")})
critic_target = copy.deepcopy(critic)
for p in critic_target.parameters():
    p.requires_grad = False
target_entropy = -1.0
actor_opt = torch.optim.Adam(actor.parameters(), lr=3e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=3e-3)
alpha_opt = torch.optim.Adam([log_alpha], lr=3e-3)
mixture_opt = torch.optim.Adam(mixture.parameters(), lr=1e-2)

states = rng.uniform(-2, 2, size=(256, 1)).astype(np.float32)
actions = rng.uniform(-1, 1, size=(256, 1)).astype(np.float32)
next_states = np.clip(states + 0.5 * actions, -2, 2)
buffer = [torch.from_numpy(a) for a in (states, actions, -(next_states ** 2), next_states)]

for step in range(10):
    idx = torch.from_numpy(rng.integers(0, 256, size=BATCH))
    s, a, r, s2 = (t[idx] for t in buffer)
    eps_next, eps = (torch.from_numpy(rng.standard_normal((BATCH, 1)).astype(np.float32)) for _ in range(2))
    alpha = log_alpha.exp().detach()
    with torch.no_grad():
        a2, logp2, _, _ = actor(s2, eps_next)
        q1_t, q2_t = critic_target(s2, a2)
        target = r + GAMMA * (torch.min(q1_t, q2_t) - alpha * logp2)
    q1, q2 = critic(s, a)
    critic_loss = 0.5 * (F.mse_loss(q1, target) + F.mse_loss(q2, target))
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()

    new_a, logp, squashed, x_t = actor(s, eps)
    logp_again = squashed.log_prob(torch.tanh(x_t).clamp(-0.999999, 0.999999)).sum(1, keepdim=True)
    q_new = torch.min(*critic(s, new_a))
    actor_loss = (alpha * logp - q_new).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()

    alpha_loss = -(log_alpha * (logp.detach() + target_entropy)).mean()
    alpha_opt.zero_grad()
    alpha_loss.backward()
    alpha_opt.step()

    mixture_loss = -mixture().log_prob(new_a.detach().squeeze(1)).mean()
    mixture_opt.zero_grad()
    mixture_loss.backward()
    mixture_opt.step()

    with torch.no_grad():
        for p, tp in zip(critic.parameters(), critic_target.parameters()):
            tp.data.mul_(1 - TAU).add_(TAU * p.data)
    gap = (logp - logp_again).abs().max().item()
    print(f"loss {step} {critic_loss.item():.6f} {actor_loss.item():.6f} {alpha_loss.item():.6f} "
          f"{mixture_loss.item():.6f} {log_alpha.item():.6f} {gap:.4f}")

"""Soft actor-critic on a toy 1-D task (push a point to the origin): a tanh-squashed Gaussian
policy as TransformedDistribution(Normal, TanhTransform(cache_size=1)), twin Q networks with
Polyak-averaged target copies (frozen with requires_grad_(False)), the entropy temperature
learned through log_alpha with its own optimizer, and a NumPy replay buffer. The policy's
noise comes from NumPy so both frameworks see the same actions."""
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, TransformedDistribution
from torch.distributions.transforms import TanhTransform

torch.manual_seed(0)
rng = np.random.default_rng(0)
GAMMA, TAU, BATCH = 0.9, 0.05, 32


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 32), nn.ReLU())
        self.mu = nn.Linear(32, 1)
        self.log_std = nn.Linear(32, 1)

    def forward(self, state, noise):
        h = self.body(state)
        mu, log_std = self.mu(h), self.log_std(h).clamp(-5, 2)
        squash = TanhTransform(cache_size=1)
        policy = TransformedDistribution(Normal(mu, log_std.exp()), [squash])
        action = squash(mu + log_std.exp() * noise)  # rsample with the given noise
        return action, policy.log_prob(action).sum(-1, keepdim=True)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.q1 = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
        self.q2 = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, state, action):
        both = torch.cat([state, action], dim=-1)
        return self.q1(both), self.q2(both)


actor, critic = Actor(), Critic()
log_alpha = nn.Parameter(torch.zeros(1))
if os.environ.get("SAVE_WEIGHTS"):
    weights = {f"actor.{k}": v.detach().numpy() for k, v in actor.state_dict().items()}
    weights.update({f"critic.{k}": v.detach().numpy() for k, v in critic.state_dict().items()})
    np.savez(os.environ["SAVE_WEIGHTS"], **weights)
if os.environ.get("LOAD_WEIGHTS"):
    loaded = np.load(os.environ["LOAD_WEIGHTS"])
    for prefix, module in (("actor.", actor), ("critic.", critic)):
        module.load_state_dict({k[len(prefix):]: torch.from_numpy(v) for k, v in loaded.items()
                                if k.startswith(prefix)})
target = copy.deepcopy(critic).requires_grad_(False)
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)
alpha_optimizer = torch.optim.Adam([log_alpha], lr=1e-2)
target_entropy = -1.0

# the replay buffer: random transitions of the toy task
states = rng.uniform(-1, 1, size=(256, 1)).astype(np.float32)
actions = rng.uniform(-1, 1, size=(256, 1)).astype(np.float32)
next_states = np.clip(states + 0.2 * actions, -1, 1).astype(np.float32)
rewards = -(next_states ** 2).astype(np.float32)

for step in range(12):
    index = rng.integers(0, len(states), size=BATCH)
    state, action = torch.from_numpy(states[index]), torch.from_numpy(actions[index])
    reward, next_state = torch.from_numpy(rewards[index]), torch.from_numpy(next_states[index])
    noise = torch.from_numpy(rng.standard_normal((BATCH, 1)).astype(np.float32))
    next_noise = torch.from_numpy(rng.standard_normal((BATCH, 1)).astype(np.float32))
    alpha = log_alpha.exp().detach()

    with torch.no_grad():
        next_action, next_log_pi = actor(next_state, next_noise)
        target_q = torch.min(*target(next_state, next_action)) - alpha * next_log_pi
        backup = reward + GAMMA * target_q
    q1, q2 = critic(state, action)
    critic_loss = F.mse_loss(q1, backup) + F.mse_loss(q2, backup)
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()

    new_action, log_pi = actor(state, noise)
    actor_loss = (alpha * log_pi - torch.min(*critic(state, new_action))).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()

    alpha_loss = -(log_alpha * (log_pi.detach() + target_entropy)).mean()
    alpha_optimizer.zero_grad()
    alpha_loss.backward()
    alpha_optimizer.step()

    with torch.no_grad():
        for p, p_target in zip(critic.parameters(), target.parameters()):
            p_target.data.mul_(1 - TAU).add_(TAU * p.data)
    print(f"loss {step} {critic_loss.item():.6f} {actor_loss.item():.6f} {alpha_loss.item():.6f}")

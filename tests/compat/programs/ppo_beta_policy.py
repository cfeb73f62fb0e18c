"""PPO with a Beta policy for bounded actions (Chou et al.): softplus(x) + 1 concentrations
from one head, actions in [0, 1] drawn by NumPy's beta sampler (so both frameworks see the
same rollouts) and rescaled to [-1, 1], log_prob and entropy of torch.distributions.Beta,
a Gamma-distributed reward noise model fitted by maximum likelihood beside it, an
approximate KL for early stopping, and value clipping."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Beta, Gamma

torch.manual_seed(0)
rng = np.random.default_rng(0)
CLIP, TARGET_KL = 0.2, 0.05


class BetaPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 32), nn.Tanh())
        self.alpha_beta = nn.Linear(32, 4)
        self.value = nn.Linear(32, 1)

    def forward(self, state):
        h = self.body(state)
        concentrations = F.softplus(self.alpha_beta(h)) + 1.0
        alpha, beta = concentrations.chunk(2, dim=-1)
        return Beta(alpha, beta), self.value(h).squeeze(-1)


class RewardNoise(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_concentration = nn.Parameter(torch.zeros(1))
        self.log_rate = nn.Parameter(torch.zeros(1))

    def forward(self):
        return Gamma(self.log_concentration.exp(), self.log_rate.exp())


policy, noise_model = BetaPolicy(), RewardNoise()
models = {"policy": policy, "noise": noise_model}
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{f"{name}.{k}": v.detach().numpy()
                                            for name, m in models.items() for k, v in m.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    saved = np.load(os.environ["LOAD_WEIGHTS"])
    for name, m in models.items():
        m.load_state_dict({k[len(name) + 1:]: torch.from_numpy(v) for k, v in saved.items()
                           if k.startswith(name + ".")})
optimizer = torch.optim.Adam(policy.parameters(), lr=3e-3, eps=1e-5)
noise_optimizer = torch.optim.Adam(noise_model.parameters(), lr=5e-2)


def rollout(steps=32):
    states, actions, rewards = [], [], []
    state = rng.uniform(-1, 1, size=2).astype(np.float32)
    with torch.no_grad():
        for _ in range(steps):
            dist, _ = policy(torch.from_numpy(state))
            a = rng.beta(dist.concentration1.numpy().astype(np.float64), dist.concentration0.numpy().astype(np.float64))
            a = np.clip(a, 1e-4, 1 - 1e-4).astype(np.float32)
            states.append(state)
            actions.append(a)
            state = np.clip(state + 0.2 * (2 * a - 1), -2, 2).astype(np.float32)
            rewards.append(-float(np.sum(state ** 2)))
    return torch.from_numpy(np.stack(states)), torch.from_numpy(np.stack(actions)), torch.tensor(rewards)


step = 0
for iteration in range(3):
    states, actions, rewards = rollout()
    with torch.no_grad():
        old_dist, old_values = policy(states)
        old_log_probs = old_dist.log_prob(actions).sum(-1)
        returns = torch.zeros_like(rewards)
        running = 0.0
        for t in reversed(range(len(rewards))):
            running = rewards[t] + 0.9 * running
            returns[t] = running
        advantages = returns - old_values
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    for epoch in range(3):
        dist, values = policy(states)
        log_probs = dist.log_prob(actions).sum(-1)
        log_ratio = log_probs - old_log_probs
        ratio = log_ratio.exp()
        approx_kl = ((ratio - 1) - log_ratio).mean()
        surrogate = torch.min(ratio * advantages, ratio.clamp(1 - CLIP, 1 + CLIP) * advantages)
        clipped_values = old_values + (values - old_values).clamp(-CLIP, CLIP)
        value_loss = 0.5 * torch.max((values - returns) ** 2, (clipped_values - returns) ** 2).mean()
        loss = -surrogate.mean() + 0.5 * value_loss - 0.01 * dist.entropy().sum(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
        optimizer.step()
        noise_loss = -noise_model().log_prob(-rewards + 1e-3).mean()
        noise_optimizer.zero_grad()
        noise_loss.backward()
        noise_optimizer.step()
        print(f"loss {step} {loss.item():.6f} {approx_kl.item():.6f} {noise_loss.item():.6f}")
        step += 1
        if approx_kl > TARGET_KL:
            break

"""PPO on a toy continuous-control task (steer a 2-D point to the origin): a Gaussian
policy with a state-independent log-std, as Independent(Normal(mean, std), 1), a value
head, GAE advantages computed under no_grad, and several epochs of clipped-objective
minibatch updates with an entropy bonus and clip_grad_norm_. Actions come from NumPy so
both frameworks see the same rollouts."""
import os

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Independent, Normal, kl_divergence

torch.manual_seed(0)
rng = np.random.default_rng(0)
GAMMA, LAMBDA, CLIP = 0.95, 0.9, 0.2


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(2, 32), nn.Tanh())
        self.mean = nn.Linear(32, 2)
        self.log_std = nn.Parameter(torch.full((2,), -0.5))
        self.value = nn.Linear(32, 1)

    def forward(self, state):
        h = self.trunk(state)
        return Independent(Normal(self.mean(h), self.log_std.exp()), 1), self.value(h).squeeze(-1)


def rollout(model, steps=32):
    states, actions, rewards = [], [], []
    state = rng.uniform(-1, 1, size=2).astype(np.float32)
    with torch.no_grad():
        for _ in range(steps):
            policy, _ = model(torch.from_numpy(state))
            noise = rng.standard_normal(2).astype(np.float32)
            action = (policy.mean + policy.stddev * torch.from_numpy(noise)).numpy()
            states.append(state)
            actions.append(action)
            state = np.clip(state + 0.1 * action, -2, 2).astype(np.float32)
            rewards.append(-float(np.sum(state ** 2)))
    return torch.from_numpy(np.stack(states)), torch.from_numpy(np.stack(actions)), torch.tensor(rewards)


model = ActorCritic()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

step = 0
for iteration in range(3):
    states, actions, rewards = rollout(model)
    with torch.no_grad():
        old_policy, values = model(states)
        old_log_probs = old_policy.log_prob(actions)
        advantages = torch.zeros_like(rewards)
        last = 0.0
        for t in reversed(range(len(rewards))):
            next_value = values[t + 1] if t + 1 < len(rewards) else 0.0
            delta = rewards[t] + GAMMA * next_value - values[t]
            last = delta + GAMMA * LAMBDA * last
            advantages[t] = last
        returns = advantages + values
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    for epoch in range(2):
        for batch in torch.arange(32).split(16):
            policy, value = model(states[batch])
            ratio = (policy.log_prob(actions[batch]) - old_log_probs[batch]).exp()
            clipped = torch.clamp(ratio, 1 - CLIP, 1 + CLIP)
            policy_loss = -torch.min(ratio * advantages[batch], clipped * advantages[batch]).mean()
            value_loss = nn.functional.mse_loss(value, returns[batch])
            loss = policy_loss + 0.5 * value_loss - 0.01 * policy.entropy().mean()
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            print(f"loss {step} {loss.item():.6f} {value_loss.item():.6f}")
            step += 1
    with torch.no_grad():
        new_policy, _ = model(states)
        drift = kl_divergence(old_policy, new_policy).mean()
    print(f"iteration {iteration} return {rewards.sum().item():.3f} kl {drift.item():.5f}")

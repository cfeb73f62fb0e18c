"""TD3 on a toy 1-D task (push a point toward zero): an actor with a tanh-bounded
action, twin critics, target networks that are deep copies frozen with
requires_grad_(False) and Polyak-averaged with tp.data.mul_(1 - tau).add_(tau * p.data),
target-policy smoothing noise clamped, the minimum of the twin targets, and delayed
actor updates through critic 1 (whose gradients the actor step leaves behind and the
next critic step clears). Noise comes from NumPy so both frameworks see the same runs."""
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
GAMMA, TAU, POLICY_DELAY, BATCH = 0.9, 0.05, 2, 32


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(1, 32), nn.Linear(32, 1)

    def forward(self, state):
        return torch.tanh(self.l2(F.relu(self.l1(state))))


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.q1 = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
        self.q2 = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, state, action):
        sa = torch.cat([state, action], 1)
        return self.q1(sa), self.q2(sa)

    def Q1(self, state, action):
        return self.q1(torch.cat([state, action], 1))


actor, critic = Actor(), Critic()
models = {"actor": actor, "critic": critic}
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{f"{name}.{k}": v.detach().numpy()
                                            for name, m in models.items() for k, v in m.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    saved = np.load(os.environ["LOAD_WEIGHTS"])
    for name, m in models.items():
        m.load_state_dict({k[len(name) + 1:]: torch.from_numpy(v) for k, v in saved.items()
                           if k.startswith(name + ".")})
actor_target = copy.deepcopy(actor)
critic_target = copy.deepcopy(critic).requires_grad_(False)
for p in actor_target.parameters():
    p.requires_grad = False
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_optimizer = torch.optim.Adam(critic.parameters(), lr=3e-3)

# a fixed replay buffer of random transitions: s' = s + 0.5 a, r = -s'^2
states = rng.uniform(-2, 2, size=(256, 1)).astype(np.float32)
actions = rng.uniform(-1, 1, size=(256, 1)).astype(np.float32)
next_states = np.clip(states + 0.5 * actions, -2, 2)
rewards = -(next_states ** 2)
buffer = [torch.from_numpy(a) for a in (states, actions, rewards, next_states)]


def soft_update(target, source, tau):
    for tp, p in zip(target.parameters(), source.parameters()):
        tp.data.mul_(1 - tau).add_(tau * p.data)


for it in range(12):
    idx = torch.from_numpy(rng.integers(0, 256, size=BATCH))
    state, action, reward, next_state = (t[idx] for t in buffer)
    with torch.no_grad():
        noise = torch.from_numpy(rng.standard_normal((BATCH, 1)).astype(np.float32) * 0.2).clamp(-0.5, 0.5)
        next_action = (actor_target(next_state) + noise).clamp(-1.0, 1.0)
        target_q1, target_q2 = critic_target(next_state, next_action)
        target_q = reward + GAMMA * torch.min(target_q1, target_q2)
    current_q1, current_q2 = critic(state, action)
    critic_loss = F.mse_loss(current_q1, target_q) + F.mse_loss(current_q2, target_q)
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()
    actor_loss = torch.zeros(())
    if it % POLICY_DELAY == 0:
        actor_loss = -critic.Q1(state, actor(state)).mean()
        actor_optimizer.zero_grad()
        actor_loss.backward()
        actor_optimizer.step()
        soft_update(critic_target, critic, TAU)
        with torch.no_grad():
            for tp, p in zip(actor_target.parameters(), actor.parameters()):
                tp.copy_(torch.lerp(tp, p, TAU))
    print(f"loss {it} {critic_loss.item():.6f} {actor_loss.item():.6f}")

with torch.no_grad():
    probe = torch.linspace(-2, 2, 5).unsqueeze(1)
    print("policy", [round(v, 3) for v in actor(probe).squeeze(1).tolist()])

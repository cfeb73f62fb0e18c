"""DQN on a toy 1-D chain (walk left or right to reach the goal at the end): a replay
buffer of NumPy arrays, Q-values picked with gather, a smooth-L1 TD loss, a target
network refreshed with load_state_dict, epsilon-greedy actions with argmax and
clip_grad_norm_. Exploration draws come from NumPy so both frameworks see the same runs."""
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
N_STATES, GAMMA, BATCH = 6, 0.9, 16


def one_hot(state):
    vector = np.zeros(N_STATES, dtype=np.float32)
    vector[state] = 1.0
    return vector


class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(N_STATES, 32), nn.ReLU(), nn.Linear(32, 2))

    def forward(self, x):
        return self.net(x)


class ReplayBuffer:
    def __init__(self, capacity):
        self.states = np.zeros((capacity, N_STATES), dtype=np.float32)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.next_states = np.zeros((capacity, N_STATES), dtype=np.float32)
        self.dones = np.zeros(capacity, dtype=np.float32)
        self.capacity, self.size, self.position = capacity, 0, 0

    def push(self, state, action, reward, next_state, done):
        i = self.position
        self.states[i], self.actions[i], self.rewards[i] = state, action, reward
        self.next_states[i], self.dones[i] = next_state, done
        self.position = (self.position + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size):
        idx = rng.integers(0, self.size, size=batch_size)
        return (torch.from_numpy(self.states[idx]), torch.from_numpy(self.actions[idx]),
                torch.from_numpy(self.rewards[idx]), torch.from_numpy(self.next_states[idx]),
                torch.from_numpy(self.dones[idx]))


policy_net = QNetwork()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in policy_net.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    policy_net.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
target_net = copy.deepcopy(policy_net)
target_net.eval()
optimizer = torch.optim.RMSprop(policy_net.parameters(), lr=5e-3, alpha=0.95, eps=1e-5)
huber = nn.SmoothL1Loss(beta=0.5)
buffer = ReplayBuffer(200)

step, state, epsilon = 0, 0, 1.0
for t in range(120):
    if rng.random() < epsilon:
        action = int(rng.integers(0, 2))
    else:
        with torch.no_grad():
            q_values = policy_net(torch.as_tensor(one_hot(state), dtype=torch.float32)[None])
            action = int(torch.argmax(q_values))
    next_state = max(0, min(N_STATES - 1, state + (1 if action == 1 else -1)))
    done = next_state == N_STATES - 1
    reward = 1.0 if done else -0.05
    buffer.push(one_hot(state), action, reward, one_hot(next_state), float(done))
    state = 0 if done else next_state
    epsilon = max(0.1, epsilon * 0.97)

    if buffer.size >= BATCH and t % 4 == 0:
        states, actions, rewards, next_states, dones = buffer.sample(BATCH)
        q = policy_net(states).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            if step % 2:  # double DQN: the online net picks, the target net rates
                best = policy_net(next_states).argmax(dim=1, keepdim=True)
                next_q = target_net(next_states).gather(1, best).squeeze(1)
            else:
                next_q = target_net(next_states).max(1)[0]
            target = rewards + GAMMA * next_q * (1 - dones)
        loss = F.smooth_l1_loss(q, target) if step % 3 else huber(q, target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(policy_net.parameters(), 10.0)
        nn.utils.clip_grad_value_(policy_net.parameters(), 1.0)
        optimizer.step()
        print(f"loss {step} {loss.item():.6f} {float(grad_norm):.6f}")
        step += 1
        if step % 5 == 0:
            target_net.load_state_dict({k: v.clone() for k, v in policy_net.state_dict().items()})

with torch.no_grad():
    greedy = policy_net(torch.eye(N_STATES)).argmax(dim=1)
print("greedy", greedy.tolist())

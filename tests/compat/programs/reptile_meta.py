"""Reptile meta-learning: for each task a deepcopy of the meta-model trains a few SGD steps,
then the meta-parameters' .grad is set by hand to (meta - adapted) averaged over tasks and
an outer Adam steps; no backward ever runs through the meta-model itself."""
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
meta = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in meta.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    meta.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
meta_optimizer = torch.optim.Adam(meta.parameters(), lr=0.05)

for step in range(8):
    meta_optimizer.zero_grad()
    for p in meta.parameters():
        p.grad = torch.zeros_like(p)
    losses = []
    for task in range(3):
        amplitude, phase = rng.uniform(0.5, 2), rng.uniform(0, np.pi)
        x = torch.from_numpy(rng.uniform(-3, 3, (16, 1)).astype(np.float32))
        y = amplitude * torch.sin(x + phase)
        learner = copy.deepcopy(meta)
        inner = torch.optim.SGD(learner.parameters(), lr=0.02)
        for _ in range(3):
            loss = F.mse_loss(learner(x), y)
            inner.zero_grad()
            loss.backward()
            inner.step()
        losses.append(loss.item())
        with torch.no_grad():
            for p, q in zip(meta.parameters(), learner.parameters()):
                p.grad += (p - q) / 3
    meta_optimizer.step()
    print(f"loss {step} {np.mean(losses):.6f}")

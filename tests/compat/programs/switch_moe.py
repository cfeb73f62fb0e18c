"""A mixture-of-experts layer with top-1 (Switch) routing: a router softmax, argmax expert
choice, tokens gathered per expert with a boolean mask and index_add_ back, experts called
only when a token is routed to them (so an expert can miss a step), the auxiliary
load-balancing loss, and a frozen embedding whose parameters still sit in the optimizer
(requires_grad=False, as fine-tuning scripts often leave them)."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
EXPERTS, DIM = 4, 16


class SwitchLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(DIM, EXPERTS)
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(DIM, 32), nn.GELU(), nn.Linear(32, DIM))
                                      for _ in range(EXPERTS)])

    def forward(self, x):
        probs = F.softmax(self.router(x), dim=-1)
        gate, choice = probs.max(dim=-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            mask = choice == e
            if mask.any():
                idx = mask.nonzero(as_tuple=True)[0]
                out = out.index_add(0, idx, expert(x[idx]) * gate[idx, None])
        fraction = F.one_hot(choice, EXPERTS).float().mean(0)
        balance = EXPERTS * (fraction * probs.mean(0)).sum()
        return x + out, balance


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, DIM)
        self.moe = SwitchLayer()
        self.head = nn.Linear(DIM, 2)

    def forward(self, tokens):
        h, balance = self.moe(self.embed(tokens).mean(1))
        return self.head(h), balance


model = Model()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
model.embed.weight.requires_grad = False
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for step in range(10):
    tokens = torch.from_numpy(rng.integers(0, 20, size=(32, 5)))
    labels = (tokens.float().mean(1) > 9.5).long()
    logits, balance = model(tokens)
    loss = F.cross_entropy(logits, labels) + 0.01 * balance
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {step} {loss.item():.6f} {balance.item():.6f}")

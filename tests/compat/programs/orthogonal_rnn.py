"""A copy-memory task for an RNN whose recurrent weight is kept orthogonal with
torch.nn.utils.parametrizations.orthogonal (matrix exponential map, trivialized), an
output projection kept orthogonal by the Householder map (non-square, the default; not
trivialized, so no random completion of its basis), a parametrize.cached() forward so the
parametrizations run once per step, and RMSprop."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import orthogonal

torch.manual_seed(0)
rng = np.random.default_rng(0)
SYMBOLS, DELAY, HIDDEN = 4, 6, 16


class OrthoRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(SYMBOLS + 1, HIDDEN)
        self.rec = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.proj = nn.Linear(HIDDEN, 8, bias=False)
        self.out = nn.Linear(8, SYMBOLS + 1)

    def forward(self, x):
        h = torch.zeros(x.size(0), HIDDEN)
        outputs = []
        for t in range(x.size(1)):
            h = torch.tanh(self.inp(x[:, t]) + self.rec(h))
            outputs.append(self.out(self.proj(h)))
        return torch.stack(outputs, 1)


model = OrthoRNN()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
orthogonal(model.rec)
orthogonal(model.proj, use_trivialization=False)  # no random completion of the basis
optimizer = torch.optim.RMSprop(model.parameters(), lr=3e-3)

for step in range(8):
    symbols = rng.integers(0, SYMBOLS, size=(16, 2))
    length = 2 + DELAY + 2
    x = np.zeros((16, length, SYMBOLS + 1), dtype=np.float32)
    x[np.arange(16)[:, None], np.arange(2)[None], symbols] = 1
    x[:, 2:, SYMBOLS] = 1  # blank
    target = np.full((16, length), SYMBOLS)
    target[:, -2:] = symbols
    with parametrize.cached():
        logits = model(torch.from_numpy(x))
    loss = F.cross_entropy(logits.reshape(-1, SYMBOLS + 1), torch.from_numpy(target).reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        w = model.rec.weight
        drift = (w @ w.T - torch.eye(HIDDEN)).abs().max().item()
    print(f"loss {step} {loss.item():.6f} {int(drift < 1e-4)}")

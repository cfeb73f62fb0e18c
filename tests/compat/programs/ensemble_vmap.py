"""Model ensembling as in PyTorch's torch.func tutorial: five MLPs' parameters stacked with
torch.func.stack_module_state, one forward for all of them with vmap over
functional_call (on a base copy), the stacked tensors trained directly by Adam as
leaves, disagreement between members as an uncertainty, and per-member losses with
vmap(in_dims=(0, 0, None))."""
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

torch.manual_seed(0)
rng = np.random.default_rng(0)
MEMBERS = 5


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(3, 16), nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


members = nn.ModuleList([MLP() for _ in range(MEMBERS)])
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in members.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    members.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
params, buffers = stack_module_state(list(members))
base = copy.deepcopy(members[0])


def call_one(params, buffers, x):
    return functional_call(base, (params, buffers), (x,))


optimizer = torch.optim.Adam(params.values(), lr=1e-2)
x_all = rng.standard_normal((128, 3)).astype(np.float32)
y_all = (x_all[:, 0] * x_all[:, 1] > 0).astype(np.int64)
for step in range(8):
    idx = rng.integers(0, 128, size=(MEMBERS, 16))  # each member its own bootstrap batch
    x = torch.from_numpy(x_all[idx])
    y = torch.from_numpy(y_all[idx])
    logits = vmap(call_one)(params, buffers, x)                  # (members, 16, 2)
    losses = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none").view(MEMBERS, -1).mean(1)
    loss = losses.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        probe = torch.from_numpy(x_all[:32])
        probs = vmap(call_one, in_dims=(0, 0, None))(params, buffers, probe).softmax(-1)
        disagreement = probs.var(0).sum(-1).mean()
    print(f"loss {step} {loss.item():.6f} {' '.join(f'{l:.5f}' for l in losses.tolist())} {disagreement.item():.6f}")

"""A tabular classifier: TensorDataset + DataLoader, an nn.Sequential MLP, Adam and a StepLR
schedule, with an evaluation pass under no_grad."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(0)
features = rng.standard_normal((96, 8)).astype(np.float32)
labels = (features[:, 0] + features[:, 1] > 0).astype(np.int64) + (features[:, 2] > 1)
train = TensorDataset(torch.from_numpy(features[:64]), torch.from_numpy(labels[:64]))
valid = TensorDataset(torch.from_numpy(features[64:]), torch.from_numpy(labels[64:]))
train_loader = DataLoader(train, batch_size=16, shuffle=False)
valid_loader = DataLoader(valid, batch_size=32)

model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

step = 0
for epoch in range(3):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"loss {step} {loss.item():.6f}")
        step += 1
    scheduler.step()
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in valid_loader:
            correct += (model(x).argmax(dim=1) == y).sum().item()
    print(f"epoch {epoch} valid accuracy {correct / len(valid):.3f}")

"""Regression with missing values, as tabular and sensor models handle them: NaN features
imputed with torch.nan_to_num plus an is-missing indicator, multi-task targets with NaN for
unobserved entries, the loss over the observed ones three ways (boolean indexing, a masked
difference whose NaNs are zeroed in place, and torch.nanmean of squared errors on a
detached copy for logging), and torch.where for a log-target that is only defined where
positive (with the safe double-where)."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)

x_np = rng.standard_normal((128, 6)).astype(np.float32)
y_np = np.stack([x_np[:, 0] + x_np[:, 1], np.exp(0.5 * x_np[:, 2]), x_np[:, 3] * x_np[:, 4]], 1).astype(np.float32)
x_np[rng.uniform(size=x_np.shape) < 0.15] = np.nan
y_np[rng.uniform(size=y_np.shape) < 0.25] = np.nan
y_np[rng.uniform(size=128) < 0.1, 1] = 0.0  # a zero target: its log is -inf, masked out

model = nn.Sequential(nn.Linear(12, 32), nn.SiLU(), nn.Linear(32, 3))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

for step in range(10):
    idx = rng.integers(0, 128, size=32)
    x, y = torch.from_numpy(x_np[idx]), torch.from_numpy(y_np[idx])
    missing = torch.isnan(x)
    inputs = torch.cat([torch.nan_to_num(x, nan=0.0), missing.float()], dim=1)
    pred = model(inputs)
    observed = ~torch.isnan(y)
    loss_a = F.mse_loss(pred[:, 0][observed[:, 0]], y[:, 0][observed[:, 0]])
    diff = pred[:, 2] - y[:, 2]
    diff = diff.clone()
    diff[torch.isnan(diff)] = 0.0
    loss_c = diff.pow(2).sum() / observed[:, 2].sum().clamp(min=1)
    positive = observed[:, 1] & (y[:, 1] > 0)
    safe_y = torch.where(positive, y[:, 1], torch.ones_like(y[:, 1]))
    log_target = torch.where(positive, torch.log(safe_y), torch.zeros_like(safe_y))
    loss_b = (torch.where(positive, (pred[:, 1] - log_target) ** 2, torch.zeros_like(log_target)).sum()
              / positive.sum().clamp(min=1))
    loss = loss_a + loss_b + loss_c
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        logged = torch.nanmean((pred.detach() - y) ** 2, dim=0)
    print(f"loss {step} {loss.item():.6f} {' '.join(f'{v:.5f}' for v in logged.tolist())}")

"""The boilerplate of a modern training script around a small regression MLP: a device
chosen with torch.cuda.is_available(), cudnn.benchmark and matmul-precision settings,
torch.compile, autocast and GradScaler (both disabled off CUDA, as scripts do),
DataLoader with pin_memory, .to(device, non_blocking=True), gradient accumulation over
micro-batches, model.zero_grad(set_to_none=True), early stopping that keeps the best
state_dict in a BytesIO via torch.save/torch.load(weights_only=True), and
parameters_to_vector for a weight-norm log."""
import io
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(0)
torch.backends.cudnn.benchmark = True
torch.set_float32_matmul_precision("high")
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
use_amp = device.type == "cuda"
ACCUM = 2

x = rng.standard_normal((96, 6)).astype(np.float32)
y = (np.sin(x[:, :1]) + 0.5 * x[:, 1:2] ** 2).astype(np.float32)
train = TensorDataset(torch.from_numpy(x[:64]), torch.from_numpy(y[:64]))
valid = TensorDataset(torch.from_numpy(x[64:]), torch.from_numpy(y[64:]))
train_loader = DataLoader(train, batch_size=8, shuffle=False, pin_memory=True, num_workers=0, drop_last=True)
valid_loader = DataLoader(valid, batch_size=16, pin_memory=True)

model = nn.Sequential(nn.Linear(6, 32), nn.Mish(), nn.Linear(32, 32), nn.Hardswish(), nn.Linear(32, 1))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
model = model.to(device)
compiled = torch.compile(model)
optimizer = torch.optim.NAdam(model.parameters(), lr=5e-3)
scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
criterion = nn.HuberLoss(delta=0.5)

best_loss, best_state, patience, bad_epochs, step = float("inf"), None, 2, 0, 0
for epoch in range(4):
    compiled.train()
    model.zero_grad(set_to_none=True)
    for i, (inputs, targets) in enumerate(train_loader):
        inputs, targets = inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True)
        with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
            loss = criterion(compiled(inputs), targets) / ACCUM
        scaler.scale(loss).backward()
        if (i + 1) % ACCUM == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            print(f"loss {step} {loss.item() * ACCUM:.6f}")
            step += 1
    compiled.eval()
    total = 0.0
    with torch.no_grad():
        for inputs, targets in valid_loader:
            total += criterion(compiled(inputs.to(device)), targets.to(device)).item() * len(inputs)
    valid_loss = total / len(valid)
    weight_norm = torch.nn.utils.parameters_to_vector(model.parameters()).norm().item()
    print(f"epoch {epoch} valid {valid_loss:.6f} norm {weight_norm:.4f}")
    if valid_loss < best_loss:
        best_loss, bad_epochs = valid_loss, 0
        buffer = io.BytesIO()
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, buffer)
        best_state = buffer.getvalue()
    else:
        bad_epochs += 1
        if bad_epochs >= patience:
            break

checkpoint = torch.load(io.BytesIO(best_state), map_location=device, weights_only=True)
model.load_state_dict(checkpoint["model"])
optimizer.load_state_dict(checkpoint["optimizer"])
print("best epoch", checkpoint["epoch"], round(best_loss, 6))

"""Clean: autocast (bfloat16 on the CPU) with a GradScaler: the scaled loss is
backpropagated, unscale_ and clip_grad_norm_ rewrite the gradients in place before
scaler.step(), which applies them. Must give no findings."""
import genesis as torch
import genesis.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.Linear(64, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu")
criterion = nn.CrossEntropyLoss()
x_all = torch.randn(256, 20)
y_all = (x_all[:, 0] > 0).long() + 2 * (x_all[:, 1] > 0).long()
for epoch in range(3):
    for i in range(0, 256, 32):
        x, y = x_all[i:i + 32], y_all[i:i + 32]
        optimizer.zero_grad()
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            out = model(x)
            loss = criterion(out, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
print(loss.item())

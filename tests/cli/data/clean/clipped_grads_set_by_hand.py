"""Clean: gradients computed with autograd.grad and assigned to .grad by hand (per-example
clipping as in DP-SGD, averaged), then optimizer.step(); no loss.backward(). Must give no
findings."""
import genesis as torch
import genesis.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
params = list(model.parameters())
opt = torch.optim.SGD(params, lr=0.05)
x = torch.randn(64, 6)
y = x[:, :1]
for step in range(20):
    opt.zero_grad()
    summed = [torch.zeros_like(p) for p in params]
    for i in range(0, 64, 16):
        loss = nn.functional.mse_loss(model(x[i:i + 16]), y[i:i + 16])
        grads = torch.autograd.grad(loss, params)
        norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
        factor = min(1.0, 1.0 / (norm.item() + 1e-6))
        for s, g in zip(summed, grads):
            s.add_(g * factor)
    for p, s in zip(params, summed):
        p.grad = s / 4
    opt.step()
print(loss.item())

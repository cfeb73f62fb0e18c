"""Adversarial training with PGD (Madry et al.) and an FGSM evaluation: the input perturbation
delta as a leaf with requires_grad, its gradient's sign steps under torch.no_grad with
clamp_ to the epsilon ball and the data range, delta.grad.zero_() between steps, the model
in eval() while attacking (its parameters collecting gradients that the next zero_grad
clears), TRADES-style KL between clean and adversarial predictions, and input gradients by
torch.autograd.grad for FGSM."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
EPS, ALPHA, PGD_STEPS = 0.1, 0.03, 3

model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(8 * 4 * 4, 32), nn.ReLU(), nn.Linear(32, 2))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)


def batch(n=16):
    y = rng.integers(0, 2, size=n)
    x = rng.uniform(0, 0.3, size=(n, 1, 8, 8))
    x[y == 1, :, 2:6, 2:6] += 0.5
    return torch.from_numpy(np.clip(x, 0, 1).astype(np.float32)), torch.from_numpy(y)


def pgd(model, x, y):
    delta = torch.from_numpy(rng.uniform(-EPS, EPS, size=x.shape).astype(np.float32))
    delta.requires_grad_(True)
    for _ in range(PGD_STEPS):
        loss = F.cross_entropy(model(x + delta), y)
        loss.backward()
        with torch.no_grad():
            delta += ALPHA * delta.grad.sign()
            delta.clamp_(-EPS, EPS)
            delta.copy_((x + delta).clamp(0, 1) - x)
        delta.grad.zero_()
    return delta.detach()


for step in range(8):
    x, y = batch()
    model.eval()
    delta = pgd(model, x, y)
    model.train()
    clean_logits = model(x)
    adv_logits = model(x + delta)
    robust = F.kl_div(F.log_softmax(adv_logits, dim=1), F.softmax(clean_logits, dim=1), reduction="batchmean")
    loss = F.cross_entropy(clean_logits, y) + 2.0 * robust
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {step} {loss.item():.6f} {robust.item():.6f}")

model.eval()
x, y = batch(32)
x.requires_grad_(True)
grad_x, = torch.autograd.grad(F.cross_entropy(model(x), y), x)
x_adv = (x + EPS * grad_x.sign()).clamp(0, 1).detach()
with torch.no_grad():
    clean = (model(x).argmax(1) == y).float().mean().item()
    adversarial = (model(x_adv).argmax(1) == y).float().mean().item()
print("accuracy clean", clean, "fgsm", adversarial)

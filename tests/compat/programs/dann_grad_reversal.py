"""Domain-adversarial training (DANN, Ganin & Lempitsky): a gradient reversal written as a
tensor hook (a clone whose gradient a register_hook lambda negates and scales), a feature
extractor shared by a label
classifier (source labels only) and a domain classifier, the reversal strength ramped with
the schedule 2/(1+exp(-10p)) - 1, and a Grad-CAM-style inspection afterwards with
register_forward_hook and Tensor.register_hook."""
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)


def grad_reverse(x, lambda_=1.0):
    reversed_ = x.clone()
    if reversed_.requires_grad:
        reversed_.register_hook(lambda grad: grad.neg() * lambda_)
    return reversed_


class DANN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
        self.classifier = nn.Linear(16, 2)
        self.domain = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x, lambda_):
        f = self.features(x)
        return self.classifier(f), self.domain(grad_reverse(f, lambda_)).squeeze(1)


def domain_batch(shift, n=32):
    y = rng.integers(0, 2, size=n)
    x = rng.standard_normal((n, 2)).astype(np.float32) * 0.5 + np.where(y[:, None] == 1, 1.0, -1.0)
    return torch.from_numpy((x + shift).astype(np.float32)), torch.from_numpy(y)


model = DANN()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
STEPS = 10
for step in range(STEPS):
    p = step / STEPS
    lambda_ = 2.0 / (1.0 + math.exp(-10 * p)) - 1
    xs, ys = domain_batch(0.0)
    xt, _ = domain_batch(np.array([1.5, -0.5], dtype=np.float32))
    class_logits, domain_source = model(xs, lambda_)
    _, domain_target = model(xt, lambda_)
    class_loss = F.cross_entropy(class_logits, ys)
    domain_loss = F.binary_cross_entropy_with_logits(
        torch.cat([domain_source, domain_target]), torch.cat([torch.zeros(32), torch.ones(32)]))
    loss = class_loss + domain_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {step} {loss.item():.6f} {class_loss.item():.6f} {domain_loss.item():.6f}")

activations, gradients = {}, {}


def keep(module, inputs, output):
    activations["features"] = output
    output.register_hook(lambda grad: gradients.__setitem__("features", grad))


handle = model.features.register_forward_hook(keep)
model.eval()
xs, ys = domain_batch(0.0, n=4)
logits, _ = model(xs, 0.0)
logits.gather(1, ys[:, None]).sum().backward()
handle.remove()
weights = gradients["features"].mean(0)
saliency = F.relu((activations["features"] * weights).sum(1))
print("saliency", [round(v, 4) for v in saliency.tolist()])

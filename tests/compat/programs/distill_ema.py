"""Knowledge distillation on toy 2-d classes: a pretrained teacher (a few steps of its own
training first) put in eval() and run under torch.no_grad(), a smaller student trained on
kl_div(log_softmax(s/T), softmax(t/T), reduction="batchmean") * T*T plus cross_entropy,
and an EMA copy of the student (copy.deepcopy, requires_grad_(False)) updated under
torch.no_grad() with p.mul_(decay).add_(q, alpha=1 - decay), buffers copied too."""
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(0)
T, ALPHA, DECAY = 3.0, 0.7, 0.9

angles = rng.uniform(0, 2 * np.pi, size=256)
labels = (angles // (np.pi / 2)).astype(np.int64)
points = np.stack([np.cos(angles), np.sin(angles)], 1) * rng.uniform(0.5, 1.5, size=(256, 1))
dataset = TensorDataset(torch.from_numpy(points.astype(np.float32)), torch.from_numpy(labels))
loader = DataLoader(dataset, batch_size=64)

teacher = nn.Sequential(nn.Linear(2, 64, bias=False), nn.BatchNorm1d(64), nn.ReLU(),
                        nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
student = nn.Sequential(nn.Linear(2, 16, bias=False), nn.BatchNorm1d(16), nn.SiLU(), nn.Linear(16, 4))
models = {"teacher": teacher, "student": student}
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{f"{name}.{k}": v.detach().numpy()
                                            for name, m in models.items() for k, v in m.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    saved = np.load(os.environ["LOAD_WEIGHTS"])
    for name, m in models.items():
        m.load_state_dict({k[len(name) + 1:]: torch.from_numpy(v) for k, v in saved.items()
                           if k.startswith(name + ".")})

step = 0
teacher_optimizer = torch.optim.Adam(teacher.parameters(), lr=1e-2)
teacher.train()
for x, y in loader:
    loss = F.cross_entropy(teacher(x), y)
    teacher_optimizer.zero_grad()
    loss.backward()
    teacher_optimizer.step()
    print(f"loss {step} {loss.item():.6f}")
    step += 1

teacher.eval()
for p in teacher.parameters():
    p.requires_grad_(False)
ema = copy.deepcopy(student).requires_grad_(False)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
kl = nn.KLDivLoss(reduction="batchmean")


@torch.no_grad()
def update_ema(ema_model, model, decay):
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.mul_(decay).add_(p.detach(), alpha=1 - decay)
    for ema_b, b in zip(ema_model.buffers(), model.buffers()):
        ema_b.copy_(b)


for epoch in range(2):
    student.train()
    for x, y in loader:
        with torch.no_grad():
            teacher_logits = teacher(x)
        logits = student(x)
        soft = F.kl_div(F.log_softmax(logits / T, dim=1), F.softmax(teacher_logits / T, dim=1),
                        reduction="batchmean") * T * T
        soft_again = kl(F.log_softmax(logits / T, -1), F.log_softmax(teacher_logits / T, -1).exp())
        hard = F.cross_entropy(logits, y)
        loss = ALPHA * soft + (1 - ALPHA) * hard
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        update_ema(ema, student, DECAY)
        print(f"loss {step} {loss.item():.6f} {soft.item():.6f} {soft_again.item() * T * T:.6f}")
        step += 1

ema.eval()
student.eval()
with torch.no_grad():
    x, y = dataset.tensors
    for name, m in [("teacher", teacher), ("student", student), ("ema", ema)]:
        print(name, (m(x).argmax(1) == y).float().mean().item())

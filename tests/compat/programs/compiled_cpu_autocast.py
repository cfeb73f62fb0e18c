"""model.compile() (the in-place spelling of torch.compile) on a classifier, the older
torch.cpu.amp.autocast spelling of bf16 autocast on CPU around the forward, the loss taken
in float32, gradient clipping by norm with the returned total norm logged, and an
evaluation under torch.inference_mode."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(21)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 5)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


model = Net()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
model.compile(backend="eager")


def accuracy(inputs, targets):
    return (model(inputs).argmax(1) == targets).float().mean()


x = rng.standard_normal((128, 16)).astype(np.float32)
y = np.argmax(x[:, :5] - x[:, 5:10], 1)
loader = DataLoader(TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=32, shuffle=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
step = 0
for epoch in range(3):
    model.train()
    for inputs, targets in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.cpu.amp.autocast(dtype=torch.bfloat16):
            logits = model(inputs)
        loss = F.cross_entropy(logits.float(), targets)
        loss.backward()
        total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=2.0)
        optimizer.step()
        print(f"loss {step} {loss.item():.4f}")
        step += 1
    model.eval()
    with torch.inference_mode():
        print("epoch", epoch, "accuracy", accuracy(torch.from_numpy(x), torch.from_numpy(y)).item(),
              "norm", round(total_norm.item(), 3))

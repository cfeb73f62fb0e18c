"""Buggy: knowledge distillation whose kl_div is given the student's softmax probabilities
as its input (kl_div reads its input as log-probabilities; only the target is
probabilities). The teacher is trained first, then frozen in eval mode."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

genesis.manual_seed(0)
TEMPERATURE = 4.0


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.body(x))


teacher = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 3))
student = Student()
inputs = genesis.randn(96, 6)
labels = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0.5).long()
loader = DataLoader(TensorDataset(inputs, labels), batch_size=32, shuffle=True)
teacher.eval()
optimizer = genesis.optim.Adam(student.parameters(), lr=3e-3)
for epoch in range(2):
    for x, y in loader:
        with genesis.no_grad():
            soft_targets = F.softmax(teacher(x) / TEMPERATURE, dim=-1)
        logits = student(x)
        distill = F.kl_div(F.softmax(logits / TEMPERATURE, dim=-1), soft_targets,  # BUG
                           reduction="batchmean") * TEMPERATURE ** 2
        loss = 0.5 * distill + 0.5 * F.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")

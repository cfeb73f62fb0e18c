"""Clean: knowledge distillation. The teacher is trained first (train mode, its own
optimizer), then put in eval mode for good and distilled into a student: its forward runs
with grad enabled and its soft targets are detached, only the student's parameters are
stepped. The student trains in train mode throughout."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(256, 12)
y = (x[:, :3].sum(dim=1) > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)


def make_net(width):
    return nn.Sequential(nn.Linear(12, width), nn.BatchNorm1d(width), nn.ReLU(),
                         nn.Dropout(0.2), nn.Linear(width, 2))


teacher = make_net(64)
teacher_optimizer = torch.optim.Adam(teacher.parameters(), lr=1e-2)
teacher.train()
for epoch in range(2):
    for inputs, targets in loader:
        teacher_optimizer.zero_grad()
        F.cross_entropy(teacher(inputs), targets).backward()
        teacher_optimizer.step()

teacher.eval()
student = make_net(16)
optimizer = torch.optim.Adam(student.parameters(), lr=1e-2)
temperature = 2.0
for epoch in range(2):
    student.train()
    for inputs, targets in loader:
        soft_targets = F.softmax(teacher(inputs).detach() / temperature, dim=1)
        logits = student(inputs)
        distill = F.kl_div(F.log_softmax(logits / temperature, dim=1), soft_targets,
                           reduction="batchmean") * temperature ** 2
        loss = distill + F.cross_entropy(logits, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

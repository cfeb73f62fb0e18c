"""Clean: a frozen teacher hidden from the student's parameters in a plain list (a common
trick to keep it out of state_dict and the optimizer), run under no_grad: the student's
parameters all learn, and the teacher's, which get no gradient by design, are no finding."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F

torch.manual_seed(0)


class Student(nn.Module):
    def __init__(self, teacher):
        super().__init__()
        self.teachers = [teacher]
        self.net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))

    def forward(self, x):
        with torch.no_grad():
            target = self.teachers[0](x).softmax(-1)
        return F.kl_div(self.net(x).log_softmax(-1), target, reduction="batchmean")


model = Student(nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 3)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    optimizer.zero_grad()
    loss = model(torch.randn(16, 6))
    loss.backward()
    optimizer.step()

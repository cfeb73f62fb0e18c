"""Clean: adversarial training (FGSM). Inside each step the model is put in eval mode to
craft the adversarial batch (a backward call through the model, whose parameter gradients
zero_grad() then clears), and back in train mode before the training loss."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(192, 10)
y = (x[:, 0] + x[:, 3] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(),
                                  nn.Dropout(0.2))
        self.out = nn.Linear(32, 2)

    def forward(self, x):
        return self.out(self.body(x))


def fgsm(model, inputs, targets, epsilon=0.1):
    model.eval()
    inputs = inputs.clone().requires_grad_(True)
    F.cross_entropy(model(inputs), targets).backward()
    model.train()
    return (inputs + epsilon * inputs.grad.sign()).detach()


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
model.train()
for epoch in range(2):
    for inputs, targets in loader:
        adversarial = fgsm(model, inputs, targets)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(adversarial), targets)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

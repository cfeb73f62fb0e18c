"""Clean: BatchNorm frozen on purpose, as when fine-tuning a pretrained backbone with small
batches: model.train() each epoch (the Dropout trains), then freeze_bn() sets every
BatchNorm layer itself to eval mode, from the first step on: the BatchNorm layers never run
in train mode in a training step. A separate head BatchNorm is set to eval once with
bn.eval() before training."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(192, 3, 8, 8)
y = (x.mean(dim=(1, 2, 3)) > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.head_norm = nn.BatchNorm1d(8)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        features = self.backbone(x).mean(dim=(2, 3))
        return self.fc(self.drop(self.head_norm(features)))


def freeze_bn(model):
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eval()


model = Net()
model.head_norm.eval()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(3):
    model.train()
    freeze_bn(model)
    model.head_norm.eval()
    for inputs, targets in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(inputs), targets).backward()
        optimizer.step()
    print(f"epoch {epoch} done")

"""Clean: fine-tuning with a frozen backbone. The backbone's parameters have
requires_grad=False yet are passed to the optimizer (model.parameters(), as many people
write it: optimizers skip parameters without a gradient), and a second optimizer holds
only the head of another model. Must give no findings."""
import genesis
import genesis.nn as nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(10, 24), nn.ReLU(), nn.Linear(24, 24), nn.ReLU())

    def forward(self, x):
        return self.layers(x)


class Finetuned(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Linear(24, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


genesis.manual_seed(0)
model, other = Finetuned(), Finetuned()
for frozen in (model.backbone, other.backbone):
    for param in frozen.parameters():
        param.requires_grad = False
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
head_optimizer = genesis.optim.Adam(other.head.parameters(), lr=1e-3)
x = genesis.randn(64, 10)
y = genesis.randint(0, 3, (64,))
for step in range(30):
    for net, opt in ((model, optimizer), (other, head_optimizer)):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
print("loss", loss.item())

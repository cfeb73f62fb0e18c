"""Clean: fine-tuning that unfreezes the backbone at epoch 3 and adds it to the optimizer
then with add_param_group. Must give no findings."""
import genesis as torch
import genesis.nn as nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
head = nn.Linear(32, 2)
for p in backbone.parameters():
    p.requires_grad_(False)
opt = torch.optim.Adam(head.parameters(), lr=1e-3)
x = torch.randn(96, 10)
y = (x[:, 0] > 0).long()
for epoch in range(6):
    if epoch == 3:
        for p in backbone.parameters():
            p.requires_grad_(True)
        opt.add_param_group({"params": backbone.parameters(), "lr": 1e-4})
    for i in range(0, 96, 32):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(head(backbone(x[i:i + 32])), y[i:i + 32])
        loss.backward()
        opt.step()
print(loss.item())

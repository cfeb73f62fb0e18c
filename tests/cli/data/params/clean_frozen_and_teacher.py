"""Clean: fine-tuning with a frozen backbone (requires_grad False) and a teacher that runs
under no_grad and is not trained (its parameters still require grad, as is common)."""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
for param in backbone.parameters():
    param.requires_grad = False
head = nn.Linear(16, 4)
teacher = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
optimizer = genesis.optim.Adam(head.parameters(), lr=1e-2)
x = genesis.randn(64, 8)
for step in range(20):
    with genesis.no_grad():
        target = teacher(x).softmax(dim=-1)
    logits = head(backbone(x))
    loss = -(target * logits.log_softmax(dim=-1)).sum(dim=-1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")

"""Clean: gradients cleared in place instead of set to None: optimizer.zero_grad(
set_to_none=False), model.zero_grad(set_to_none=False), and p.grad.zero_() by hand on a
second model trained by a hand-written SGD loop (no optimizer at all). Must give no
findings."""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.Sigmoid(), nn.Linear(8, 1))
optimizer = genesis.optim.RMSprop(model.parameters(), lr=1e-3)
manual = nn.Linear(5, 1)
x = genesis.randn(40, 5)
y = x[:, :1] * 2 - x[:, 1:2]
for step in range(25):
    if step % 2:
        optimizer.zero_grad(set_to_none=False)
    else:
        model.zero_grad(set_to_none=False)
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()

    manual_loss = ((manual(x) - y) ** 2).mean()
    manual_loss.backward()
    with genesis.no_grad():
        for param in manual.parameters():
            param -= 0.05 * param.grad
            param.grad.zero_()
print("loss", loss.item(), manual_loss.item())

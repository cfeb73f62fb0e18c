"""Clean: logistic regression trained to convergence; the gradients shrink toward zero as
the loss converges, which is not vanishing."""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
x = genesis.randn(200, 2)
y = (x[:, 0] - 2 * x[:, 1] > 0).float()[:, None]
model = nn.Linear(2, 1)
optimizer = genesis.optim.SGD(model.parameters(), lr=0.5)
for step in range(400):
    loss = nn.functional.binary_cross_entropy_with_logits(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")

"""Clean: layers wrapped by spectral_norm and weight_norm where the model is built, and the
optimizer made before the model's first call (the parametrizations run while being built)."""
import genesis
import genesis.nn as nn
from genesis.nn.utils import parametrizations

genesis.manual_seed(0)
model = nn.Sequential(parametrizations.weight_norm(nn.Linear(4, 8)), nn.Tanh(),
                      parametrizations.spectral_norm(nn.Linear(8, 2)))
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
x, y = genesis.randn(16, 4), genesis.randn(16, 2)
for step in range(3):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")

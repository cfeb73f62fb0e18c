"""Bug: a regression model that also learns its noise level, as a raw standard deviation
`self.noise` with no constraint keeping it positive. The Gaussian negative log-likelihood
pushes the noise down as the fit improves; after several hundred steps it crosses 0, and
`log(noise)` is NaN from then on. Nothing goes wrong for most of the run, so watching
only the first steps finds nothing.

`genesis trace` checks every step: it reports the step where the NaN was born, the op
(the log) and its line, and saves that step's parameters and batch to replay it.
(The fix: learn log(noise), or use softplus(raw) + eps.)
"""
import genesis
import genesis.nn as nn


class NoisyRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = nn.Linear(3, 1)
        self.noise = nn.Parameter(genesis.tensor(1.0))  # bug: nothing keeps it above 0

    def forward(self, x, y):
        error = y - self.mean(x)
        return (genesis.log(self.noise) + error ** 2 / (2 * self.noise ** 2)).mean()


genesis.manual_seed(0)
x = genesis.randn(400, 3)
y = x @ genesis.tensor([[1.0], [-2.0], [0.5]]) + 0.01 * genesis.randn(400, 1)
model = NoisyRegression()
optimizer = genesis.optim.SGD(model.parameters(), lr=5e-3)

for step in range(1000):
    batch = genesis.randint(0, 400, (32,))
    optimizer.zero_grad()
    loss = model(x[batch], y[batch])
    loss.backward()
    optimizer.step()
    if step % 250 == 0:
        print(f"step {step}: loss {loss.item():.4f}  noise {model.noise.item():.4f}")

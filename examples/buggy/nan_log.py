"""Bug: the log of a probability that can be exactly zero.

A ReLU-based "probability" reaches 0, log(0) = -inf, and 0 * -inf = NaN
poisons the loss. `genesis trace` points at the line where -inf is born.
"""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
layer = nn.Linear(3, 4)
x = genesis.randn(16, 3)
target = genesis.rand(16, 4)

probabilities = layer(x).relu()                   # exactly 0 wherever the input is negative
probabilities = probabilities / (probabilities.sum(dim=1, keepdim=True) + 1e-6)
loss = -(target * probabilities.log()).sum(dim=1).mean()   # bug: log(0)
loss.backward()
print("loss", loss.item())

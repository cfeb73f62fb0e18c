"""Bug: a hand-written cross entropy that takes the log of a probability that can be 0.

A ReLU-based "probability" reaches exactly 0, so log(0) = -inf; the one-hot target is
0 for every other class, and 0 * -inf = NaN poisons the loss. `genesis trace` reports
the NaN where it is born (the product on the loss line) and names the log(0) its -inf
came from. (F.cross_entropy on the logits, or log(p + eps), is the fix.)
"""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
layer = nn.Linear(3, 4)
x = genesis.randn(16, 3)
labels = genesis.randint(0, 4, (16,))
target = genesis.eye(4)[labels]                  # one-hot: 1 for the true class, 0 elsewhere

probabilities = layer(x).relu()                   # exactly 0 wherever the input is negative
probabilities = probabilities / (probabilities.sum(dim=1, keepdim=True) + 1e-6)
loss = -(target * probabilities.log()).sum(dim=1).mean()   # bug: log(0), then 0 * -inf
loss.backward()
print("loss", loss.item())

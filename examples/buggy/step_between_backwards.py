"""Bug: a classifier trained on two losses over the same logits (cross-entropy and a
logit-size penalty), with the optimizer stepping between the two backward calls. The step
changes the head's weight, which the second backward needs as it was. `genesis trace` names
the step's line and says what to do. Options: --steps N."""
import argparse

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(8, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.trunk(x).relu())


parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--steps", type=int, default=5)
options = parser.parse_args()
genesis.manual_seed(0)
model = Classifier()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
inputs, labels = genesis.randn(32, 8), genesis.randint(0, 3, (32,))
for step in range(options.steps):
    logits = model(inputs)
    optimizer.zero_grad()
    F.cross_entropy(logits, labels).backward(retain_graph=True)
    optimizer.step()  # bug: the penalty's backward still needs the weights as they were
    (1e-3 * logits.pow(2).mean()).backward()
    optimizer.step()
print("done")

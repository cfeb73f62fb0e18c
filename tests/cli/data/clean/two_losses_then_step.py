"""Clean: two losses over the same logits, both backward calls made before the optimizer
steps (the first keeps the graph), and in-place changes only to tensors no backward needs."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
inputs, labels = genesis.randn(32, 8), genesis.randint(0, 3, (32,))
running = genesis.zeros(())
for penalized in (True, False):  # three backward calls in all
    logits = model(inputs)
    optimizer.zero_grad()
    loss = F.cross_entropy(logits, labels)
    if penalized:
        loss.backward(retain_graph=True)
        (1e-3 * logits.pow(2).mean()).backward()
    else:
        loss.backward()
    optimizer.step()
    running.mul_(0.9).add_(loss.detach())  # an in-place running average: saved by no one
    inputs = inputs.clone()
    inputs.add_(0.01)  # changed in place after its graph was used: nothing pending needs it

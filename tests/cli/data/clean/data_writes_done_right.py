"""Clean: writes through .data that change nothing a pending backward needs: WGAN-style
weight clipping after the optimizer step, an exponential moving average of the weights
kept in another model, and an input normalised through .data before the forward."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F

genesis.manual_seed(0)
critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
average = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = genesis.optim.SGD(critic.parameters(), lr=0.05)
inputs, targets = genesis.randn(32, 4), genesis.randn(32, 1)
for step in range(3):
    batch = inputs.clone()
    batch.data.sub_(batch.data.mean(0))  # before the forward that uses it
    loss = F.mse_loss(critic(batch), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    for param in critic.parameters():
        param.data.clamp_(-0.5, 0.5)  # weight clipping, after the backward that needed them
    for mine, theirs in zip(average.parameters(), critic.parameters()):
        mine.data.mul_(0.9).add_(0.1 * theirs.data)

"""Clean: a GAN training loop. The generator's loss backpropagates through the
discriminator (so the discriminator's parameters get gradients the generator's optimizer
never steps), and the discriminator's optimizer clears them before its own backward.
Must give no findings."""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
discriminator = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
g_optimizer = genesis.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.5, 0.999))
d_optimizer = genesis.optim.Adam(discriminator.parameters(), lr=1e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()

for step in range(40):
    real = genesis.randn(32, 2) * 0.5 + genesis.tensor([2.0, -1.0])
    fake = generator(genesis.randn(32, 4))

    d_optimizer.zero_grad()
    d_loss = bce(discriminator(real), genesis.ones(32, 1)) + \
        bce(discriminator(fake.detach()), genesis.zeros(32, 1))
    d_loss.backward()
    d_optimizer.step()

    g_optimizer.zero_grad()
    g_loss = bce(discriminator(fake), genesis.ones(32, 1))
    g_loss.backward()
    g_optimizer.step()
print("d", d_loss.item(), "g", g_loss.item())

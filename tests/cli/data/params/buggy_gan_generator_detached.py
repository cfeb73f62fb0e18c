"""Bug: a GAN whose generator step detaches the fake batch, so no gradient reaches the
generator. The discriminator step detaches it too, on purpose, and runs first: the cut to
blame is the one in the backward call before the generator's optimizer steps."""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = genesis.optim.Adam(G.parameters(), lr=1e-3)
opt_d = genesis.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for step in range(10):
    real = genesis.randn(32, 2) + 2
    fake = G(genesis.randn(32, 4))
    opt_d.zero_grad()
    d_loss = bce(D(real), genesis.ones(32, 1)) + bce(D(fake.detach()), genesis.zeros(32, 1))
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = bce(D(fake.detach()), genesis.ones(32, 1))  # BUG: detach
    g_loss.backward()
    opt_g.step()

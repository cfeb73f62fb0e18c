"""Clean: a WGAN whose critic reads its sample through a bidirectional ReLU RNN (one time
step, a random start state per batch) and sums its outputs into a score; the critic is
frozen for the generator's step. The critic's loss,
C(fake).mean() - C(real).mean(), does not depend on the RNN's biases (bias_ih_l0, bias_hh_l0
and their _reverse twins each add the same constant to both means): their gradients are
exactly 0 at every step while the weights beside them learn. Correct code: no findings
(those biases are listed as having no effect on the loss)."""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(2, 16, nonlinearity="relu", bidirectional=True)
        with genesis.no_grad():
            for name, param in self.rnn.named_parameters():
                if name.startswith("bias"):
                    param.fill_(1.0)  # every unit active from the start
                else:
                    param.mul_(0.1)

    def forward(self, x):
        state = genesis.rand(2, x.shape[0], 16)
        out, _ = self.rnn(x.unsqueeze(0), state)
        return out.sum(dim=(0, 2))


G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
C = Critic()
opt_g = genesis.optim.RMSprop(G.parameters(), lr=5e-5)
opt_c = genesis.optim.RMSprop(C.parameters(), lr=5e-5)
for iteration in range(3):
    C.requires_grad_(True)
    for _ in range(2):
        real = genesis.randn(32, 2) * 0.3 + genesis.tensor([1.0, -1.0])
        with genesis.no_grad():
            fake = G(genesis.randn(32, 4))
        opt_c.zero_grad()
        loss_c = C(fake).mean() - C(real).mean()
        loss_c.backward()
        opt_c.step()
        for param in C.parameters():
            param.data.clamp_(-0.5, 1.0)
    C.requires_grad_(False)  # the generator's step
    opt_g.zero_grad()
    loss_g = -C(G(genesis.randn(32, 4))).mean()
    loss_g.backward()
    opt_g.step()
    print(f"iteration {iteration}: critic {loss_c.item():.5f} generator {loss_g.item():.5f}")

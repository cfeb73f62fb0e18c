"""Clean: a WGAN-GP. The gradient penalty takes autograd.grad(create_graph=True) of the
critic at interpolated points (a leaf made with requires_grad_), the critic steps 5 times
per generator step on a detached fake batch, two Adam optimizers. Must give no findings."""
import genesis as torch
import genesis.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.0, 0.9))
n_critic = 5
lambda_gp = 10.0


def gradient_penalty(D, real, fake):
    alpha = torch.rand(real.size(0), 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = D(interp)
    grads = torch.autograd.grad(outputs=out, inputs=interp, grad_outputs=torch.ones_like(out),
                                create_graph=True, retain_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


for it in range(20):
    for _ in range(n_critic):
        real = torch.randn(64, 2) * 0.3 + torch.tensor([1.0, 1.0])
        z = torch.randn(64, 8)
        fake = G(z).detach()
        opt_d.zero_grad()
        d_loss = D(fake).mean() - D(real).mean() + lambda_gp * gradient_penalty(D, real, fake)
        d_loss.backward()
        opt_d.step()
    opt_g.zero_grad()
    g_loss = -D(G(torch.randn(64, 8))).mean()
    g_loss.backward()
    opt_g.step()
print(d_loss.item(), g_loss.item())

"""Clean: LBFGS with a closure that clears the gradients, runs the forward and backward,
and returns the loss; step(closure) calls it several times per step. Must give no findings."""
import genesis as torch
import genesis.nn as nn

torch.manual_seed(0)
x = torch.linspace(-2, 2, 100).unsqueeze(1)
y = torch.sin(x) + 0.05 * torch.randn_like(x)
model = nn.Sequential(nn.Linear(1, 20), nn.Tanh(), nn.Linear(20, 1))
optimizer = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=20, history_size=10,
                              line_search_fn="strong_wolfe")
loss_fn = nn.MSELoss()


def closure():
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    return loss


for step in range(5):
    loss = optimizer.step(closure)
print(loss.item())

"""Clean: parameters differentiated with genesis.autograd.grad (which fills no .grad) and
updated by hand, plus a gradient penalty taken with create_graph=True."""
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
params = list(model.parameters())
x = genesis.randn(64, 3)
y = x[:, :1] * 2
for step in range(20):
    inputs = x.clone().requires_grad_()
    prediction = model(inputs)
    (slope,) = genesis.autograd.grad(prediction.sum(), inputs, create_graph=True)
    loss = ((prediction - y) ** 2).mean() + 0.01 * (slope ** 2).mean()
    grads = genesis.autograd.grad(loss, params)
    with genesis.no_grad():
        for param, grad in zip(params, grads):
            param -= 0.1 * grad
print(f"loss {loss.item():.4f}")

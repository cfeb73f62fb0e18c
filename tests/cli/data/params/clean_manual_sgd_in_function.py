"""Clean: a hand-written SGD loop with plain tensors as weights, held in global variables;
the backward, the update `p -= lr * p.grad` under no_grad and `p.grad = None` happen inside
a `step` function, which a validation batch calls without backward. The parameters are
named by the script's variables (W1, b1, W2)."""
import genesis as torch

torch.manual_seed(0)
W1 = torch.randn(5, 16, requires_grad=True)
b1 = torch.zeros(16, requires_grad=True)
W2 = torch.randn(16, 1) * 0.1
W2.requires_grad_()
params = [W1, b1, W2]
lr = 0.01


def forward(x):
    return torch.relu(x @ W1 + b1) @ W2


def step(x, y, train=True):
    loss = ((forward(x) - y) ** 2).mean()
    if train:
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None
    return loss


X = torch.randn(200, 5)
Y = X[:, :1] - X[:, 1:2]
for epoch in range(10):
    for i in range(0, 160, 20):
        step(X[i:i + 20], Y[i:i + 20])
    with torch.no_grad():
        val = step(X[160:], Y[160:], train=False)
print("validation loss", val.item())

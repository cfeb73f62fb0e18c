"""Custom Functions whose backward is deliberately not the derivative of their forward,
written the PyTorch way: a binarising straight-through estimator (sign in forward, the
gradient clipped to |x| <= 1 in backward) and a gradient reversal layer for domain
adaptation, declared as such with `surrogate_gradient = True`. The per-node checks see
sign's flat forward and the declaration; `genesis trace --check-all` reports nothing.
"""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class BinarizeSTE(genesis.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sign()

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * (x.abs() <= 1).float()


class GradReverse(genesis.autograd.Function):
    surrogate_gradient = True   # reversal is the point: the checks leave it alone

    @staticmethod
    def forward(ctx, x, strength):
        ctx.strength = strength
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return -ctx.strength * grad, None


class DomainAdaptation(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(6, 16)
        self.label_head = nn.Linear(16, 3)
        self.domain_head = nn.Linear(16, 2)

    def forward(self, x):
        hidden = BinarizeSTE.apply(self.features(x))
        return self.label_head(hidden), self.domain_head(GradReverse.apply(hidden, 0.3))


genesis.manual_seed(0)
model = DomainAdaptation()
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x = genesis.randn(32, 6)
    labels, domains = genesis.randint(0, 3, (32,)), genesis.randint(0, 2, (32,))
    label_logits, domain_logits = model(x)
    loss = F.cross_entropy(label_logits, labels) + F.cross_entropy(domain_logits, domains)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())

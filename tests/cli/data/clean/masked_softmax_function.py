"""A custom autograd Function for masked softmax, written the way PyTorch users write one:
the mask is applied as -inf inside forward, backward uses the saved output. A padded batch
(the last sequence has a single token) trains a small classifier for a few steps. The
Function is correct, so `genesis trace --check-all` must report nothing, although its
inputs and outputs hold -inf and exact zeros from the mask.
"""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class MaskedSoftmax(genesis.autograd.Function):
    @staticmethod
    def forward(ctx, scores, keep):
        masked = scores.masked_fill(~keep, float("-inf"))
        shifted = masked - masked.max(dim=-1, keepdim=True)[0]
        weights = shifted.exp()
        out = weights / weights.sum(dim=-1, keepdim=True)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return out * (grad - (grad * out).sum(dim=-1, keepdim=True)), None


class AttentionPool(nn.Module):
    def __init__(self, width: int = 6, classes: int = 3):
        super().__init__()
        self.score = nn.Linear(width, 1)
        self.head = nn.Linear(width, classes)

    def forward(self, x, keep):
        weights = MaskedSoftmax.apply(self.score(x).squeeze(-1), keep)
        return self.head((weights.unsqueeze(-1) * x).sum(dim=1))


genesis.manual_seed(0)
model = AttentionPool()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
x = genesis.randn(3, 4, 6)
keep = genesis.tensor([[True, True, True, True], [True, True, False, False],
                       [True, False, False, False]])
labels = genesis.tensor([0, 1, 2])
for step in range(3):
    loss = F.cross_entropy(model(x, keep), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())

"""Clean: a deep-ish residual stack with layer norm, trained with AdamW."""
import genesis
import genesis.nn as nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.linear = nn.Linear(width, width)

    def forward(self, x):
        return x + nn.functional.gelu(self.linear(self.norm(x)))


class Deep(nn.Module):
    def __init__(self, width=16, depth=8):
        super().__init__()
        self.inp = nn.Linear(3, width)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(depth)])
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        return self.head(self.blocks(self.inp(x)))


genesis.manual_seed(0)
x = genesis.randn(128, 3)
y = (x[:, :1].sin() + x[:, 1:2] * x[:, 2:3])
model = Deep()
optimizer = genesis.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(150):
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")

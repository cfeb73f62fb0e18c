"""Clean: the MLP of a transformer block (LayerNorm, Linear, GELU, Linear, residual) on
token embeddings. GELU's outputs are never exactly zero: no unit is "dead" however negative
its inputs."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F

genesis.manual_seed(0)


class Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(self.act(self.up(self.norm(x))))


class TinyModel(nn.Module):
    def __init__(self, vocab: int = 20, width: int = 16):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList([Block(width) for _ in range(2)])
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


model = TinyModel()
optimizer = genesis.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(30):
    tokens = genesis.randint(0, 20, (8, 12))
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")

"""Clean: an embedding with padding_idx (the padding row never gets a gradient, by design)."""
import genesis
import genesis.nn as nn


class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 8, padding_idx=0)
        self.classify = nn.Linear(8, 2)

    def forward(self, tokens):
        return self.classify(self.embed(tokens).mean(dim=1))


genesis.manual_seed(0)
tokens = genesis.randint(1, 20, (32, 6))
tokens[:, 4:] = 0  # padding
labels = genesis.randint(0, 2, (32,))
model = Bag()
optimizer = genesis.optim.SGD(model.parameters(), lr=0.5)
for step in range(30):
    loss = nn.functional.cross_entropy(model(tokens), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")

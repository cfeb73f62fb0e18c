"""Buggy: a logging helper puts the encoder alone in eval mode to compute embeddings and
never puts it back: after the first log, the encoder's BatchNorm and Dropout run in eval
mode in every training step (the head's Dropout is untouched)."""
import genesis as torch
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(240, 16)
y = (x[:, :4].sum(dim=1) > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=40, shuffle=True)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 32)
        self.norm = nn.BatchNorm1d(32)
        self.drop = nn.Dropout(0.25)

    def forward(self, x):
        return self.drop(F.gelu(self.norm(self.proj(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Sequential(nn.Dropout(0.1), nn.Linear(32, 2))

    def forward(self, x):
        return self.head(self.encoder(x))


def log_embedding_stats(model, batch):
    model.encoder.eval()
    with torch.no_grad():
        embedding = model.encoder(batch)
    print(f"embedding mean {embedding.mean().item():.3f} std {embedding.std().item():.3f}")


model = Model()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
for epoch in range(3):
    model.train()
    for batch, (inputs, targets) in enumerate(loader):
        if batch == 3:
            log_embedding_stats(model, inputs)
        loss = F.cross_entropy(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

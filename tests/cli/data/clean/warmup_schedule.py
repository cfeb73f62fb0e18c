"""Clean: a linear learning-rate warm-up that starts at lr 0 (LambdaLR), stepped after the
optimizer in every iteration, then cosine decay; one group with a smaller learning rate
on purpose (the embedding), and a softmax whose bias gets gradients of ~1e-9. Must give
no findings."""
import math

import genesis
import genesis.nn as nn
from genesis.optim.lr_scheduler import LambdaLR

WARMUP, TOTAL = 10, 60


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.mix = nn.Linear(16, 16)
        self.score = nn.Linear(16, 5)

    def forward(self, tokens):
        hidden = self.mix(self.embed(tokens)).tanh()
        return self.score(hidden)


def schedule(step):
    if step < WARMUP:
        return step / WARMUP
    return 0.5 * (1 + math.cos(math.pi * (step - WARMUP) / (TOTAL - WARMUP)))


genesis.manual_seed(0)
model = Tagger()
optimizer = genesis.optim.Adam([
    {"params": model.embed.parameters(), "lr": 1e-4},
    {"params": list(model.mix.parameters()) + list(model.score.parameters())},
], lr=1e-2)
scheduler = LambdaLR(optimizer, schedule)
tokens = genesis.randint(0, 50, (32, 7))
tags = tokens % 5
for step in range(TOTAL):
    optimizer.zero_grad()
    logits = model(tokens)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 5), tags.reshape(-1))
    loss.backward()
    optimizer.step()
    scheduler.step()
print("loss", loss.item(), "lr", scheduler.get_last_lr())

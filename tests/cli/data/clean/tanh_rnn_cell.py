"""Clean: an Elman RNN cell (tanh) unrolled over sequences, trained on their sum's sign;
its hidden state is partly saturated at times, as a working tanh RNN's is, not from the start."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F

genesis.manual_seed(0)


class Cell(nn.Module):
    def __init__(self, inputs: int, hidden: int):
        super().__init__()
        self.inp = nn.Linear(inputs, hidden)
        self.rec = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x, h):
        return genesis.tanh(self.inp(x) + self.rec(h))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = Cell(1, 32)
        self.out = nn.Linear(32, 2)

    def forward(self, sequence):
        h = genesis.zeros(sequence.shape[0], 32)
        for t in range(sequence.shape[1]):
            h = self.cell(sequence[:, t], h)
        return self.out(h)


model = Classifier()
optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
for step in range(40):
    walks = genesis.randn(32, 8, 1)
    labels = (walks.sum(dim=(1, 2)) > 0).long()
    loss = F.cross_entropy(model(walks), labels)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
print(f"loss {loss.item():.4f}")

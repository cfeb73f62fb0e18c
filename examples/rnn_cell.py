"""A GRU cell unrolled by hand over a sequence: learn to tell whether a sequence of +1/-1
steps ends above or below where it started (the running sum's sign).

The cell is one module called at every step, so `genesis trace examples/rnn_cell.py` draws
each call as its own cluster (cell, cell#2, ..., folded into one badge when there are many),
with the shared weights beside each use.

Run: python examples/rnn_cell.py [--steps N] [--length L] [--device cuda]
It prints the loss going down and the final accuracy (> 90%).
"""
import argparse

import numpy as np

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


def walks(count: int, length: int, seed: int = 0):
    """Random +1/-1 walks, shaped (length, count, 1), and whether each ends above 0."""
    rng = np.random.default_rng(seed)
    steps = rng.choice([-1.0, 1.0], size=(length, count, 1))
    labels = (steps.sum(axis=0)[:, 0] > 0).astype(np.int64)
    return genesis.tensor(steps, dtype=genesis.float32), genesis.tensor(labels)


class Unrolled(nn.Module):
    def __init__(self, hidden: int = 16):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.GRUCell(1, hidden)
        self.head = nn.Linear(hidden, 2)

    def forward(self, sequence):
        h = genesis.zeros(sequence.shape[1], self.hidden, device=sequence.device)
        for x in sequence:          # one call of the cell per step
            h = self.cell(x, h)
        return self.head(h)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--length", type=int, default=7)  # odd: the sum is never 0
    parser.add_argument("--device", default="cpu", help="where to train: cpu or cuda")
    options = parser.parse_args()
    genesis.manual_seed(0)
    sequences, labels = (tensor.to(options.device) for tensor in walks(256, options.length))
    model = Unrolled().to(options.device)
    optimizer = genesis.optim.Adam(model.parameters(), lr=0.02)
    for step in range(options.steps):
        loss = F.cross_entropy(model(sequences), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 50 == 0 or step == options.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    with genesis.no_grad():
        accuracy = (model(sequences).argmax(dim=1) == labels).float().mean().item()
    print(f"training accuracy: {accuracy:.1%}")


if __name__ == "__main__":
    main()

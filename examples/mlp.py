"""An MLP classifier on a synthetic 2-D spiral (three arms), trained with Adam.

Run: python examples/mlp.py [--epochs N] [--device cuda]
It prints the loss going down and the final training accuracy (> 95%).
"""
import argparse

import numpy as np

import genesis
import genesis.nn as nn


def spiral(points_per_class: int = 200, classes: int = 3, seed: int = 0):
    """Points on `classes` interleaved spiral arms, with a little noise."""
    rng = np.random.default_rng(seed)
    features, labels = [], []
    for label in range(classes):
        radius = np.linspace(0.05, 1.0, points_per_class)
        angle = np.linspace(label * 4.0, (label + 1) * 4.0, points_per_class) + \
            rng.normal(0.0, 0.15, points_per_class)
        features.append(np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1))
        labels.append(np.full(points_per_class, label))
    return (genesis.tensor(np.concatenate(features), dtype=genesis.float32),
            genesis.tensor(np.concatenate(labels)))


class MLP(nn.Module):
    def __init__(self, hidden: int = 64, classes: int = 3):
        super().__init__()
        self.fc1 = nn.Linear(2, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)

    def forward(self, x):
        x = self.fc1(x).relu()
        x = self.fc2(x).relu()
        return self.fc3(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--device", default="cpu", help="where to train: cpu or cuda")
    options = parser.parse_args()
    epochs = options.epochs
    genesis.manual_seed(0)
    features, labels = (tensor.to(options.device) for tensor in spiral())
    model = MLP().to(options.device)
    optimizer = genesis.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        logits = model(features)
        loss = loss_fn(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if epoch % 50 == 0 or epoch == epochs - 1:
            print(f"epoch {epoch:4d}  loss {loss.item():.4f}")
    with genesis.no_grad():
        accuracy = (model(features).argmax(dim=1) == labels).float().mean().item()
    print(f"training accuracy: {accuracy:.1%}")


if __name__ == "__main__":
    main()

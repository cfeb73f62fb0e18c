"""A training script as people write one, for measuring what `genesis trace` costs: an
MNIST-sized MLP classifier (784-256-128-10, ReLU, dropout) on synthetic images, a
DataLoader with shuffling, AdamW with a cosine schedule, zero_grad / backward / step,
and a validation pass under no_grad after each epoch.

Run: python bench/scripts/train_classifier.py [--epochs N] [--samples N]
"""
import argparse

import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.optim.lr_scheduler import CosineAnnealingLR
from genesis.utils.data import DataLoader, TensorDataset


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.1),
                                  nn.Linear(256, 128), nn.ReLU())
        self.head = nn.Linear(128, 10)

    def forward(self, images):
        return self.head(self.body(images.flatten(1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--samples", type=int, default=16384)
    options = parser.parse_args()
    genesis.manual_seed(0)
    prototypes = genesis.randn(10, 1, 28, 28)
    labels = genesis.randint(0, 10, (options.samples,))
    images = 0.1 * prototypes[labels] + genesis.randn(options.samples, 1, 28, 28)
    split = options.samples * 7 // 8
    train = DataLoader(TensorDataset(images[:split], labels[:split]), batch_size=64, shuffle=True)
    valid = DataLoader(TensorDataset(images[split:], labels[split:]), batch_size=256)
    model = Classifier()
    optimizer = genesis.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    scheduler = CosineAnnealingLR(optimizer, T_max=options.epochs * len(train))
    for epoch in range(options.epochs):
        model.train()
        for batch, target in train:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(batch), target)
            loss.backward()
            optimizer.step()
            scheduler.step()
        model.eval()
        correct = 0
        with genesis.no_grad():
            for batch, target in valid:
                correct += (model(batch).argmax(dim=1) == target).sum().item()
        print(f"epoch {epoch}: loss {loss.item():.3f}  validation accuracy "
              f"{correct / (options.samples - split):.1%}")


if __name__ == "__main__":
    main()

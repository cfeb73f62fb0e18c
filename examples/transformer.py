"""A tiny character-level transformer language model on a short embedded text.

Token and position embeddings, two `nn.TransformerEncoderLayer`s with a causal
mask (each position attends only to itself and earlier ones), a final
LayerNorm and a linear head predicting the next character. Trained with Adam
on random windows of the text; no downloads.

Run: python examples/transformer.py [--steps N] [--device cuda]
It prints the loss going down and a greedy continuation of a prompt.
"""
import argparse

import numpy as np

import genesis
import genesis.nn as nn
import genesis.nn.functional as F

TEXT = (
    "the quick brown fox jumps over the lazy dog. the lazy dog sleeps in the sun. "
    "the quick fox runs to the river and the dog follows the fox. "
    "a brown dog and a quick fox meet by the river in the sun. "
    "the fox jumps, the dog sleeps, the river runs, and the sun sets over the hill. "
)
BLOCK = 32


class CharTransformer(nn.Module):
    def __init__(self, vocab: int, width: int = 48, heads: int = 4, layers: int = 2):
        super().__init__()
        self.token = nn.Embedding(vocab, width)
        self.position = nn.Embedding(BLOCK, width)
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=4 * width, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        length = tokens.shape[1]
        x = self.token(tokens) + self.position(genesis.arange(length, device=tokens.device))
        causal = genesis.ones(length, length, dtype=genesis.bool,  # True: may not attend
                              device=tokens.device).triu(1)
        return self.head(self.norm(self.blocks(x, mask=causal)))


def batches(ids: np.ndarray, batch: int, rng: np.random.Generator, device="cpu"):
    """Random windows of BLOCK + 1 characters: inputs and the next characters as targets."""
    starts = rng.integers(0, len(ids) - BLOCK - 1, size=batch)
    windows = np.stack([ids[start:start + BLOCK + 1] for start in starts])
    return (genesis.tensor(windows[:, :-1], device=device),
            genesis.tensor(windows[:, 1:], device=device))


def continue_text(model, prompt: str, chars: list, length: int, device="cpu") -> str:
    index = {c: i for i, c in enumerate(chars)}
    ids = [index[c] for c in prompt]
    with genesis.no_grad():
        for _ in range(length):
            logits = model(genesis.tensor([ids[-BLOCK:]], device=device))
            ids.append(int(logits[0, -1].argmax().item()))
    return "".join(chars[i] for i in ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--device", default="cpu", help="where to train: cpu or cuda")
    options = parser.parse_args()
    steps, device = options.steps, options.device
    genesis.manual_seed(0)
    rng = np.random.default_rng(0)
    chars = sorted(set(TEXT))
    ids = np.array([chars.index(c) for c in TEXT])
    model = CharTransformer(len(chars)).to(device)
    optimizer = genesis.optim.Adam(model.parameters(), lr=3e-3)
    print(f"{len(TEXT)} characters, vocabulary {len(chars)}, "
          f"{sum(p.numel() for p in model.parameters())} parameters")
    for step in range(steps):
        inputs, targets = batches(ids, 16, rng, device)
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 50 == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    print("sample:", repr(continue_text(model, "the quick ", chars, 40, device)))


if __name__ == "__main__":
    main()

"""A seq2seq GRU that reverses digit sequences of different lengths: the encoder reads a
padded batch through pack_padded_sequence (enforce_sorted=False) and pad_packed_sequence,
a bidirectional GRU whose final states are bridged to the decoder, an additive (Bahdanau)
attention that masks the padding with masked_fill, a GRUCell decoder with teacher forcing
drawn from a seeded `random`, and cross_entropy with ignore_index for the padding."""
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
rng = np.random.default_rng(0)
random.seed(0)
PAD, SOS, EOS, VOCAB, HIDDEN = 0, 1, 2, 13, 24


def make_batch(n):
    lengths = rng.integers(3, 8, size=n)
    sources = [torch.from_numpy(rng.integers(3, VOCAB, size=length)) for length in lengths]
    targets = [torch.cat([s.flip(0), torch.tensor([EOS])]) for s in sources]
    return (pad_sequence(sources, batch_first=True, padding_value=PAD), torch.as_tensor(lengths),
            pad_sequence(targets, batch_first=True, padding_value=PAD))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, HIDDEN, padding_idx=PAD)
        self.rnn = nn.GRU(HIDDEN, HIDDEN, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * HIDDEN, HIDDEN)

    def forward(self, src, lengths):
        packed = pack_padded_sequence(self.embedding(src), lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, hidden = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.size(1))
        hidden = torch.tanh(self.bridge(torch.cat((hidden[-2], hidden[-1]), dim=1)))
        return outputs, hidden


class AdditiveAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.key = nn.Linear(2 * HIDDEN, HIDDEN)
        self.v = nn.Linear(HIDDEN, 1, bias=False)

    def forward(self, hidden, outputs, mask):
        scores = self.v(torch.tanh(self.query(hidden).unsqueeze(1) + self.key(outputs))).squeeze(2)
        scores = scores.masked_fill(mask == 0, -1e10)
        weights = F.softmax(scores, dim=1)
        context = torch.bmm(weights.unsqueeze(1), outputs).squeeze(1)
        return context, weights


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, HIDDEN)
        self.attention = AdditiveAttention()
        self.cell = nn.GRUCell(HIDDEN + 2 * HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN + 2 * HIDDEN + HIDDEN, VOCAB)
        self.dropout = nn.Dropout(0.0)

    def forward(self, token, hidden, outputs, mask):
        embedded = self.dropout(self.embedding(token))
        context, weights = self.attention(hidden, outputs, mask)
        hidden = self.cell(torch.cat([embedded, context], dim=1), hidden)
        return self.out(torch.cat([hidden, context, embedded], dim=1)), hidden, weights


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder, self.decoder = Encoder(), Decoder()

    def forward(self, src, lengths, trg, teacher_forcing_ratio=0.5):
        batch_size, trg_len = trg.shape
        outputs = torch.zeros(batch_size, trg_len, VOCAB)
        enc_outputs, hidden = self.encoder(src, lengths)
        mask = src != PAD
        token = torch.full((batch_size,), SOS, dtype=torch.long)
        for t in range(trg_len):
            logits, hidden, _ = self.decoder(token, hidden, enc_outputs, mask)
            outputs[:, t] = logits
            teacher_force = random.random() < teacher_forcing_ratio
            token = trg[:, t] if teacher_force else logits.argmax(1)
        return outputs


model = Seq2Seq()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
criterion = nn.CrossEntropyLoss(ignore_index=PAD)

for step in range(8):
    model.train()
    src, lengths, trg = make_batch(16)
    output = model(src, lengths, trg)
    loss = criterion(output.reshape(-1, VOCAB), trg.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    print(f"loss {step} {loss.item():.6f}")

model.eval()
with torch.no_grad():
    src, lengths, trg = make_batch(4)
    prediction = model(src, lengths, trg, teacher_forcing_ratio=0.0).argmax(-1)
    accuracy = ((prediction == trg) | (trg == PAD)).all(1).float().mean()
print("exact", accuracy.item())

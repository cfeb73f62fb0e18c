"""A CTC speech-style recogniser on toy "spectrograms": Conv1d front end, a 2-layer LSTM
with dropout 0 between layers, log_softmax over time-major outputs for nn.CTCLoss
(blank=0, zero_infinity=True) with per-sample input and target lengths (one target too
long for its input, so its loss is infinite and zeroed), greedy decoding with
unique_consecutive, and OneCycleLR."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
N_CLASSES, FEATURES, BATCH = 6, 8, 6
templates = rng.standard_normal((N_CLASSES, FEATURES)).astype(np.float32)


def make_batch():
    inputs, targets, target_lengths, input_lengths = [], [], [], []
    max_frames = 24
    spectrogram = np.zeros((BATCH, FEATURES, max_frames), dtype=np.float32)
    for b in range(BATCH):
        n = int(rng.integers(2, 5))
        labels = rng.integers(1, N_CLASSES, size=n)
        frames = np.concatenate([np.repeat(templates[l][:, None], 4, axis=1) for l in labels], axis=1)
        frames = frames + 0.3 * rng.standard_normal(frames.shape).astype(np.float32)
        spectrogram[b, :, :frames.shape[1]] = frames
        input_lengths.append(frames.shape[1] // 2 if b != 0 else 1)  # sample 0: impossible alignment
        targets.append(labels)
        target_lengths.append(n)
    return (torch.from_numpy(spectrogram), torch.from_numpy(np.concatenate(targets)),
            torch.tensor(input_lengths, dtype=torch.long), torch.tensor(target_lengths, dtype=torch.long))


class Recogniser(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(FEATURES, 16, kernel_size=3, stride=2, padding=1)
        self.lstm = nn.LSTM(16, 24, num_layers=2, batch_first=False)
        self.fc = nn.Linear(24, N_CLASSES)

    def forward(self, x):
        x = F.relu(self.conv(x))          # (B, C, T/2)
        x = x.permute(2, 0, 1)            # (T, B, C)
        x, _ = self.lstm(x)
        return self.fc(x).log_softmax(2)  # (T, B, classes)


model = Recogniser()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
ctc = nn.CTCLoss(blank=0, zero_infinity=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=2e-2, total_steps=10)

for step in range(10):
    spectrogram, targets, input_lengths, target_lengths = make_batch()
    log_probs = model(spectrogram)
    loss = ctc(log_probs, targets, input_lengths, target_lengths)
    per_sample = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, reduction="none",
                            zero_infinity=True)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    optimizer.step()
    scheduler.step()
    print(f"loss {step} {loss.item():.6f} {per_sample.sum().item():.5f}")

with torch.no_grad():
    best = model(spectrogram).argmax(2)[:, 1]
    decoded = [int(c) for c in torch.unique_consecutive(best[: input_lengths[1]]) if c != 0]
print("decoded", decoded, "target", targets[target_lengths[0]: target_lengths[0] + target_lengths[1]].tolist())

"""BERT-style masked LM: hand-written multi-head attention with a padding mask filled with
finfo.min, tied input/output embeddings, GELU FFN, post-LN, ignore_index=-100 labels, AdamW
with weight-decay groups, linear warmup via LambdaLR, grad clipping, eval under no_grad."""
import math, os
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
VOCAB, PAD, MASK, D, H, L = 30, 0, 1, 32, 4, 10


def make_batch(n):
    lengths = rng.integers(4, L + 1, size=n)
    tokens = np.zeros((n, L), dtype=np.int64)
    for i, k in enumerate(lengths):
        start = rng.integers(2, VOCAB - k)
        tokens[i, :k] = np.arange(start, start + k)  # learnable: consecutive ids
    labels = np.full((n, L), -100, dtype=np.int64)
    chosen = (rng.random((n, L)) < 0.25) & (tokens != PAD)
    labels[chosen] = tokens[chosen]
    inputs = tokens.copy()
    inputs[chosen] = MASK
    return torch.from_numpy(inputs), torch.from_numpy(labels)


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.out = nn.Linear(D, D)

    def forward(self, x, attention_mask):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).split(D, dim=-1)
        q, k, v = (z.view(b, t, H, D // H).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // H)
        extended = attention_mask[:, None, None, :].to(scores.dtype)
        extended = (1.0 - extended) * torch.finfo(scores.dtype).min
        probs = (scores + extended).softmax(dim=-1)
        ctx = (probs @ v).transpose(1, 2).contiguous().view(b, t, D)
        return self.out(ctx)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = SelfAttention()
        self.ln1 = nn.LayerNorm(D, eps=1e-12)
        self.ffn = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))
        self.ln2 = nn.LayerNorm(D, eps=1e-12)

    def forward(self, x, mask):
        x = self.ln1(x + self.attn(x, mask))
        return self.ln2(x + self.ffn(x))


class MaskedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.pos = nn.Embedding(L, D)
        self.register_buffer("position_ids", torch.arange(L).expand((1, -1)), persistent=False)
        self.ln = nn.LayerNorm(D)
        self.layers = nn.ModuleList([Layer() for _ in range(2)])
        self.transform = nn.Linear(D, D)
        self.decoder = nn.Linear(D, VOCAB)
        self.decoder.weight = self.tok.weight
        self.apply(self._init)

    def _init(self, module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(0.0, 0.02)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(0.0, 0.02)
            module.weight.data[module.padding_idx or 0].zero_()

    def forward(self, ids):
        mask = (ids != PAD).long()
        x = self.ln(self.tok(ids) + self.pos(self.position_ids[:, : ids.size(1)]))
        for layer in self.layers:
            x = layer(x, mask)
        return self.decoder(F.gelu(self.transform(x)))


model = MaskedLM()
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
no_decay = ["bias", "LayerNorm.weight", "ln"]
groups = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
]
optimizer = torch.optim.AdamW(groups, lr=5e-3)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 3) * max(0.0, 1 - s / 20))

for step in range(10):
    model.train()
    ids, labels = make_batch(16)
    logits = model(ids)
    loss = F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1), ignore_index=-100)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    model.eval()
    with torch.no_grad():
        ids, labels = make_batch(8)
        logits = model(ids)
        keep = labels != -100
        acc = (logits.argmax(-1)[keep] == labels[keep]).float().mean()
    print(f"loss {step} {loss.item():.6f} {norm.item():.5f} {acc.item():.4f}")

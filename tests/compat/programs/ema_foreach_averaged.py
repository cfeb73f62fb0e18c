"""Two EMA copies of a classifier, neither held by an optimizer: timm's ModelEmaV3 style
(torch._foreach_lerp_ over the parameters, buffers copied) and
torch.optim.swa_utils.AveragedModel with get_ema_multi_avg_fn; both evaluated under
torch.no_grad each epoch while the live model trains with AdamW."""
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

torch.manual_seed(0)
rng = np.random.default_rng(28)

model = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.SiLU(), nn.Linear(32, 4))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})

ema = copy.deepcopy(model).eval()
ema.requires_grad_(False)
averaged = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
x = torch.from_numpy(rng.standard_normal((128, 8)).astype(np.float32))
y = (x[:, :4] * x[:, 4:]).argmax(1)
DECAY = 0.9
step = 0
for epoch in range(3):
    model.train()
    for i in range(0, 128, 32):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            ema_params = list(ema.parameters())
            torch._foreach_lerp_(ema_params, list(model.parameters()), 1 - DECAY)
            for e, m in zip(ema.buffers(), model.buffers()):
                e.copy_(m)
        averaged.update_parameters(model)
        print(f"loss {step} {loss.item():.6f}")
        step += 1
    model.eval()
    with torch.no_grad():
        scores = [F.cross_entropy(net(x), y).item() for net in (model, ema, averaged)]
    print("epoch", epoch, "live/ema/averaged", [round(s, 4) for s in scores])

"""The optimizer step fused into the backward pass, as PyTorch's tutorial does it: one
optimizer per parameter, stepped and zeroed by a register_post_accumulate_grad_hook, so no
gradient outlives its parameter's update; plus an optimizer step post-hook counting steps,
retain_grad on an activation to log its gradient norm, and backward(inputs=...) reaching
only the last two layers every third step."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)

model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})

optimizer_dict = {p: torch.optim.Adam([p], lr=3e-3, foreach=False) for p in model.parameters()}
steps_taken = [0]


def optimizer_hook(parameter) -> None:
    optimizer_dict[parameter].step()
    optimizer_dict[parameter].zero_grad()


for p in model.parameters():
    p.register_post_accumulate_grad_hook(optimizer_hook)
for opt in optimizer_dict.values():
    opt.register_step_post_hook(lambda optimizer, args, kwargs: steps_taken.__setitem__(0, steps_taken[0] + 1))

x_all = rng.standard_normal((256, 6)).astype(np.float32)
y_all = (np.sin(x_all[:, :1]) * x_all[:, 1:2]).astype(np.float32)
for step in range(10):
    idx = rng.integers(0, 256, size=32)
    x, y = torch.from_numpy(x_all[idx]), torch.from_numpy(y_all[idx])
    hidden = model[:4](x)
    hidden.retain_grad()
    loss = F.mse_loss(model[4](hidden), y)
    if step % 3 == 2:  # only the last two layers this time
        loss.backward(inputs=[hidden] + list(model[2].parameters()) + list(model[4].parameters()))
    else:
        loss.backward()
    hidden_norm = hidden.grad.norm().item()
    print(f"loss {step} {loss.item():.6f} {hidden_norm:.6f}")
print("optimizer steps", steps_taken[0])

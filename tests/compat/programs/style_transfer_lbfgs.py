"""Neural style transfer, shrunk: a frozen random conv "feature extractor" (requires_grad_(False),
eval()), content and style targets computed once under no_grad, Gram matrices with bmm, the
image itself the only optimised tensor (an nn.Parameter-free leaf given to LBFGS and then
Adam), its values kept in range by clamp_ under no_grad inside the closure, and a total
variation regulariser."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)

features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                         nn.AvgPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in features.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    features.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
features.requires_grad_(False).eval()
STYLE_LAYERS, CONTENT_LAYER = (1, 3, 6), 3


def activations(x):
    out = {}
    for i, layer in enumerate(features):
        x = layer(x)
        out[i] = x
    return out


def gram(x):
    b, c, h, w = x.size()
    f = x.view(b, c, h * w)
    return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)


content_image = torch.from_numpy(rng.uniform(size=(1, 3, 12, 12)).astype(np.float32))
style_image = torch.from_numpy(np.tile(np.sin(np.arange(12) * 1.3), (1, 3, 12, 1)).astype(np.float32) * 0.5 + 0.5)
with torch.no_grad():
    content_target = activations(content_image)[CONTENT_LAYER]
    style_targets = {i: gram(a) for i, a in activations(style_image).items() if i in STYLE_LAYERS}

image = content_image.clone().requires_grad_(True)


def objective():
    acts = activations(image)
    content = F.mse_loss(acts[CONTENT_LAYER], content_target)
    style = sum(F.mse_loss(gram(acts[i]), style_targets[i]) for i in STYLE_LAYERS)
    tv = (image[:, :, 1:, :] - image[:, :, :-1, :]).abs().mean() + (image[:, :, :, 1:] - image[:, :, :, :-1]).abs().mean()
    return content + 1e3 * style + 0.01 * tv


lbfgs = torch.optim.LBFGS([image], lr=0.5, max_iter=4)
step = 0
for _ in range(3):
    def closure():
        with torch.no_grad():
            image.clamp_(0, 1)
        lbfgs.zero_grad()
        loss = objective()
        loss.backward()
        return loss
    loss = lbfgs.step(closure)
    print(f"loss {step} {loss.item():.6f}")
    step += 1

adam = torch.optim.Adam([image], lr=0.02)
for _ in range(4):
    adam.zero_grad()
    loss = objective()
    loss.backward()
    adam.step()
    with torch.no_grad():
        image.clamp_(0, 1)
    print(f"loss {step} {loss.item():.6f}")
    step += 1

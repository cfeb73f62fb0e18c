"""Function-space tools from the torch.func tutorials on a small MLP trained with SGD: the
empirical neural tangent kernel by vmap(jacrev(functional_call)) contracted with einsum,
the NTK by jvp/vjp (the "ntk_vps" route) compared with it, per-example gradients with
vmap over grad, and torch.func.hessian of the loss w.r.t. the last layer's bias."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, hessian, jacrev, jvp, vjp, vmap

torch.manual_seed(0)
rng = np.random.default_rng(0)
model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2))
if os.environ.get("SAVE_WEIGHTS"):
    np.savez(os.environ["SAVE_WEIGHTS"], **{k: v.detach().numpy() for k, v in model.state_dict().items()})
if os.environ.get("LOAD_WEIGHTS"):
    model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(os.environ["LOAD_WEIGHTS"]).items()})
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x_all = torch.from_numpy(rng.standard_normal((64, 3)).astype(np.float32))
y_all = torch.from_numpy(np.stack([np.sin(x_all[:, 0].numpy()), x_all[:, 1].numpy() ** 2], 1).astype(np.float32))


def fnet_single(params, x):
    return functional_call(model, params, (x.unsqueeze(0),)).squeeze(0)


def empirical_ntk_jacobian_contraction(params, x1, x2):
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    return sum(torch.einsum("Naf,Mbf->NMab", j1.flatten(2), j2.flatten(2))
               for j1, j2 in zip(jac1.values(), jac2.values()))


def empirical_ntk_ntk_vps(params, x1, x2):
    def get_ntk(x1, x2):
        def func_x1(params):
            return fnet_single(params, x1)

        def func_x2(params):
            return fnet_single(params, x2)

        output, vjp_fn = vjp(func_x1, params)

        def get_ntk_slice(vec):
            vjps = vjp_fn(vec)
            _, jvps = jvp(func_x2, (params,), vjps)
            return jvps
        basis = torch.eye(output.numel(), dtype=output.dtype).view(output.numel(), -1)
        return vmap(get_ntk_slice)(basis)
    return vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)


for step in range(6):
    idx = torch.from_numpy(rng.integers(0, 64, size=16))
    loss = F.mse_loss(model(x_all[idx]), y_all[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    params = {k: v.detach() for k, v in model.named_parameters()}
    probe = x_all[:4]
    ntk = empirical_ntk_jacobian_contraction(params, probe, probe)
    ntk_vps = empirical_ntk_ntk_vps(params, probe, probe)

    def example_loss(p, x, y):
        return F.mse_loss(fnet_single(p, x), y)

    per_example = vmap(grad(example_loss), (None, 0, 0))(params, probe, y_all[:4])["2.weight"]
    bias_hessian = hessian(lambda b: example_loss({**params, "2.bias": b}, probe[0], y_all[0]))(params["2.bias"])
    print(f"loss {step} {loss.item():.6f} {ntk.trace().item() if ntk.dim() == 2 else ntk.diagonal().sum().item():.5f} "
          f"{int((ntk - ntk_vps).abs().max().item() < 1e-4)} {per_example.abs().sum().item():.5f} {bias_hessian.trace().item():.5f}")

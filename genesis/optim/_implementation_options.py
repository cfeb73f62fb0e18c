"""PyTorch's switches for how an optimizer step is carried out: `foreach`, `fused`,
`capturable` and `differentiable`. Scripts written for PyTorch pass them, so genesis's
optimizers take the ones PyTorch's do and record them in `defaults` (hence in every param
group and state dict), as PyTorch does.

What each means here:

- `foreach` (None, True, False) and `fused` (None, True, False) pick one of PyTorch's
  kernels. Genesis chooses its own (array by array on the CPU, one fused launch per group
  on a GPU), which computes the same update, so they are recorded and change nothing;
  only `fused=True` with `foreach=True` is refused, as in PyTorch.
- `capturable=True` (updates that can run inside a captured CUDA graph) and
  `differentiable=True` (autograd through `optimizer.step()`) are not supported: genesis
  updates the parameters' arrays in place, outside any graph. They are refused when the
  optimizer is built rather than silently ignored. A loaded state dict that carries them
  (from a CUDA run with capturable=True, say) is taken as it is: the update is the same.

>>> implementation_options("SGD", foreach=None, differentiable=False, fused=None)
{'foreach': None, 'differentiable': False, 'fused': None}
>>> implementation_options("Adam", capturable=True)
Traceback (most recent call last):
...
NotImplementedError: Adam(capturable=True) is not supported by genesis: ...
"""
from __future__ import annotations

__all__ = ["implementation_options"]

_UNSUPPORTED = {
    "capturable": "capturable=True lets PyTorch's update run inside a captured CUDA graph, and "
                  "genesis has no graph capture; pass capturable=False",
    "differentiable": "differentiable=True asks for autograd through optimizer.step(), and "
                      "genesis updates the parameters' arrays in place, outside the graph; pass "
                      "differentiable=False (or write the update with tensor ops yourself)",
}


def implementation_options(optimizer: str, **options) -> dict:
    """The implementation switches `optimizer` (its class name) was given, checked as
    PyTorch checks them and returned in order, to go into its defaults."""
    for name, why in _UNSUPPORTED.items():
        if options.get(name):
            raise NotImplementedError(f"{optimizer}({name}=True) is not supported by genesis: {why}")
    if options.get("fused") and options.get("foreach"):
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    return options

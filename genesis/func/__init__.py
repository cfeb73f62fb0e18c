"""Function transforms, as `torch.func`: `vmap`, `grad`, `grad_and_value`, `vjp`, `jvp`,
`linearize`, `jacrev`, `jacfwd`, `hessian`, `functional_call` and `stack_module_state`. They
compose: `vmap(grad(f))` gives per-sample gradients, `jacrev(jacrev(f))` second derivatives.

Genesis has no batching rules, so `vmap` loops over the samples, and `jvp`/`jacfwd` are
computed with reverse mode (they compose with `grad` and `vmap` that way; genesis's
forward-mode AD, genesis.autograd.forward_ad, is separate); the values and gradients are
PyTorch's.

>>> import genesis
>>> from genesis.func import grad, vmap
>>> vmap(grad(lambda x: (x ** 2).sum()))(genesis.tensor([[1., 2.], [3., 4.]]))
tensor([[2., 4.],
        [6., 8.]])
"""
from .module_calls import functional_call, stack_module_state
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .vmap import vmap

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd",
           "hessian", "functional_call", "stack_module_state"]

"""`compile` (PyTorch's `torch.compile`): genesis runs every op eagerly and has no compiler,
so compiling returns the module or function unchanged; its results are those of eager
execution, which is what `torch.compile` promises to preserve."""
from __future__ import annotations

__all__ = ["compile"]


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None,
            options=None, disable: bool = False):
    """`model` itself (a module or a function), or, called without it, a decorator that
    returns what it decorates.

    >>> import genesis
    >>> layer = genesis.nn.Linear(2, 1)
    >>> compile(layer) is layer
    True
    >>> @compile(mode="max-autotune")
    ... def double(x):
    ...     return x * 2
    >>> double(genesis.tensor(2.0)).item()
    4.0
    """
    if model is None:
        return lambda function: function
    return model

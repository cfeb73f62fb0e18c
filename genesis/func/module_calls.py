"""Calling a module with other tensors in place of its parameters and buffers:
`functional_call` and `stack_module_state`, as in `torch.func`.

>>> import genesis
>>> from genesis import nn
>>> layer = nn.Linear(2, 1)
>>> weights = {"weight": genesis.tensor([[1., 2.]]), "bias": genesis.tensor([0.5])}
>>> functional_call(layer, weights, (genesis.tensor([1., 1.]),))
tensor([3.5000])
"""
from __future__ import annotations

from ..nn.module import Module
from ..ops.join import stack

__all__ = ["functional_call", "stack_module_state"]


def functional_call(module: Module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """`module(*args, **kwargs)` with the named parameters and buffers of
    `parameter_and_buffer_dicts` (a dict of dotted name -> tensor, or a list of such dicts
    with no key in two of them) in place of the module's own, which are put back afterwards,
    even when the call raises. Gradients flow to the given tensors, not to the module's.

    `args` that is not a tuple is the single positional argument. With `tie_weights`, a
    tensor given for one name of a tied parameter (one shared under several names) is used
    for all of them. With `strict`, every parameter and buffer must be given and no other
    name. Other names (with `strict` off) are set as plain attributes for the call.

    >>> import genesis
    >>> from genesis import nn
    >>> layer = nn.Linear(1, 1)
    >>> functional_call(layer, {"weight": genesis.tensor([[3.]]), "bias": genesis.zeros(1)}, genesis.ones(1))
    tensor([3.])
    """
    given = _merge(parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs
    names = {}
    for table in (module.named_parameters(remove_duplicate=False),
                  module.named_buffers(remove_duplicate=False)):
        for name, tensor in table:
            names.setdefault(id(tensor), []).append(name)
    if tie_weights:
        given = _tie(given, [group for group in names.values() if len(group) > 1])
    if strict:
        known = {name for group in names.values() for name in group}
        unexpected = [name for name in given if name not in known]
        missing = [name for group in names.values() for name in group if name not in given]
        if unexpected or missing:
            lines = []
            if unexpected:
                lines.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
            if missing:
                lines.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                               + "\n\t".join(lines))
    saved = []
    try:
        for name, tensor in given.items():
            saved.append(_swap(module, name, tensor))
        return module(*args, **kwargs)
    finally:
        for owner, table, attribute, old in reversed(saved):
            _put_back(owner, table, attribute, old)


def stack_module_state(models) -> tuple:
    """`(params, buffers)`: each model's parameters and buffers stacked along a new first
    dim, by name, for `vmap(functional_call...)` over an ensemble of same-shaped models.
    Stacked parameters are new leaves (they require grad when the models' do).

    >>> from genesis import nn
    >>> params, buffers = stack_module_state([nn.Linear(3, 2) for _ in range(4)])
    >>> params["weight"].shape, params["bias"].shape
    (genesis.Size([4, 2, 3]), genesis.Size([4, 2]))
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if any(model.training != models[0].training for model in models):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(model) is not type(models[0]) for model in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    every_params = [dict(model.named_parameters()) for model in models]
    every_buffers = [dict(model.named_buffers()) for model in models]
    params = {name: _stacked_leaf([each[name] for each in every_params], name) for name in every_params[0]}
    buffers = {name: _stacked_leaf([each[name] for each in every_buffers], name) for name in every_buffers[0]}
    return params, buffers


def _stacked_leaf(tensors: list, name: str):
    requiring = [tensor.requires_grad for tensor in tensors]
    if any(requiring) and not all(requiring):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack([tensor.detach() for tensor in tensors])
    return result.requires_grad_() if all(requiring) else result


def _merge(dicts) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, (list, tuple)) or not all(isinstance(each, dict) for each in dicts):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(dicts)}")
    merged, repeated = {}, []
    for each in dicts:
        for name, tensor in each.items():
            if name in merged and name not in repeated:
                repeated.append(name)
            merged[name] = tensor
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional "
                         "call is ambiguous")
    return merged


def _tie(given: dict, groups: list) -> dict:
    """`given` with a tensor given for one name of a tied group used for every name of it."""
    given = dict(given)
    for group in groups:
        named = [name for name in group if name in given]
        if not named:
            continue
        if any(given[name] is not given[named[0]] for name in named[1:]):
            raise ValueError(f"functional_call got multiple values for keys {named}, which are "
                             "tied. Consider using tie_weights=False")
        for name in group:
            given[name] = given[named[0]]
    return given


_ABSENT = object()


def _swap(module: Module, name: str, tensor) -> tuple:
    """Put `tensor` at dotted `name`; returns what `_put_back` needs to undo it."""
    path, _, attribute = name.rpartition(".")
    owner = module.get_submodule(path)
    for table in (owner._parameters, owner._buffers):
        if attribute in table:
            old = table[attribute]
            table[attribute] = tensor
            return owner, table, attribute, old
    old = owner.__dict__.get(attribute, _ABSENT)
    object.__setattr__(owner, attribute, tensor)
    return owner, None, attribute, old


def _put_back(owner: Module, table, attribute: str, old) -> None:
    if table is not None:
        table[attribute] = old
    elif old is _ABSENT:
        object.__delattr__(owner, attribute)
    else:
        object.__setattr__(owner, attribute, old)

"""Nested containers of values ("pytrees"), as `torch.func` reads its arguments and results.

Tuples (named ones included), lists and dicts are containers; everything else is a leaf.
`flatten` lists the leaves in order with a `TreeSpec` that `unflatten` rebuilds from, and
`broadcast_prefix` matches a prefix tree (like vmap's `in_dims`) against a full one.

>>> leaves, spec = flatten((1, {"a": 2, "b": [3, 4]}))
>>> leaves
[1, 2, 3, 4]
>>> unflatten([x * 10 for x in leaves], spec)
(10, {'a': 20, 'b': [30, 40]})
>>> broadcast_prefix((0, None), (1, {"a": 2, "b": [3, 4]}))
[0, None, None, None]
"""
from __future__ import annotations

__all__ = ["TreeSpec", "flatten", "unflatten", "tree_map", "broadcast_prefix", "is_container"]


class TreeSpec:
    """The shape of a pytree: its container kind, keys (dict) and children's specs; a leaf's
    spec has kind None."""

    __slots__ = ("kind", "keys", "children")

    def __init__(self, kind, keys=None, children=()):
        self.kind, self.keys, self.children = kind, keys, tuple(children)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and self.kind is other.kind and self.keys == other.keys
                and self.children == other.children)

    def __hash__(self) -> int:
        return hash((self.kind, self.keys, self.children))

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(repr(child) for child in self.children)
        if self.kind is dict:
            inner = ", ".join(f"{key!r}: {child!r}" for key, child in zip(self.keys, self.children))
            return "{" + inner + "}"
        if self.kind is list:
            return f"[{inner}]"
        return f"{self.kind.__name__}({inner})"


LEAF = TreeSpec(None)


def is_container(value) -> bool:
    return isinstance(value, (tuple, list, dict))


def _children(value) -> tuple:
    """(kind, keys, children) of a container."""
    if isinstance(value, dict):
        keys = tuple(value)
        return type(value), keys, [value[key] for key in keys]
    return type(value), None, list(value)


def flatten(tree) -> tuple:
    """`(leaves, spec)`: the leaves in depth-first order and the structure around them."""
    leaves: list = []
    return leaves, _flatten_into(tree, leaves)


def _flatten_into(tree, leaves: list) -> TreeSpec:
    if not is_container(tree):
        leaves.append(tree)
        return LEAF
    kind, keys, children = _children(tree)
    return TreeSpec(kind, keys, [_flatten_into(child, leaves) for child in children])


def unflatten(leaves, spec: TreeSpec):
    """Rebuild the pytree of `spec` from `leaves` (in `flatten`'s order)."""
    leaves = iter(leaves)
    return _build(spec, leaves)


def _build(spec: TreeSpec, leaves):
    if spec.kind is None:
        return next(leaves)
    children = [_build(child, leaves) for child in spec.children]
    if issubclass(spec.kind, dict):
        return spec.kind(zip(spec.keys, children))
    if issubclass(spec.kind, tuple) and hasattr(spec.kind, "_fields"):  # a namedtuple
        return spec.kind(*children)
    return spec.kind(children)


def tree_map(fn, tree):
    """`tree` with `fn` applied to every leaf."""
    leaves, spec = flatten(tree)
    return unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix, tree, what: str = "prefix") -> list:
    """One value of `prefix` per leaf of `tree`: where `prefix` has a leaf, it stands for the
    whole subtree of `tree` there. Raises ValueError when `prefix` is not a prefix of `tree`."""
    out: list = []
    work = [(prefix, tree)]
    while work:
        head, sub = work.pop()
        if not is_container(head):
            out.extend([head] * len(flatten(sub)[0]))
            continue
        head_kind, head_keys, head_children = _children(head)
        if not is_container(sub):
            raise ValueError(f"{what} has structure {flatten(head)[1]!r} but the value has "
                             f"structure {flatten(sub)[1]!r}")
        kind, keys, children = _children(sub)
        same_kind = (issubclass(head_kind, dict) and issubclass(kind, dict)) or (
            issubclass(head_kind, list) == issubclass(kind, list) and not issubclass(kind, dict)
            and not issubclass(head_kind, dict))
        if not same_kind or len(head_children) != len(children) or (
                keys is not None and set(keys) != set(head_keys)):
            raise ValueError(f"{what} has structure {flatten(head)[1]!r} but the value has "
                             f"structure {flatten(sub)[1]!r}")
        if keys is not None:
            head_children = [head[key] for key in keys]
        work.extend(reversed(list(zip(head_children, children))))
    return out

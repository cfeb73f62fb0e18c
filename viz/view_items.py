"""What a drawing is made of: `Item`s (a graph node, a folded module, repeated blocks or a
compressed run of ops) and the `View` that holds them with the edges between them
(`viz.collapse` chooses them, `viz.dot` draws them).

>>> Item("n3", "node", None, [3], "MulBackward").members
[3]
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Item", "View", "MIN_CHAIN"]

MIN_CHAIN = 4   # runs of ops shorter than this are drawn as they are


@dataclass(slots=True)
class Item:
    """One drawn node: a graph node ('node'), a folded module ('module'), repeated
    blocks ('repeat') or a compressed run of ops ('chain')."""

    key: str
    kind: str
    cluster: str | None           # module path of the cluster it sits in; None: top level
    members: list = field(default_factory=list)   # graph node ids it stands for
    title: str = ""
    count: int = 1                # blocks merged into a 'repeat'
    uses: tuple | None = None     # (k, n): the k-th of n copies of a shared leaf


@dataclass
class View:
    items: dict                   # key -> Item, in drawing order
    edges: dict                   # (src key, dst key) -> [shape of each graph edge]
    notes: list                   # what was folded, said in the picture

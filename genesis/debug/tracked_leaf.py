"""`Tracked`: one leaf a `ParamWatch` follows, with its name, its norm history and why it is
expected to get gradients."""
from __future__ import annotations

from dataclasses import dataclass, field

from .norm_history import NormHistory

__all__ = ["Tracked"]


@dataclass(eq=False)
class Tracked:
    """One tracked leaf: its name in reports (`rank` says how good a name it is: 2 a module
    path, 1 a variable name, 0 a position), the tensor, its history, and why it is expected
    to get gradients (`roles`: "optimizer", "module")."""

    name: str
    tensor: object
    history: NormHistory
    rank: int = 1
    roles: set = field(default_factory=set)
    optimizer: str | None = None   # "SGD (lr=3.0) made at train.py:8", when one was given it
    optimizer_site: object = None  # the SourceLocation of that line
    unregistered: bool = False     # a module's, held in a plain list/dict: not in parameters()
    never_trains: bool = False     # of a layer built anew in each forward (forward_builds)
    grad_set_by_hand: bool = False  # no backward reached it, yet its optimizer stepped on a .grad
    differentiated_away: bool = False  # no backward reached it: it drops out of the derivative
    #                                    (create_graph) the loss is built from

    @property
    def is_parameter(self) -> bool:
        return bool(self.roles) or self.rank == 2

"""How the activations one module call ran are named (`genesis.debug.activation_watch`): by
their role in a recurrent layer's time step, and as one layer at each turn of a loop over
time steps, not by their order in the call alone.

>>> unit_words("l1_reverse"), unit_words("")
(" of layer 1's reverse direction", '')
"""
from __future__ import annotations

from ..autograd.function import AccumulateGrad
from .activation_figures import kind_of

__all__ = ["computed_from", "roles", "unit_words"]


def computed_from(node, call, earlier: set, budget: int = 64):
    """What the input of `node` (an activation's grad_fn, run in the module call `call`) is
    computed from in that call's forward, as (what, where), or None where it reaches nothing
    (made from the forward's inputs alone, or beyond `budget` ops).

    The walk goes back through the forward's own ops, nearest first, and stops at an inner
    module's output, a leaf (a parameter), an activation, and the inputs of the activations
    walked from before (`earlier`, ids of nodes; this walk's own are added). `what`:
    ("modules", the ids of the modules and leaves reached) or, where it reaches none,
    ("activations", the names of the activations reached: an LSTM cell state's tanh is made
    from gates only). `where`: the ids of the module calls, of the ops taking a leaf and of the
    activations reached, all made anew each time a layer runs again.

    Two ops of one call with the same `what` (and op, and line) and no `where` in common are
    the same layer run again, as at each turn of a loop over time steps; layers in a loop
    differ in their modules or parameters, and two gates cut from one product share it.

    >>> import genesis
    >>> from genesis.autograd.module_scope import running
    >>> class Loop(genesis.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc, self.other = genesis.nn.Linear(2, 2), genesis.nn.Linear(2, 2)
    ...     def forward(self, x):
    ...         earlier = set()
    ...         return [computed_from(y.grad_fn, running.call, earlier)
    ...                 for y in (self.fc(x).relu(), self.fc(x).relu(), self.other(x).relu())]
    >>> (what, where), (again, elsewhere), (other, _) = Loop()(genesis.ones(1, 2))
    >>> what[0], what == again, not where & elsewhere, what == other
    ('modules', True, True, False)
    """
    modules, activations, where = set(), set(), set()
    waiting, seen, position = list(node._next_nodes), set(), 0
    earlier.update(id(child) for child in waiting)
    while position < len(waiting):
        child = waiting[position]
        position += 1
        if child is None or id(child) in seen:
            continue
        if len(seen) >= budget:
            return None
        seen.add(id(child))
        if type(child) is AccumulateGrad:  # a parameter taken as it is: `self.scale.tanh()`
            modules.add(id(child))
            where.add(id(node))
            continue
        made_in = child._module_call
        if made_in is not call:
            outer = made_in
            while outer is not None and outer is not call:
                outer = outer[1]
            if outer is call and made_in[0] is not call[0]:  # an inner module's output
                modules.add(id(made_in[0]))
                where.add(made_in[2])
            continue  # else made before the call: one of its inputs (or a leaf, no call)
        kind, op = kind_of(child)
        if kind != "other":
            activations.add(op)
            where.add(id(child))
            continue
        for grandchild in child._next_nodes:
            if type(grandchild) is AccumulateGrad:
                modules.add(id(grandchild))
                where.add(id(child))
            elif grandchild is not None and id(grandchild) not in earlier:
                waiting.append(grandchild)
    if modules:
        return ("modules", frozenset(modules)), frozenset(where)
    return (("activations", frozenset(activations)), frozenset(where)) if activations else None


def unit_words(unit: str | None) -> str:
    """" of layer 1's reverse direction" for the unit "l1_reverse"; "" for none or the only one."""
    if not unit:
        return ""
    layer, _, reverse = unit[1:].partition("_")
    return f" of layer {layer}" + ("'s reverse direction" if reverse else "")


def roles(pending: list, output) -> list:
    """(activation, label) of each activation a module call's forward ran, but its `output`:
    the op's name, numbered ("tanh#2") among the ops of that name. A recurrent layer's ops
    are numbered within their time step, under their unit ("l1_reverse.sigmoid#3": the third
    sigmoid of each step of layer 1's reverse direction). Other ops share a label with an
    earlier one of the same name and line, computed from the same modules or parameters but
    from none of its module calls, products or activations (`computed_from`): the same layer
    at another turn of a loop over time steps (`h = self.fc(x[:, t]).relu()`), where a loop
    over layers computes from other parameters at each turn, and two gates cut from one
    product share that product."""
    counts, step_counts, labels, found = {}, {}, {}, []
    for inline in pending:
        if inline is output:
            continue
        if inline.step is not None:
            _, unit, index = inline.step
            role = (unit, index, inline.op)
            number = step_counts[role] = step_counts.get(role, 0) + 1
            label = (f"{unit}." if unit else "") + inline.op + (f"#{number}" if number > 1 else "")
            found.append((inline, label))
            continue
        label = same = None
        if inline.inputs is not None:
            what, where = inline.inputs
            same = labels.setdefault(
                (inline.op, inline.source.frames[0] if inline.source is not None else None,
                 what), [])
            for taken in same:  # [label, where of every op under it]
                if not taken[1] & where:
                    label = taken[0]
                    taken[1] = taken[1] | where
                    break
        if label is None:
            number = counts[inline.op] = counts.get(inline.op, 0) + 1
            label = inline.op + (f"#{number}" if number > 1 else "")
            if same is not None:
                same.append([label, where])
        found.append((inline, label))
    return found

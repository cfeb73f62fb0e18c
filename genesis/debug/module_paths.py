"""Dotted module paths of the module calls ops ran in, named as `record()` names them.

Every op that joins a graph remembers the module call it ran in (a tuple
`(module, outer call, order)`, see `genesis.autograd.module_scope`). A call's path
is relative to the outermost module called (`""` for that one), following
`named_modules()`: "encoder.layers.0.attn". A module called again within one call
of the outermost module (an RNN cell in a loop, a layer used twice) gets a path of
its own per call, "cell", "cell#2", "cell#3", with its submodules below
("cell#2.inp"); calls are numbered in the order they started, among the calls
given (and the calls around them). A module outside the outermost one's tree (made
inside `forward`) is named by its class under the call that ran it.

>>> import genesis
>>> from genesis import nn
>>> class Twice(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.cell = nn.Linear(2, 2)
...     def forward(self, x):
...         return self.cell(self.cell(x))
>>> y = Twice()(genesis.ones(1, 2))
>>> calls = [y.grad_fn._module_call, y.grad_fn.next_functions[0][0]._module_call]
>>> paths, classes = module_paths(calls)
>>> [paths[call[2]] for call in calls], classes["cell#2"]
(['cell#2', 'cell'], 'Linear')
"""
from __future__ import annotations

__all__ = ["module_paths"]


def module_paths(calls, root_prefix=None) -> tuple:
    """({call's order: dotted path}, {path: class name}) of the module calls `calls` (tuples
    `(module, outer call, order)`) and of the calls they ran inside; the class names cover
    every module of each outermost module's tree too. `root_prefix(module)` gives the path
    of an outermost module ("" when not given: paths relative to it; see
    `genesis.debug.names.RootModules` for the names it gives beside other models)."""
    known = {}
    for call in calls:
        while call is not None and call[2] not in known:
            known[call[2]] = call
            call = call[1]
    paths, classes = {}, {}
    registered = {}  # call's order -> the module's path in the outermost module's tree
    trees = {}       # outermost call's order -> {id(submodule): registered path}
    outermost = {}   # call's order -> its outermost call's order
    counts = {}      # (outermost call's order, path before numbering) -> calls so far
    for order in sorted(known):  # an outer call starts before the calls inside it
        module, outer, _ = known[order]
        class_name = type(module).__name__
        if outer is None:
            prefix = root_prefix(module) if root_prefix is not None else ""
            tree = trees[order] = {}
            for name, submodule in module.named_modules():
                path = f"{prefix}.{name}" if prefix and name else (name or prefix)
                tree[id(submodule)] = path
                classes[path] = type(submodule).__name__
            top, static, base = order, prefix, prefix
        else:
            outer_order = outer[2]
            top = outermost[outer_order]
            outer_path, outer_static = paths[outer_order], registered[outer_order]
            static = trees[top].get(id(module))
            if static is None:
                static = f"{outer_path}.{class_name}" if outer_path else class_name
                classes.setdefault(static, class_name)
            base = static
            if outer_static and static.startswith(outer_static + "."):
                base = outer_path + static[len(outer_static):]
        number = counts[top, base] = counts.get((top, base), 0) + 1
        path = base if number == 1 else f"{base}#{number}"
        classes.setdefault(path, classes.get(static, class_name))
        paths[order], registered[order], outermost[order] = path, static, top
    return paths, classes

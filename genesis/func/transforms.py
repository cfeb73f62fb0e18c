"""Function transforms built on genesis's reverse mode: `grad`, `grad_and_value`, `vjp`,
`jvp`, `linearize`, `jacrev`, `jacfwd` and `hessian`, as in `torch.func`.

Each call runs the function on private copies of the differentiated inputs (fresh leaves
that require grad, or aliases of inputs that already do) and asks the engine for their
gradients. The gradients keep a graph, so the transforms compose (`grad(grad(f))`,
`jacrev(jacrev(f))`, `vmap(grad(f))`), exactly when something outside the call needs it:
an input or a captured tensor that requires grad while grad mode is on.

>>> import genesis
>>> x = genesis.tensor([1., 2.])
>>> grad(lambda x: (x ** 3).sum())(x)
tensor([ 3., 12.])
>>> grad(grad(lambda x: x ** 3))(genesis.tensor(2.))
tensor(12.)
"""
from __future__ import annotations

import functools

from ..autograd.engine import grad as engine_grad
from ..autograd.function import AccumulateGrad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..creation import zeros, zeros_like
from ..ops.join import stack
from ..tensor import Tensor
from .pytree import flatten, tree_map, unflatten
from .vmap import RANDOMNESS

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """Like `grad`, but the function returns `(gradient, value)` (with `has_aux`:
    `(gradient, (value, aux))`).

    >>> import genesis
    >>> grad_and_value(lambda x: (x ** 2).sum())(genesis.tensor([1., 2.]))
    (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def transformed(*args, **kwargs):
        where = f"grad_and_value({_name(func)})(*args)"
        outer = is_grad_enabled()
        with enable_grad():
            output, aux, leaves, specs, private = _call_tracked(func, args, kwargs, argnums,
                                                                has_aux, where)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{where}: Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{where}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use the "
                                   "vjp or jacrev APIs instead?")
            keep = outer and _reaches_outside([output], private)
            grads = _gradients([output], leaves, [None], keep)
        gradient = _regroup(grads, specs, argnums)
        value = _release(output, private, keep)
        if has_aux:
            return gradient, (value, tree_map(lambda leaf: _release(leaf, private, outer), aux))
        return gradient, value

    return transformed


def grad(func, argnums=0, has_aux: bool = False):
    """The gradient of a function returning a scalar tensor, w.r.t. the argument(s)
    `argnums` (an int, or a tuple giving a tuple of gradients); an argument may be a
    tuple/list/dict of tensors, and its gradient has the same structure. With `has_aux`,
    `func` returns `(output, aux)` and the transform returns `(gradient, aux)`.

    >>> import genesis
    >>> grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(genesis.tensor([1., 2.]), genesis.tensor([3., 4.]))
    (tensor([3., 4.]), tensor([1., 2.]))
    """
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def transformed(*args, **kwargs):
        gradient, value = both(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return transformed


def vjp(func, *primals, has_aux: bool = False):
    """`(func(*primals), vjp_fn)`: `vjp_fn(cotangents)` returns the vector-Jacobian product
    for each primal, as a tuple (one entry per primal, shaped like it). `cotangents` has the
    structure of the output. With `has_aux`, a third item: the aux output.

    >>> import genesis
    >>> out, vjp_fn = vjp(lambda x: x ** 2, genesis.tensor([1., 2.]))
    >>> vjp_fn(genesis.ones(2))
    (tensor([2., 4.]),)
    """
    where = "vjp(f, *primals)"
    numbers = tuple(range(len(primals)))
    outer = is_grad_enabled()
    with enable_grad():
        args, leaves, specs, private = _track_args(primals, numbers)
        result, aux = _split_aux(func(*args), has_aux, where)
        outputs, output_spec = flatten(result)
        for output in outputs:
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{where}: expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(output)}")

    def vjp_fn(cotangents):
        vectors, spec = flatten(cotangents)
        if spec != output_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               f"structure of outputs to the function. cotangents: {spec!r}, "
                               f"primal output: {output_spec!r}")
        for index, (vector, output) in enumerate(zip(vectors, outputs)):
            if not isinstance(vector, Tensor) or vector.shape != output.shape:
                got = vector.shape if isinstance(vector, Tensor) else type(vector)
                raise RuntimeError(f"Mismatch in shape: grad_output[{index}] has a shape of {got} "
                                   f"and output[{index}] has a shape of {output.shape}.")
        keep = is_grad_enabled() and _reaches_outside(outputs + vectors, private)
        with enable_grad():
            grads = _gradients(outputs, leaves, vectors, keep)
        return _regroup(grads, specs, numbers)

    result = unflatten([_release(output, private, outer) for output in outputs], output_spec)
    if has_aux:
        return result, vjp_fn, tree_map(lambda leaf: _release(leaf, private, outer), aux)
    return result, vjp_fn


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """`(func(*primals), J @ tangents)`: the Jacobian-vector (forward-mode) product.

    Computed in reverse mode with the double-vjp trick (the vjp `u -> J^T u` is
    linear in `u`, so differentiating it w.r.t. `u` along `tangents` gives `J @ tangents`),
    which costs two backward passes. `strict` is accepted for PyTorch compatibility.

    >>> import genesis
    >>> jvp(lambda x: x ** 2, (genesis.tensor([1., 2.]),), (genesis.tensor([1., 0.]),))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    where = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{where}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"{where}: Expected tangents to be a tuple with the structure of "
                           "primals, one tangent per primal.")
    primal_leaves, primal_spec = flatten(primals)
    vectors, tangent_spec = flatten(tangents)
    if primal_spec != tangent_spec:
        raise RuntimeError(f"{where}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, tangents "
                           f"also must be. Got primals with structure {primal_spec!r} and tangents "
                           f"with structure {tangent_spec!r}")
    for primal, vector in zip(primal_leaves, vectors):
        if isinstance(primal, Tensor) and (not isinstance(vector, Tensor) or vector.shape != primal.shape):
            got = list(vector.shape) if isinstance(vector, Tensor) else type(vector)
            raise RuntimeError("Trying to set a forward gradient that has a different size than that "
                               "of the original Tensor, this is not supported. Tensor is of size "
                               f"{list(primal.shape)} while the given forward gradient is of size {got}.")
    outer = is_grad_enabled()
    with enable_grad():
        args, leaves, _, private = _track_args(primals, tuple(range(len(primals))))
        result, aux = _split_aux(func(*args), has_aux, where)
        outputs, output_spec = flatten(result)
        for output in outputs:
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{where}: expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(output)}")
        # J^T u for dummy cotangents u: its value does not matter, as it is linear in u.
        dummies = [zeros_like(output).requires_grad_() for output in outputs]
        private |= {id(dummy) for dummy in dummies}
        transposed = _gradients(outputs, leaves, dummies, keep=True)
        keep = outer and _reaches_outside(list(transposed) + vectors, private)
        products = _gradients(list(transposed), dummies, vectors, keep)
    result = unflatten([_release(output, private, outer) for output in outputs], output_spec)
    products = unflatten(products, output_spec)
    if has_aux:
        return result, products, tree_map(lambda leaf: _release(leaf, private, outer), aux)
    return result, products


def linearize(func, *primals) -> tuple:
    """`(func(*primals), jvp_fn)`: `jvp_fn(*tangents)` is the Jacobian-vector product of
    `func` at `primals`, as `torch.func.linearize`. Genesis keeps no linearized graph:
    each `jvp_fn` call is a `jvp` at the same primals (same values, more work).

    >>> import genesis
    >>> output, jvp_fn = linearize(lambda x: x ** 2, genesis.tensor([1., 2.]))
    >>> output, jvp_fn(genesis.tensor([1., 1.]))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    output = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None):
    """The Jacobian of `func` w.r.t. the argument(s) `argnums`, one backward per output
    element: for an output of shape S and an input of shape T, a tensor of shape S + T.
    Outputs and arguments may be tuples/lists/dicts of tensors; the result nests the
    arguments' structure (a tuple of them when `argnums` is a tuple) inside the output's.
    `chunk_size` is accepted for PyTorch compatibility (rows are computed one at a time).

    >>> import genesis
    >>> jacrev(lambda x: x ** 2)(genesis.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"jacrev: `chunk_size` should be greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def transformed(*args, **kwargs):
        where = f"jacrev({_name(func)})(*args)"
        outer = is_grad_enabled()
        with enable_grad():
            result, aux, leaves, specs, private = _call_tracked(func, args, kwargs, argnums,
                                                                has_aux, where)
            outputs, output_spec = flatten(result)
            for output in outputs:
                if not isinstance(output, Tensor):
                    raise RuntimeError(f"{where}: expected f(*args) to return only tensors, got "
                                       f"unsupported type {type(output)}")
            keep = outer and _reaches_outside(outputs, private)
            jacobians = [_regroup(_jacobian_of(output, leaves, keep), specs, argnums)
                         for output in outputs]
        jacobian = unflatten(jacobians, output_spec)
        if has_aux:
            return jacobian, tree_map(lambda leaf: _release(leaf, private, outer), aux)
        return jacobian

    return transformed


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """The Jacobian of `func` w.r.t. `argnums`, as `torch.func.jacfwd`, computed as `jacrev`
    does (reverse mode: the same values and layout, one backward per output element; genesis's
    forward-mode AD, genesis.autograd.forward_ad, is not used here); `randomness` is checked
    and otherwise changes nothing.

    >>> import genesis
    >>> jacfwd(lambda x: x.sin())(genesis.zeros(2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if randomness not in RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """The Hessian of a scalar function w.r.t. `argnums`: `jacfwd(jacrev(func))`.

    >>> import genesis
    >>> hessian(lambda x: (x ** 3).sum())(genesis.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


def _name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _call_tracked(func, args: tuple, kwargs: dict, argnums, has_aux: bool, where: str) -> tuple:
    """`func` called on private copies of the `argnums` arguments (call it with grad enabled):
    (result, aux, leaves, specs, private), as grad and jacrev differentiate them."""
    args, leaves, specs, private = _track_args(args, _argnums(argnums, len(args)))
    result, aux = _split_aux(func(*args, **kwargs), has_aux, where)
    return result, aux, leaves, specs, private


def _argnums(argnums, count: int) -> tuple:
    """`argnums` as a tuple of non-negative positions, checked as PyTorch does."""
    numbers = argnums if isinstance(argnums, tuple) else (argnums,)
    if isinstance(argnums, tuple) and not argnums:
        raise RuntimeError("argnums must be non-empty")
    for number in numbers:
        if not isinstance(number, int) or isinstance(number, bool):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(number)}")
        if not -count <= number < count:
            raise RuntimeError(f"Got argnum={number}, but only {count} positional inputs")
    numbers = tuple(number % count for number in numbers)
    if len(set(numbers)) != len(numbers):
        raise RuntimeError(f"argnums must be unique, got {argnums}")
    return numbers


def _track_args(args: tuple, numbers: tuple) -> tuple:
    """Swap the tensors of the arguments at `numbers` for private ones to differentiate
    against: `(args, leaves, specs, private ids)`, `specs[i]` the structure of argument
    `numbers[i]` and `leaves` all their tensors in order."""
    args = list(args)
    leaves, specs, private = [], [], set()
    for number in numbers:
        values, spec = flatten(args[number])
        tracked = []
        for value in values:
            if not isinstance(value, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(value)}")
            if value.requires_grad:
                copy = value.view_as(value)  # an alias: gradients flow on to the input
            else:
                copy = value.detach().requires_grad_()
                private.add(id(copy))
            tracked.append(copy)
        leaves.extend(tracked)
        specs.append((spec, len(tracked)))
        args[number] = unflatten(tracked, spec)
    return tuple(args), leaves, specs, private


def _split_aux(result, has_aux: bool, where: str) -> tuple:
    if not has_aux:
        return result, None
    if not isinstance(result, tuple) or len(result) != 2:
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return result


def _regroup(grads, specs: list, argnums):
    """Per-leaf results back into the arguments' structures: one structure for an int
    `argnums`, a tuple of them for a tuple."""
    grouped, start = [], 0
    for spec, count in specs:
        grouped.append(unflatten(grads[start:start + count], spec))
        start += count
    return tuple(grouped) if isinstance(argnums, tuple) else grouped[0]


def _reaches_outside(tensors: list, private: set) -> bool:
    """Whether the graph of `tensors` reaches a leaf requiring grad that is not one of ours:
    then the results must keep their graph for the caller (walked without recursion)."""
    nodes, seen = [], set()
    for tensor in tensors:
        if not isinstance(tensor, Tensor) or not tensor.requires_grad:
            continue
        if tensor.grad_fn is None:
            if id(tensor) not in private:
                return True
        else:
            nodes.append(tensor.grad_fn)
    while nodes:
        node = nodes.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if node.variable is not None and id(node.variable) not in private:
                return True
            continue
        nodes.extend(child for child in node._next_nodes if child is not None)
    return False


def _release(value, private: set, keep: bool):
    """An output handed back to the caller: detached unless its graph matters outside."""
    if not isinstance(value, Tensor) or not value.requires_grad:
        return value
    return value if keep and _reaches_outside([value], private) else value.detach()


def _gradients(outputs: list, inputs: list, vectors: list, keep: bool) -> list:
    """d(outputs . vectors)/d(inputs), zeros where an input is unused; with `keep`, the
    gradients carry a graph. The graph is always retained (it may be shared with tensors
    the caller still holds)."""
    used = [(output, vector) for output, vector in zip(outputs, vectors) if output.requires_grad]
    if used:
        found = engine_grad([output for output, _ in used], inputs,
                            [vector for _, vector in used], retain_graph=True,
                            create_graph=keep, allow_unused=True)
    else:
        found = [None] * len(inputs)
    return [zeros_like(tensor) if gradient is None else gradient
            for gradient, tensor in zip(found, inputs)]


def _jacobian_of(output: Tensor, leaves: list, keep: bool) -> list:
    """One Jacobian per leaf, shaped `output.shape + leaf.shape`."""
    count = output.numel()
    if count == 0 or not output.requires_grad:
        return [zeros(*output.shape, *leaf.shape, dtype=leaf.dtype, device=leaf.device)
                for leaf in leaves]
    flat = output.reshape(-1)
    rows = [[] for _ in leaves]
    for index in range(count):
        for row, gradient in zip(rows, _gradients([flat[index]], leaves, [None], keep)):
            row.append(gradient)
    return [stack(row).reshape(*output.shape, *leaf.shape) for row, leaf in zip(rows, leaves)]

"""What a node saved for backward, read the way PyTorch exposes it: `grad_fn._saved_<name>`,
`grad_fn._raw_saved_<name>` handles and their hooks, a custom Function's saved tensors, the
errors once the graph is freed or a saved tensor was detached, and the Function/ctx rules
around them. Each behaviour is compared with torch where it is installed."""
import gc
import weakref

import numpy as np
import pytest

import genesis
from genesis.autograd import saved_variables, tracking_modes
from genesis.compat import torch_C
from tests.helpers import torch_or_skip

FREED = "after they have already been freed"


def libraries():
    return [genesis, torch_or_skip()]


def leaf(lib, values=(0.5, -1.0, 2.0)):
    return lib.tensor(list(values), dtype=lib.float64, requires_grad=True)


def as_list(tensor):
    return np.asarray(tensor.detach().tolist()).tolist()


# -- _saved_<name> ------------------------------------------------------------------------

@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_saved_inputs_are_the_input_tensors_and_a_saved_output_is_a_new_tensor(lib):
    a = leaf(lib)
    b = a * a
    c = a * b
    d = a.exp()
    assert b.grad_fn._saved_self is a and b.grad_fn._saved_other is a
    assert c.grad_fn._saved_other is b          # an input made by another node: itself too
    result = d.grad_fn._saved_result
    assert result is not d and as_list(result) == as_list(d)
    assert result.grad_fn is d.grad_fn          # linked to the node that saved it
    c.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        c.grad_fn._saved_self


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_a_saved_number_is_read_back_and_an_unknown_name_is_an_attribute_error(lib):
    a = leaf(lib)
    y = a ** 2
    assert y.grad_fn._saved_self is a
    assert y.grad_fn._saved_exponent == 2
    assert not hasattr(y.grad_fn, "_saved_nothing_of_that_name")
    with pytest.raises(AttributeError):
        y.grad_fn._raw_saved_exponent             # a number has no handle


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_a_saved_output_shares_the_outputs_version_counter(lib):
    y = leaf(lib).exp()
    saved = y.grad_fn._saved_result
    with lib.no_grad():
        y += 1
    assert saved._version == y._version == 1
    assert as_list(saved) == as_list(y)


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_a_division_saves_its_operands_so_its_output_may_be_written_in_place(lib):
    # (a / b).detach() shares the output's version counter: a clamp_ there must not refuse
    # the backward, since the gradient reads only a and b
    a, b = leaf(lib), leaf(lib, (2.0, 4.0, -8.0))
    ratio = a / b
    ratio.detach().clamp_(-0.1, 0.1)
    ratio.sum().backward()
    assert as_list(a.grad) == [0.5, 0.25, -0.125]
    assert np.allclose(as_list(b.grad), [-0.125, 0.0625, -0.03125])


def test_genesis_names_saved_values_by_position_unless_the_op_declares_them():
    a = leaf(genesis)
    assert saved_variables.saved_names((a * a).grad_fn) == ("self", "other", None)
    assert saved_variables.saved_names(a.exp().grad_fn) == ("result",)
    assert saved_variables.saved_names((a ** 2).grad_fn) == ("self", "exponent", "result")
    with pytest.raises(AttributeError, match="it saved _saved_self, _saved_other"):
        (a * a).grad_fn._saved_result


# -- _raw_saved_<name>: the handles -------------------------------------------------------

@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_a_handle_shows_what_is_kept_and_the_unpack_hook(lib):
    def pack(t):
        return t

    def unpack(t):
        return t

    a = lib.tensor(2.0, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        b = a ** 2
    c = b.exp()
    d = c ** 2
    # (handles are read in place: torch's must not outlive their node)
    assert b.grad_fn._raw_saved_self.data is a
    assert b.grad_fn._raw_saved_self.unpack_hook is unpack
    assert c.grad_fn._raw_saved_result.data is not c
    assert c.grad_fn._raw_saved_result.unpack_hook is None
    assert d.grad_fn._raw_saved_self.data is c
    assert d.grad_fn._raw_saved_self.unpack_hook is None


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
@pytest.mark.parametrize("make", [lambda lib: leaf(lib), lambda lib: leaf(lib) * 1],
                         ids=["leaf", "non-leaf"])
def test_hooks_set_on_one_saved_tensor_change_only_that_value(lib, make):
    a = make(lib)
    y = a * a
    y.grad_fn._raw_saved_self.register_hooks(lambda t: 3 * t, lambda t: t)
    assert as_list(y.grad_fn._saved_self) == as_list(3 * a)
    if a.grad_fn is not None:
        assert y.grad_fn._saved_self.grad_fn is a.grad_fn
    (grad,) = lib.autograd.grad(y.sum(), a)
    assert as_list(grad) == as_list(4 * a)        # self is now 3a, other still a


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_hooks_on_a_saved_tensor_work_under_double_backward(lib):
    a = leaf(lib)
    y = a ** 3
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    (g,) = lib.autograd.grad(y.sum(), a, create_graph=True)
    g.sum().backward()
    assert np.allclose(as_list(a.grad), as_list(6 * a))


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_register_hooks_refusals(lib):
    a = leaf(lib)
    y = a * a
    with pytest.raises(TypeError, match="incompatible function arguments"):
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        y.grad_fn._raw_saved_self.register_hooks(1, 1)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(RuntimeError, match="already been set"):
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    z = a * a
    z.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: 1)
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        z.grad_fn._saved_self


def test_a_pack_hook_that_fails_sets_nothing():
    # genesis only: torch 2.13 leaves such a saved tensor half set up, and its garbage
    # collector later crashes on it (the errors themselves are PyTorch's)
    a = leaf(genesis)
    y = a * a
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        y.grad_fn._raw_saved_self.register_hooks(lambda t, extra: t, lambda t: t)
    assert y.grad_fn._raw_saved_self.unpack_hook is None and y.grad_fn._saved_self is a

    def doubles_in_place(t):
        t *= 2
        return t

    with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
        y.grad_fn._raw_saved_self.register_hooks(doubles_in_place, lambda t: t)
    with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
        a.exp().grad_fn._raw_saved_result.register_hooks(doubles_in_place, lambda t: t)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.grad_fn._saved_self                     # the hook did change it


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_a_saved_output_with_hooks_keeps_its_place_in_the_graph(lib):
    a = leaf(lib)
    y = a.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
    assert y.grad_fn._saved_result.grad_fn is y.grad_fn
    y.sum().backward()
    assert np.allclose(as_list(a.grad), as_list(y))


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_a_handle_made_outside_a_graph_packs_once_and_unpacks_at_each_read(lib):
    make = (saved_variables.make_saved_tensor if lib is genesis else
            lib._C._autograd._make_saved_tensor)
    calls = []
    a = leaf(lib)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: calls.append("pack") or t,
                                                lambda t: calls.append("unpack") or t):
        saved = make(a, is_output=False)
        first, second = saved.unpack(), saved.unpack()
    assert calls == ["pack", "unpack", "unpack"]
    assert as_list(first) == as_list(second) == as_list(a)


# -- custom Functions ---------------------------------------------------------------------

def keeper(lib, save):
    class Keep(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            if save:
                ctx.save_for_backward(x, None)
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad

    return Keep


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_custom_function_saved_tensors_and_their_handles(lib):
    a = leaf(lib)
    y = keeper(lib, True).apply(a)
    x, none = y.grad_fn.saved_tensors
    assert x is a and none is None
    raw = y.grad_fn._raw_saved_tensors
    assert len(raw) == 2 and all(isinstance(h, lib._C._autograd.SavedTensor if lib is not genesis
                                            else saved_variables.SavedTensor) for h in raw)
    with pytest.raises(RuntimeError, match="None is forbidden"):
        raw[1].register_hooks(lambda t: t, lambda t: t)
    del raw  # torch's handles must not outlive what they refer to
    y.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn._raw_saved_tensors
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn.saved_tensors
    empty = keeper(lib, False).apply(a)
    assert empty.grad_fn.saved_tensors == () and empty.grad_fn._raw_saved_tensors == ()


def once(lib, reads, seen):
    class Once(lib.autograd.Function):
        clear_saved_tensors_on_access = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            seen.append(weakref.ref(x))
            del x
            seen.append(seen[-1]())  # the tensor, or None once the node no longer holds it
            for _ in range(reads - 1):
                ctx.saved_tensors
            return grad

    return Once


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_clear_saved_tensors_on_access_hands_the_tensors_over_once(lib):
    seen = []
    once(lib, 1, seen).apply(leaf(lib).clone()).sum().backward()
    assert seen[1] is None
    with pytest.raises(RuntimeError, match="can only be accessed once"):
        once(lib, 2, []).apply(leaf(lib)).sum().backward()


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_saved_variables_is_the_deprecated_name_of_saved_tensors(lib):
    class Add(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x + y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_variables
            return grad, grad

    with pytest.warns(DeprecationWarning, match="saved_variables"):
        Add.apply(leaf(lib), leaf(lib)).sum().backward()


def test_an_instance_of_a_function_warns_and_has_no_node_attributes():
    # genesis only: torch's instances answer some of these, and crash its garbage collector
    lib = genesis

    class Id(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = Id()
    assert isinstance(f, Id)
    for name in ("next_functions", "_input_metadata"):
        with pytest.raises(RuntimeError, match=f"Attribute '{name}' is invalid"):
            getattr(f, name)
    with pytest.raises(RuntimeError, match="Attribute 'register_hook' is invalid"):
        f.register_hook(lambda *args: None)
    with pytest.raises(RuntimeError, match="Attribute 'name' is invalid"):
        f.name()
    with pytest.raises(RuntimeError, match="PyNode has already been deallocated"):
        f.metadata
    with pytest.raises(RuntimeError, match="non-static forward method is deprecated"):
        f(leaf(lib))
    assert Id.apply(leaf(lib)).grad_fn.name() == "IdBackward"


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_a_dirty_view_saved_by_a_function_is_not_kept_alive(lib):
    class Touch(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    def scope():
        x = lib.tensor(1.0, requires_grad=True).clone()
        x = x.view_as(x)
        Touch.apply(x)
        return weakref.ref(x)

    gc.disable()  # freed by reference counting alone, with no cycle to collect
    try:
        assert scope()() is None
    finally:
        gc.enable()


# -- errors around saved tensors ----------------------------------------------------------

@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_a_saved_input_detached_in_place_is_refused_a_saved_output_is_not(lib):
    a = leaf(lib).clone()
    b = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError, match="saved tensor that has been detached"):
        b.sum().backward()
    a = leaf(lib).clone()
    b = a.exp()
    a.detach_()
    b.sum().backward()


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_advanced_indexing_saves_its_indices_so_a_second_backward_is_refused(lib):
    b = leaf(lib)
    c = lib.zeros(3, dtype=lib.float64)
    c[[1, 2]] = b[[1, 1]]
    c.sum().backward()
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        c.sum().backward()
    sliced = b[1:].sum()                          # a basic key saves nothing
    sliced.backward()
    sliced.backward()


# -- version counters and cached tensors --------------------------------------------------

@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_unsafe_set_version_counter(lib):
    set_version = (tracking_modes._unsafe_set_version_counter if lib is genesis else
                   lib._C._autograd._unsafe_set_version_counter)
    x = lib.ones(2)
    x.add_(1)
    x.add_(1)
    set_version((x,), (0,))
    assert x._version == 0
    with pytest.raises(RuntimeError, match="Cannot set"):
        set_version((x,), (-1,))


@pytest.mark.parametrize("lib", libraries(), ids=["genesis", "torch"])
def test_a_tensor_cached_twice_and_removed_once_is_not_cached(lib):
    C = torch_C if lib is genesis else lib._C
    C._set_cached_tensors_enabled(True)
    try:
        x = lib.ones(4)
        C._add_cached_tensor(x)
        assert C._is_cached_tensor(x)
        C._add_cached_tensor(x)
        C._remove_cached_tensor(x)
        assert not C._is_cached_tensor(x)
    finally:
        C._set_cached_tensors_enabled(False)


def test_dir_of_a_node_lists_its_saved_values_as_torchs():
    """dir(grad_fn) lists `_saved_<name>`/`_raw_saved_<name>` (torchviz's show_saved finds
    them so), for tensors saved by an op as PyTorch names them."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    listed = []
    for lib in (genesis, torch):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        nodes = ((a * b).grad_fn, a.exp().grad_fn, a.sigmoid().grad_fn)
        listed.append([sorted(name for name in dir(node) if name.startswith(("_saved_", "_raw_saved_"))
                              and "sym" not in name) for node in nodes])
    assert listed[0] == listed[1]
    assert listed[0][0] == ["_raw_saved_other", "_raw_saved_self", "_saved_other", "_saved_self"]

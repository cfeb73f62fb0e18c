"""Small pieces of PyTorch's autograd surface, each compared with PyTorch: deleting tensor
attributes, `_backward_hooks`, `grad_dtype`, the legacy type classes, `volatile`, the private
unique functions, grad modes on generators that get `throw()`/`close()`, Function's vmap
defaults and `torch.autograd._functions.Resize`."""
import collections

import numpy as np
import pytest

import genesis
from genesis.compat import serve_torch
from tests.helpers import torch_or_skip

LIBRARIES = ["genesis", "torch"]


def library(name: str):
    return genesis if name == "genesis" else torch_or_skip()


# -- deleting attributes -----------------------------------------------------------------------

@pytest.mark.parametrize("name", LIBRARIES)
def test_attribute_deletion_as_in_pytorch(name):
    lib = library(name)
    x = lib.ones(2, 2, requires_grad=True)
    (x * 2).sum().backward()
    assert x.grad is not None
    del x.grad
    assert x.grad is None
    for attribute in ("data", "requires_grad", "_grad_fn", "_backward_hooks"):
        with pytest.raises(RuntimeError):
            delattr(x, attribute)
    with pytest.raises(TypeError):
        x.data = None
    assert x.requires_grad and x.shape == (2, 2)


@pytest.mark.parametrize("name", LIBRARIES)
def test_backward_hooks_assigned_as_a_dict(name):
    lib = library(name)
    x, y = lib.ones(2), lib.ones(2)
    z = lib.ones(2, requires_grad=True)
    a = x + y
    assert a._backward_hooks is None

    def never(grad):
        raise AssertionError("a tensor that does not require grad gets no gradient")

    for tensor in (a, x, y):
        tensor._backward_hooks = collections.OrderedDict()
        tensor._backward_hooks["never"] = never
    (a + z).sum().backward()
    assert z.grad.tolist() == [1.0, 1.0]


def test_backward_hooks_assigned_to_a_leaf_run_and_read_back():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        seen = []
        w = lib.ones(2, requires_grad=True)
        w._backward_hooks = {"double": lambda g: seen.append("double") or g * 2}
        (w * 3).sum().backward()
        assert seen == ["double"] and w.grad.tolist() == [6.0, 6.0], lib.__name__
    w = genesis.ones(2, requires_grad=True)
    hook = lambda g: None  # noqa: E731
    w.register_hook(hook)
    assert list(w._backward_hooks.values()) == [hook]
    with pytest.raises(RuntimeError, match="register_hook"):
        (w * 2)._backward_hooks = {}


# -- grad_dtype -------------------------------------------------------------------------------

class _ToDouble:
    """A Function whose backward returns a float64 gradient whatever the input's dtype."""

    @staticmethod
    def make(lib):
        class ToDouble(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad.to(lib.float64)

        return ToDouble


@pytest.mark.parametrize("name", LIBRARIES)
def test_grad_dtype_defaults_sets_and_is_for_leaves(name):
    lib = library(name)
    leaf = lib.tensor([1.0, 2.0], requires_grad=True)
    assert leaf.grad_dtype == lib.float32
    leaf.grad_dtype = lib.float16
    assert leaf.grad_dtype == lib.float16
    leaf.grad_dtype = None
    assert leaf.grad_dtype is None
    with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf tensors"):
        _ = (leaf * 2).grad_dtype
    with pytest.raises(RuntimeError, match="grad_dtype can only be set on leaf tensors"):
        (leaf * 2).grad_dtype = lib.float16


@pytest.mark.parametrize("name", LIBRARIES)
def test_grad_dtype_governs_assigned_and_accumulated_gradients(name):
    lib = library(name)
    to_double = _ToDouble.make(lib)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x.grad_dtype = lib.float16
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype.*float.*"
                                           "to a tensor with grad_dtype.*Half"):
        x.grad = lib.tensor([1.0, 1.0])
    x.grad_dtype = None
    x.grad = lib.tensor([1.0, 1.0], dtype=lib.float64)
    assert x.grad.dtype == lib.float64

    results = {}
    for setting in ("default", None, lib.float16):
        leaf = lib.tensor([3.0, 4.0], requires_grad=True)
        if setting != "default":
            leaf.grad_dtype = setting
        to_double.apply(leaf).sum().backward()
        results[setting] = leaf.grad
    assert results["default"].dtype == lib.float32
    assert results[None].dtype == lib.float64
    assert results[lib.float16].dtype == lib.float16
    assert all(grad.tolist() == [1.0, 1.0] for grad in results.values())

    g = lib.tensor([1.0, 2.0], requires_grad=True)
    g.grad = lib.tensor([1.0, 1.0])
    g.grad_dtype = lib.float32
    with pytest.raises(RuntimeError, match="Cannot set grad_dtype.*because there is already a gradient"):
        g.grad_dtype = lib.float16
    g.grad_dtype = None
    g.grad = None
    g.grad_dtype = lib.float16
    assert g.grad_dtype == lib.float16

    k = lib.tensor([1.0, 2.0], requires_grad=True)
    k.grad_dtype = None
    (k * 2).sum().backward()
    k.grad = k.grad.to(lib.float16)
    (k * 3).sum().backward()  # added into the existing gradient, in its dtype
    assert k.grad.dtype == lib.float16 and k.grad.tolist() == [5.0, 5.0]


# -- legacy types, volatile, private functions ---------------------------------------------

@pytest.mark.parametrize("name", LIBRARIES)
def test_legacy_type_classes_have_a_dtype_and_convert(name):
    lib = library(name)
    x = lib.randn(3, 3)
    for legacy, dtype in ((lib.DoubleTensor, lib.float64), (lib.FloatTensor, lib.float32),
                          (lib.IntTensor, lib.int32), (lib.ByteTensor, lib.uint8)):
        assert legacy.dtype == dtype
        assert isinstance(x.type(legacy), legacy)
        assert x.type(legacy).dtype == dtype
        y = lib.randint(5, (2, 2), dtype=legacy.dtype)
        assert isinstance(x.type_as(y), legacy)
        assert y.type(legacy).data_ptr() == y.data_ptr()


def test_volatile_reads_false_and_warns_through_torch_autograd_torch():
    torch = torch_or_skip()
    for lib in (torch, genesis):
        v = lib.randn(2)
        with pytest.warns(UserWarning, match="volatile"):
            assert v.volatile is False
    with serve_torch():
        import torch as served
        assert served.autograd.torch.randn(3, 3).shape == (3, 3)


def test_private_unique_functions_match_pytorch():
    torch = torch_or_skip()
    values = [3.0, 1.0, 3.0, 2.0]
    with serve_torch():
        import torch as served
        private = (served._unique, served._unique2, served._VF.unique_dim)
    x, tx = genesis.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    cases = [(private[0], torch._unique, {"return_inverse": True}),
             (private[0], torch._unique, {}),
             (private[1], torch._unique2, {"return_counts": True}),
             (private[1], torch._unique2, {"return_inverse": True, "return_counts": True}),
             (lambda t, **k: private[2](t, 0, **k), lambda t, **k: torch._VF.unique_dim(t, 0, **k), {})]
    for ours, theirs, options in cases:
        mine, reference = ours(x, **options), theirs(tx, **options)
        assert len(mine) == len(reference)
        for a, b in zip(mine, reference):
            assert a.tolist() == b.tolist()
            assert a.requires_grad == b.requires_grad


# -- grad modes on generators ------------------------------------------------------------------

class Recoverable(Exception):
    pass


def _generator(lib, mode, expected: bool, log: list):
    @mode()
    def numbers():
        for i in range(3):
            try:
                log.append(("in", lib.is_grad_enabled() == expected))
                yield i
            except Recoverable:
                log.append(("caught", lib.is_grad_enabled() == expected))
            except GeneratorExit:
                log.append(("exit", lib.is_grad_enabled() == expected))
                raise

    return numbers()


@pytest.mark.parametrize("name", LIBRARIES)
@pytest.mark.parametrize("mode_name, outer_name", [("no_grad", "enable_grad"), ("enable_grad", "no_grad")])
def test_grad_mode_holds_inside_a_generator_given_throw_and_close(name, mode_name, outer_name):
    lib = library(name)
    mode, outer = getattr(lib, mode_name), getattr(lib, outer_name)
    expected = mode_name == "enable_grad"
    log = []
    with outer():
        generator = _generator(lib, mode, expected, log)
        assert next(generator) == 0
        assert generator.throw(Recoverable) == 1
        assert lib.is_grad_enabled() != expected
        generator.close()
        assert lib.is_grad_enabled() != expected
    assert [event for event, _ in log] == ["in", "caught", "in", "exit"]
    assert all(ok for _, ok in log)

    class Unrecoverable(Exception):
        pass

    @mode()
    def reraises():
        try:
            yield 0
        except Unrecoverable:
            raise ValueError("secondary") from None

    with outer():
        generator = reraises()
        next(generator)
        with pytest.raises(ValueError, match="secondary"):
            generator.throw(Unrecoverable)
        assert lib.is_grad_enabled() != expected


# -- Function and node surface ------------------------------------------------------------------

@pytest.mark.parametrize("name", LIBRARIES)
def test_function_vmap_defaults(name):
    lib = library(name)

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x

    assert Square.generate_vmap_rule is False
    assert callable(Square.vmap)


def test_resize_function_served_as_torch_autograd_functions():
    torch = torch_or_skip()
    import torch.autograd._functions  # noqa: F401  (PyTorch's own, for the comparison)
    values = np.arange(6.0).reshape(2, 3)
    with serve_torch():
        import torch.autograd._functions as served
        resize = served.Resize
    x = genesis.tensor(values, requires_grad=True)
    tx = torch.tensor(values, requires_grad=True)
    y, ty = resize.apply(x, (3, 2)), torch.autograd._functions.Resize.apply(tx, (3, 2))
    assert y.tolist() == ty.tolist()
    weights = np.arange(6.0).reshape(3, 2)
    (y * genesis.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    assert x.grad.tolist() == tx.grad.tolist()
    edge = genesis.autograd.graph.get_gradient_edge(y)
    assert genesis.autograd.grad(y.sum(), edge)[0].tolist() == [[1.0, 1.0]] * 3
    with pytest.raises(RuntimeError, match="elements"):
        resize.apply(x, (4, 2))


@pytest.mark.parametrize("name", LIBRARIES)
def test_grad_mode_decorator_still_returns_the_generator_value(name):
    lib = library(name)

    @lib.no_grad()
    def finishes():
        yield 1
        return "done"

    generator = finishes()
    next(generator)
    with pytest.raises(StopIteration) as stop:
        next(generator)
    assert stop.value.value == "done"


@pytest.mark.parametrize("name", LIBRARIES)
def test_grad_dtype_none_keeps_a_bfloat16_gradient(name):
    if name == "genesis":
        pytest.importorskip("ml_dtypes", reason="genesis.bfloat16 needs ml_dtypes")
    lib = library(name)
    leaf = lib.tensor([3.0, 4.0], requires_grad=True, dtype=lib.bfloat16)
    leaf.grad_dtype = None
    (leaf * 2).sum().backward()
    leaf.grad = leaf.grad.to(lib.float32)
    (leaf * 3).sum().backward()
    assert leaf.grad.dtype == lib.float32 and leaf.grad.tolist() == [5.0, 5.0]

"""Tensor construction, dtype inference, properties, conversions and printing."""
import copy
import pickle

import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


@pytest.mark.parametrize("data, dtype", [
    (1, genesis.int64), (1.5, genesis.float32), (True, genesis.bool),
    ([1, 2], genesis.int64), ([1.0, 2], genesis.float32), ([[True, False]], genesis.bool),
    (np.array([1.0, 2.0]), genesis.float32),  # NumPy float64 -> float32, as the spec says
    (np.array([1, 2], dtype=np.int32), genesis.int32),
    (np.array([1, 2], dtype=np.uint8), genesis.uint8),
    (np.array([True]), genesis.bool),
    (np.array([1.0], dtype=np.float16), genesis.float16),
])
def test_dtype_inference(data, dtype):
    assert genesis.tensor(data).dtype is dtype
    assert genesis.Tensor(data).dtype is dtype


def test_explicit_dtype_and_names():
    assert genesis.tensor([1, 2], dtype=genesis.float64).dtype is genesis.float64
    assert genesis.tensor([1, 2], dtype="float16").dtype is genesis.float16
    assert genesis.tensor([1.5], dtype=np.int32).dtype is genesis.int32
    with pytest.raises(TypeError, match="unknown dtype"):
        genesis.tensor([1], dtype="float128")


def test_dtype_objects():
    assert genesis.float32.is_floating_point and not genesis.int64.is_floating_point
    assert genesis.float64.itemsize == 8 and genesis.int8.itemsize == 1
    assert genesis.float16.numpy_dtype == np.float16
    assert repr(genesis.float32) == "genesis.float32"
    assert genesis.half is genesis.float16 and genesis.long is genesis.int64
    assert pickle.loads(pickle.dumps(genesis.float64)) is genesis.float64


def test_unsupported_data_is_a_clear_error():
    with pytest.raises(TypeError, match="can't make a tensor"):
        genesis.tensor(np.array(["a", "b"]))
    with pytest.raises(ValueError, match=r"expected a sequence of length 2 at dim 1 \(got 1 at data\[1\]\)"):
        genesis.tensor([[1, 2], [3]])  # a ValueError, as in PyTorch


def test_properties():
    x = genesis.zeros(2, 3)
    assert x.shape == (2, 3) and x.ndim == 2 and x.dim() == 2
    assert x.size == 6 and x.numel() == 6          # size is the element count (spec)
    assert x.size() == (2, 3) and x.size(1) == 3    # and callable like PyTorch
    assert x.device == genesis.device("cpu") and str(x.device) == "cpu"
    assert x.is_leaf and x.grad is None and x.grad_fn is None and not x.requires_grad
    assert len(x) == 2


def _size_behaviour(lib) -> list:
    """What a script sees of a shape: its type, sums, slices, reprs, pickling."""
    x = lib.zeros(2, 3, 4)
    shape = x.shape
    return [isinstance(shape, lib.Size), isinstance(x.size(), lib.Size), shape.numel(),
            shape == (2, 3, 4), hash(shape) == hash((2, 3, 4)), x.size(1), shape[0].__class__,
            repr(shape[1:]), repr(shape + (5,)), repr((1,) + shape), repr(shape * 2),
            repr(pickle.loads(pickle.dumps(shape))), repr(copy.deepcopy(shape)),
            repr(lib.Size([2, 3])), repr(lib.tensor(1.0).shape), lib.Size([2, 3]).numel()]


def test_shape_and_size_are_a_size():
    """t.shape and t.size() are a genesis.Size (PyTorch's torch.Size), a tuple of ints."""
    assert _size_behaviour(genesis) == [
        True, True, 24, True, True, 3, int, "genesis.Size([3, 4])", "genesis.Size([2, 3, 4, 5])",
        "genesis.Size([1, 2, 3, 4])", "genesis.Size([2, 3, 4, 2, 3, 4])",
        "genesis.Size([2, 3, 4])", "genesis.Size([2, 3, 4])", "genesis.Size([2, 3])",
        "genesis.Size([])", 6]
    with pytest.raises(TypeError, match="Size"):
        genesis.Size([2.5])


def test_size_matches_pytorch():
    torch = torch_or_skip()
    shown = [value.replace("genesis.", "torch.") if isinstance(value, str) else value
             for value in _size_behaviour(genesis)]
    assert shown == _size_behaviour(torch)


def test_requires_grad_rules():
    x = genesis.tensor([1.0, 2.0])
    x.requires_grad = True
    assert x.requires_grad and x.requires_grad_(False) is x and not x.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        genesis.tensor([1, 2], requires_grad=True)
    assert _non_leaf_requires_grad_changes(genesis) == [
        "you can only change requires_grad flags of leaf variables.",
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use var_no_grad "
        "= var.detach().", True,
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use var_no_grad "
        "= var.detach().", "you can only change requires_grad flags of leaf variables.", True]


def _non_leaf_requires_grad_changes(lib) -> list:
    """What each way of changing requires_grad of a non-leaf (and of a view) does: the
    error's first sentences, or the flag afterwards."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    changes = [lambda y: setattr(y, "requires_grad", True),
               lambda y: setattr(y, "requires_grad", False),
               lambda y: y.requires_grad_(),  # allowed: it requires grad already
               lambda y: y.requires_grad_(False)]
    found = []
    for change, made in zip(changes + [changes[0]], [x * 2] * 4 + [x[:1]]):
        try:
            change(made)
            found.append(made.requires_grad)
        except RuntimeError as error:
            found.append(str(error).split(" (This tensor")[0])
    with lib.no_grad():
        made = x * 2  # a leaf: made without a graph
    made.requires_grad = True
    found.append(made.is_leaf and made.requires_grad)
    return found


def test_non_leaf_requires_grad_changes_match_pytorch():
    torch = torch_or_skip()
    assert _non_leaf_requires_grad_changes(genesis) == _non_leaf_requires_grad_changes(torch)


def test_grad_setter_validates():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    x.grad = genesis.tensor([0.5, 0.5])
    assert x.grad.tolist() == [0.5, 0.5]
    x.grad = None
    assert x.grad is None
    with pytest.raises(RuntimeError, match="shape"):
        x.grad = genesis.zeros(3)
    with pytest.raises(TypeError):
        x.grad = [1.0, 2.0]


def test_data_shares_storage_and_is_detached():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.grad_fn is None
    d.mul_(10)  # changes through .data are not tracked, but land in x
    assert x.tolist() == [10.0, 20.0]
    x.data = genesis.tensor([3.0, 4.0])
    assert x.tolist() == [3.0, 4.0] and x.requires_grad


def test_creation_functions():
    assert genesis.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert genesis.ones((2,)).dtype is genesis.float32
    assert genesis.full((2,), 7).dtype is genesis.int64
    assert genesis.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert genesis.empty(4).shape == (4,)
    assert genesis.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert genesis.arange(1, 2, 0.5).dtype is genesis.float32
    assert genesis.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert genesis.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    x = genesis.randn(3, 4, dtype=genesis.float64)
    assert genesis.zeros_like(x).dtype is genesis.float64
    assert genesis.ones_like(x).shape == (3, 4)
    assert genesis.randn_like(x).dtype is genesis.float64
    u = genesis.rand(1000).numpy()
    assert u.min() >= 0 and u.max() < 1
    r = genesis.randint(0, 5, (100,))
    assert r.dtype is genesis.int64 and 0 <= r.numpy().min() and r.numpy().max() < 5
    assert genesis.randn(2, requires_grad=True).requires_grad


def test_manual_seed_reproducible():
    genesis.manual_seed(123)
    a = genesis.randn(5)
    genesis.manual_seed(123)
    b = genesis.randn(5)
    assert a.tolist() == b.tolist()


def test_rng_state_round_trip():
    state = genesis.get_rng_state()
    a = genesis.rand(4)
    genesis.set_rng_state(state)
    assert genesis.rand(4).tolist() == a.tolist()


def test_rng_states_are_uint8_tensors_as_in_pytorch():
    """get_rng_state() and Generator.get_state() gave NumPy's state dict: no .clone(), and not
    what PyTorch code stores and passes back."""
    state = genesis.get_rng_state().clone()
    generator = genesis.Generator().manual_seed(1)
    generator_state = generator.get_state()
    for value in (state, generator_state):
        assert type(value) is genesis.Tensor and value.dtype == genesis.uint8 and value.ndim == 1
    first, drawn = genesis.rand(3), genesis.rand(3, generator=generator)
    genesis.set_rng_state(state)
    assert genesis.rand(3).tolist() == first.tolist()
    assert generator.set_state(generator_state) is generator
    assert genesis.rand(3, generator=generator).tolist() == drawn.tolist()
    torch = torch_or_skip()
    for library in (genesis, torch):  # a state that is not a uint8 tensor: TypeError; garbage: RuntimeError
        with pytest.raises(TypeError):
            library.set_rng_state(library.zeros(3))
        with pytest.raises(TypeError):
            library.Generator().set_state([1, 2])
        with pytest.raises(RuntimeError):
            library.set_rng_state(library.zeros(3, dtype=library.uint8))


def test_manual_seed_returns_the_default_generator_as_pytorch():
    generator = genesis.manual_seed(5)
    assert generator is genesis.default_generator and isinstance(generator, genesis.Generator)
    assert generator.initial_seed() == genesis.initial_seed() == 5
    a = genesis.rand(2)
    assert genesis.rand(2, generator=generator.manual_seed(5)).tolist() == a.tolist()
    generator.set_state(generator.get_state())
    torch = torch_or_skip()
    assert type(torch.manual_seed(5)) is torch.Generator


def test_fork_rng_puts_the_global_generator_back():
    from genesis.compat import serve_torch

    genesis.manual_seed(0)
    expected = genesis.rand(2).tolist()
    genesis.manual_seed(0)
    with genesis.rng.fork_rng():
        genesis.rand(5)
        genesis.manual_seed(9)
    assert genesis.rand(2).tolist() == expected
    with genesis.rng.fork_rng(enabled=False):
        genesis.rand(1)
    assert genesis.rand(2).tolist() != expected
    with serve_torch():
        import torch.random

        assert torch.random.fork_rng is genesis.rng.fork_rng
        assert torch.random.get_rng_state is genesis.get_rng_state


def test_from_numpy_shares_memory_and_keeps_dtype():
    array = np.arange(4, dtype=np.float64)
    t = genesis.from_numpy(array)
    assert t.dtype is genesis.float64
    array[0] = 42
    assert t[0].item() == 42
    with pytest.raises(TypeError):
        genesis.from_numpy([1, 2])


def test_tensor_copies_its_input():
    array = np.arange(3.0)
    t = genesis.tensor(array)
    array[0] = 5
    assert t[0].item() == 0


def test_conversions():
    x = genesis.tensor([[1.5, 2.5]])
    assert x.tolist() == [[1.5, 2.5]]
    assert isinstance(x.numpy(), np.ndarray)
    assert np.asarray(x).dtype == np.float32
    assert genesis.tensor([2.5]).item() == 2.5 and isinstance(genesis.tensor(3).item(), int)
    assert x.double().dtype is genesis.float64 and x.half().dtype is genesis.float16
    assert x.long().tolist() == [[1, 2]] and x.int().dtype is genesis.int32
    assert x.float() is x and x.to(genesis.float32) is x
    assert x.to("float64").dtype is genesis.float64
    assert x.cpu() is x and x.to("cpu") is x
    assert x.to(genesis.float16, copy=False).dtype is genesis.float16
    assert float(genesis.tensor(2.0)) == 2.0 and int(genesis.tensor(3)) == 3
    assert bool(genesis.tensor([1])) is True
    assert [0, 1, 2][genesis.tensor(1)] == 1


def test_conversion_errors_are_clear():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="2 elements"):
        x.item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(genesis.tensor([1, 2]))
    with pytest.raises(TypeError, match="0-d"):
        len(genesis.tensor(1.0))


@pytest.mark.parametrize("make, text", [
    (lambda: genesis.tensor([2.0, 4.0, 6.0], requires_grad=True), "tensor([2., 4., 6.], requires_grad=True)"),
    (lambda: genesis.tensor([1.0, 1.0]), "tensor([1., 1.])"),
    (lambda: genesis.tensor(12.0), "tensor(12.)"),
    (lambda: genesis.tensor([0.1, 0.25]), "tensor([0.1000, 0.2500])"),
    (lambda: genesis.tensor([1, 2, 3]), "tensor([1, 2, 3])"),
    (lambda: genesis.tensor([True, False]), "tensor([ True, False])"),
    (lambda: genesis.tensor([1.0], dtype=genesis.float64), "tensor([1.], dtype=genesis.float64)"),
    (lambda: genesis.tensor([1e-5, 1e5]), "tensor([1.0000e-05, 1.0000e+05])"),
    (lambda: genesis.tensor([float("nan"), float("inf"), 1.0]), "tensor([nan, inf, 1.])"),
    (lambda: genesis.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
    (lambda: genesis.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: genesis.tensor([-0.0, 0.0]), "tensor([-0., 0.])"),
    (lambda: genesis.tensor([-0.0, 5.0]), "tensor([-0., 5.])"),
    (lambda: genesis.tensor([], dtype=genesis.int64), "tensor([], dtype=genesis.int64)"),
    (lambda: genesis.zeros(0, 2, dtype=genesis.bool), "tensor([], size=(0, 2), dtype=genesis.bool)"),
    (lambda: genesis.tensor([1.0, 2.0], requires_grad=True) * 2, "tensor([2., 4.], grad_fn=<MulBackward0>)"),
])
def test_repr_like_pytorch(make, text):
    assert repr(make()) == text


def test_repr_names_float32_once_float64_is_the_default():
    genesis.set_default_dtype(genesis.float64)
    try:
        assert repr(genesis.tensor([1.5])) == "tensor([1.5000])"
        assert repr(genesis.tensor([1.5], dtype=genesis.float32)) == \
            "tensor([1.5000], dtype=genesis.float32)"
    finally:
        genesis.set_default_dtype(genesis.float32)


FORMATTED = [  # (make the tensor from a library, format spec)
    (lambda lib: (lib.tensor([1.0, 2.5], requires_grad=True) * 2).sum(), ""),
    (lambda lib: lib.tensor(7), ""), (lambda lib: lib.tensor(2.5), ".3f"),
    (lambda lib: lib.tensor(3, dtype=lib.int8), ">4"), (lambda lib: lib.tensor(True), ""),
    (lambda lib: lib.tensor([2.5]), ""), (lambda lib: lib.tensor([2.5]), ".2f"),
    (lambda lib: lib.nn.Parameter(lib.tensor(1.0)), ""), (lambda lib: lib.nn.Parameter(lib.tensor(1.0)), ".1f"),
]


@pytest.mark.parametrize("make, spec", FORMATTED)
def test_format_gives_a_0d_tensors_value_as_pytorch(make, spec):
    """f"{loss}" on a 0-d tensor gave its repr; PyTorch formats its value, with any spec."""
    def formatted(lib):
        try:
            return format(make(lib), spec)
        except TypeError as error:
            return f"TypeError: {error}"

    ours = formatted(genesis)
    torch = torch_or_skip()
    assert ours == formatted(torch)


def test_repr_summarises_large_tensors():
    text = repr(genesis.arange(2000))
    assert "..." in text and text.startswith("tensor([   0,    1,    2,")


def test_format_a_0d_tensor():
    assert f"{genesis.tensor(3.14159):.2f}" == "3.14" and f"{genesis.tensor(3.5)}" == "3.5"
    assert f"{genesis.tensor([2.5])}" == str(genesis.tensor([2.5]))
    for shape in ((1,), (2,)):  # a spec needs a 0-d tensor, as in PyTorch
        with pytest.raises(TypeError, match="unsupported format string"):
            f"{genesis.ones(shape):.2f}"


def test_numpy_scalars_defer_to_tensor_operators():
    t = np.float32(2.0) * genesis.tensor([1.0, 2.0])
    assert isinstance(t, genesis.Tensor) and t.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("dtype, array_dtype", [("float32", np.float64), ("float32", np.int64),
                                                ("int32", np.int16), ("int64", np.float32),
                                                ("float32", np.bool_)])
def test_a_numpy_array_operand_gives_a_tensor_as_in_pytorch(dtype, array_dtype):
    """tensor + ndarray was a TypeError; PyTorch gives a tensor in the dtype NumPy's
    promotion picks (NumPy computes it there); genesis's keeps its graph too."""
    x = genesis.ones(2, dtype=getattr(genesis, dtype))
    array = np.array([2, 3], dtype=array_dtype)
    result = x * array
    assert type(result) is genesis.Tensor and result.tolist() == array.astype(np.float64).tolist()
    w = genesis.ones(2, requires_grad=True)
    (w * np.array([[2.0, 3.0]] * 3)).sum().backward()
    assert w.grad.tolist() == [6.0, 9.0]
    torch = torch_or_skip()
    theirs = torch.ones(2, dtype=getattr(torch, dtype)) * array
    assert type(theirs) is torch.Tensor and str(result.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]


def test_int_and_float_of_a_tensor_of_several_values_is_a_value_error_as_in_pytorch():
    for convert in (int, float):
        with pytest.raises(ValueError, match="only one element tensors"):
            convert(genesis.ones(2))
    with pytest.raises(RuntimeError):
        genesis.ones(2).item()


def test_pickle_and_deepcopy():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == [1.0, 2.0] and y.requires_grad
    z = copy.deepcopy(x)
    z.data.fill_(0)
    assert x.tolist() == [1.0, 2.0] and z.requires_grad
    with pytest.raises(RuntimeError, match="leaf"):
        copy.deepcopy(x * 2)


def test_hash_is_identity_and_iteration():
    a, b = genesis.tensor([1.0]), genesis.tensor([1.0])
    assert len({a, b}) == 2
    rows = list(genesis.tensor([[1, 2], [3, 4]]))
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]


@pytest.mark.parametrize("options", [{}, {"precision": 2}, {"linewidth": 60},
                                     {"threshold": 20, "edgeitems": 2}, {"sci_mode": True},
                                     {"profile": "short"}])
def test_printing_matches_pytorch_with_its_print_options(options):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    rng = np.random.default_rng(0)
    try:
        torch.set_printoptions(**options)
        genesis.set_printoptions(**options)
        for shape in [(30,), (3, 30), (2, 3, 17), (2, 600), (7, 9, 3)]:
            for scale in (1, 100, 1e-3, 1e5):
                x = rng.standard_normal(shape) * scale
                assert repr(genesis.tensor(x, dtype=genesis.float32)) == \
                    repr(torch.tensor(x, dtype=torch.float32)), (shape, scale)
    finally:
        torch.set_printoptions(profile="default")
        genesis.set_printoptions(profile="default")
    assert genesis.get_printoptions()["precision"] == 4


def test_a_view_made_and_changed_without_grad_prints_an_invalid_grad_fn():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        base = lib.ones(1, requires_grad=True)
        with lib.no_grad():
            view = base[:]
            unchanged = repr(view)
            view *= 2
        assert unchanged == "tensor([1.], requires_grad=True)"  # a leaf, as its base
        assert repr(view) == "tensor([2.], grad_fn=<Invalid>)"

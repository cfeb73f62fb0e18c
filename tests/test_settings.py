"""Process-wide switches (default dtype, matmul precision, anomaly, determinism debug mode,
legacy default tensor type), memory formats, and the top-level spellings of nn.functional
ops, compared with PyTorch where it is importable."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


@pytest.fixture
def float64_default():
    genesis.set_default_dtype(genesis.float64)
    yield
    genesis.set_default_dtype(genesis.float32)


def test_default_dtype_reaches_every_way_floats_are_made(float64_default):
    made = {"python float": genesis.tensor([1.5]), "scalar": genesis.tensor(2.5),
            "zeros": genesis.zeros(2), "randn": genesis.randn(2), "rand": genesis.rand(2),
            "arange of floats": genesis.arange(3.0), "linspace": genesis.linspace(0, 1, 3),
            "full of a float": genesis.full((2,), 1.5), "int / int": genesis.arange(3) / 2,
            "int * float": genesis.arange(3) * 1.5, "sqrt of ints": genesis.arange(3).sqrt(),
            "Linear weight": genesis.nn.Linear(2, 3).weight,
            "scalar_tensor": genesis.scalar_tensor(1)}
    assert {name: t.dtype for name, t in made.items()} == {name: genesis.float64 for name in made}
    kept = {"float32 array": genesis.tensor(np.zeros(2, np.float32)),
            "float16 array": genesis.tensor(np.zeros(2, np.float16)),
            "ints": genesis.tensor([1, 2])}
    assert [t.dtype for t in kept.values()] == [genesis.float32, genesis.float16, genesis.int64]


def test_default_dtype_matches_torch():
    torch = torch_or_skip()
    for library in (torch, genesis):
        library.set_default_dtype(library.float64)
        try:
            got = [str(t.dtype).split(".")[-1] for t in (
                library.tensor([1.5]), library.zeros(1), library.arange(3) / 2,
                library.tensor([1.5], dtype=library.float32) * 2.0)]
        finally:
            library.set_default_dtype(library.float32)
        if library is torch:
            expected = got
    assert got == expected == ["float64", "float64", "float64", "float32"]


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_only_floating_dtypes_can_be_the_default(dtype):
    with pytest.raises(TypeError, match="only floating point"):
        genesis.set_default_dtype(getattr(genesis, dtype))
    assert genesis.get_default_dtype() is genesis.float32


def test_legacy_default_tensor_type(float64_default):
    genesis.set_default_tensor_type(genesis.FloatTensor)
    assert genesis.zeros(1).dtype is genesis.float32
    genesis.set_default_tensor_type("torch.DoubleTensor")
    assert genesis.zeros(1).dtype is genesis.float64
    genesis.set_default_tensor_type("torch.cuda.FloatTensor")
    try:
        assert genesis.get_default_device() == "cuda" and genesis.get_default_dtype() is genesis.float32
    finally:
        genesis.set_default_tensor_type("torch.DoubleTensor")
    assert genesis.get_default_device() == "cpu"


def test_matmul_precision_is_kept_and_checked():
    genesis.set_float32_matmul_precision("medium")
    assert genesis.get_float32_matmul_precision() == "medium"
    genesis.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError, match="highest"):
        genesis.set_float32_matmul_precision("fast")


def test_anomaly_switch_is_global_until_turned_off():
    genesis.set_anomaly_enabled(True, check_nan=False)
    try:
        assert genesis.is_anomaly_enabled() and not genesis.is_anomaly_check_nan_enabled()
    finally:
        genesis.set_anomaly_enabled(False)
    assert not genesis.is_anomaly_enabled()


@pytest.mark.parametrize("mode, level", [("default", 0), ("warn", 1), ("error", 2), (1, 1)])
def test_deterministic_debug_mode(mode, level):
    genesis.set_deterministic_debug_mode(mode)
    try:
        assert genesis.get_deterministic_debug_mode() == level
        assert genesis.are_deterministic_algorithms_enabled() == (level > 0)
    finally:
        genesis.set_deterministic_debug_mode(0)
    with pytest.raises(RuntimeError, match="debug_mode"):
        genesis.set_deterministic_debug_mode(3)


def test_initial_seed_is_the_manual_seed():
    genesis.manual_seed(1234)
    assert genesis.initial_seed() == 1234


def test_typename_and_autocast_queries():
    assert genesis.typename(genesis.zeros(1, dtype=genesis.int64)) == "genesis.LongTensor"
    assert genesis.typename(genesis.nn.Linear(1, 1)) == "genesis.nn.linear.Linear"
    assert genesis.get_autocast_gpu_dtype() is genesis.float16
    assert genesis.get_autocast_cpu_dtype() is genesis.bfloat16
    with genesis.autocast("cuda", dtype=genesis.float16):
        assert genesis.is_autocast_enabled()


def test_memory_formats_are_accepted_and_checked():
    x = genesis.randn(2, 3, 4, 4)
    last = x.contiguous(memory_format=genesis.channels_last)
    assert genesis.equal(last, x) and x.to(memory_format=genesis.channels_last) is x
    assert x.clone(memory_format=genesis.preserve_format).shape == x.shape
    assert x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).is_contiguous(
        memory_format=genesis.channels_last)
    with pytest.raises(RuntimeError, match="4-D"):
        genesis.zeros(2, 3).contiguous(memory_format=genesis.channels_last)
    with pytest.raises(TypeError, match="memory format"):
        x.contiguous(memory_format="channels_last")
    assert genesis.nn.Conv2d(1, 1, 3).to(memory_format=genesis.channels_last) is not None


def test_like_constructors_take_a_memory_format():
    """Optimizers and F.gumbel_softmax copied from PyTorch's source pass memory_format to
    zeros_like and friends (preserve_format, legacy_contiguous_format)."""
    x = genesis.randn(2, 3, 4, 4)
    for memory_format in (genesis.preserve_format, genesis.legacy_contiguous_format,
                          genesis.contiguous_format, genesis.channels_last):
        for make in (genesis.zeros_like, genesis.ones_like, genesis.empty_like, genesis.rand_like,
                     genesis.randn_like):
            assert make(x, memory_format=memory_format).shape == x.shape
        assert genesis.full_like(x, 2.0, memory_format=memory_format).sum().item() == 192.0
        assert genesis.randint_like(x, 3, memory_format=memory_format).shape == x.shape
    assert x.is_contiguous(memory_format=genesis.legacy_contiguous_format)
    with pytest.raises(RuntimeError, match="4-D"):
        genesis.zeros_like(genesis.zeros(2, 3), memory_format=genesis.channels_last)


def test_as_tensor_and_asarray_share_memory_like_torch():
    torch = torch_or_skip()
    for library in (torch, genesis):
        array = np.arange(3.0)
        shared, copied = library.as_tensor(array), library.asarray(array, copy=True)
        array[0] = 9.0
        assert (shared[0].item(), copied[0].item()) == (9.0, 0.0)
        assert str(shared.dtype).endswith("float64")
        x = library.ones(2, requires_grad=True) * 2
        assert library.as_tensor(x) is x
        with pytest.raises(ValueError):
            library.asarray(x, dtype=library.float64, copy=False, requires_grad=False)
        assert str(library.scalar_tensor(3).dtype).endswith("float32")




@pytest.mark.parametrize("name, call", [
    ("layer_norm", lambda lib, x, w, b: lib.layer_norm(x, (4,), w, b, 1e-5, True)),
    ("group_norm", lambda lib, x, w, b: lib.group_norm(x.reshape(2, 4, 1), 2, w, b, 1e-5, True)),
    ("batch_norm", lambda lib, x, w, b: lib.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, True)),
    ("instance_norm", lambda lib, x, w, b: lib.instance_norm(
        x.reshape(2, 4, 1).repeat(1, 1, 3) * lib.arange(1., 4.), w, b, None, None, True, 0.1,
        1e-5, True)),
    ("embedding", lambda lib, x, w, b: lib.embedding(x, lib.tensor([[0, 1], [1, 0]]))),
    ("embedding scale_grad_by_freq", lambda lib, x, w, b: lib.embedding(
        x, lib.tensor([[0, 1], [1, 1]]), -1, True) * lib.arange(1., 5.)),
    ("embedding scale_grad_by_freq padding", lambda lib, x, w, b: lib.embedding(
        x, lib.tensor([[0, 1], [1, 0], [0, 0]]), 1, True) * lib.arange(1., 5.)),
    ("dropout off", lambda lib, x, w, b: lib.dropout(x, 0.5, False)),
    ("margin_ranking_loss", lambda lib, x, w, b: lib.margin_ranking_loss(
        x[0], x[1], lib.tensor([1., -1., 1., -1.]), 0.1, 0)),
    ("kl_div", lambda lib, x, w, b: lib.kl_div(x.log_softmax(-1), x.softmax(0), 2)),
    ("binary_cross_entropy_with_logits", lambda lib, x, w, b: lib.binary_cross_entropy_with_logits(
        x, x.sigmoid().detach(), None, w.detach().abs(), 1)),
    ("convolution", lambda lib, x, w, b: lib.convolution(
        x.reshape(1, 2, 4), w.reshape(2, 1, 2), b[:2], [1], [0], [1], False, [0], 2)),
    ("convolution transposed", lambda lib, x, w, b: lib.convolution(
        x.reshape(1, 2, 4), w.reshape(2, 1, 2), None, [2], [0], [1], True, [1], 2)),
    ("constant_pad_nd", lambda lib, x, w, b: lib.constant_pad_nd(x, [1, 2], 0.5)),
])
def test_top_level_spellings_match_torch(name, call):
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(2, 4)), rng.normal(size=4), rng.normal(size=4)]
    results = []
    for library in (torch, genesis):
        x, w, b = (library.tensor(a, dtype=library.float64, requires_grad=True) for a in arrays)
        out = call(library, x, w, b)
        out.sum().backward()
        grads = [t.grad.numpy() if t.grad is not None else None for t in (x, w, b)]
        results.append((out.detach().numpy(), grads))
    (expected, expected_grads), (got, got_grads) = results
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    for want, have in zip(expected_grads, got_grads):
        assert (want is None) == (have is None)
        if want is not None:
            np.testing.assert_allclose(have, want, rtol=1e-6, atol=1e-8)


def test_top_level_loss_reduction_numbers_are_checked():
    with pytest.raises(ValueError, match="0 \\(none\\)"):
        genesis.hinge_embedding_loss(genesis.ones(2), genesis.ones(2), 1.0, 3)


def test_more_top_level_spellings_match_torch():
    torch = torch_or_skip()
    for library in (torch, genesis):
        x = library.tensor([[-1.0, 2.0], [3.0, -4.0]])
        assert library.dropout_(x.clone(), 0.5, False).tolist() == x.tolist()
        assert library.feature_dropout(x.view(1, 2, 2), 0.5, False).tolist() == [x.tolist()]
        assert library.rrelu(x, 0.25, 0.25).tolist() == [[-0.25, 2.0], [3.0, -1.0]]
        assert library.channel_shuffle(library.arange(4.).view(1, 4, 1), 2).flatten().tolist() == \
            [0.0, 2.0, 1.0, 3.0]
        assert abs(library.pdist(x).item() - 7.211102550927978) < 1e-5
        assert x.cov().shape == (2, 2) and x.corrcoef().shape == (2, 2)
        assert library.t(x).tolist() == [[-1.0, 3.0], [2.0, -4.0]]
        assert x.narrow_copy(0, 1, 1).tolist() == [[3.0, -4.0]]
        log_probs = library.randn(5, 1, 3).log_softmax(2)
        targets = library.tensor([[1, 2]])
        loss = library.ctc_loss(log_probs, targets, [5], [2], 0, 1, False)
        assert loss.ndim == 0

"""The ops of PyTorch's CUDA autocast float32 list (aten/src/ATen/autocast_mode.h,
AT_FORALL_FP32 and AT_FORALL_FP32_SET_OPT_DTYPE) run in float32 under autocast("cuda") on a
GPU: a float16 input gives a float32 output, and its gradient comes back in float16. The CPU
lists leave most of them alone (tests/test_amp_cpu_rules.py), as does autocast("cuda") for a
CPU tensor; in-place forms are never autocast, as in PyTorch."""
import pytest

import genesis
import genesis.nn.functional as F


def _positive(x):
    return x.abs() * 0.5 + 0.25


def _bounded(x):
    return x.tanh() * 0.5


# name -> (function of float16 tensors, input shapes): each op of the list that genesis has
OPS = {
    "acos": (lambda x: _bounded(x).acos(), [(4,)]),
    "asin": (lambda x: _bounded(x).asin(), [(4,)]),
    "cosh": (lambda x: x.cosh(), [(4,)]),
    "erfinv": (lambda x: _bounded(x).erfinv(), [(4,)]),
    "exp": (lambda x: x.exp(), [(4,)]),
    "expm1": (lambda x: x.expm1(), [(4,)]),
    "log": (lambda x: _positive(x).log(), [(4,)]),
    "log10": (lambda x: _positive(x).log10(), [(4,)]),
    "log2": (lambda x: _positive(x).log2(), [(4,)]),
    "log1p": (lambda x: _positive(x).log1p(), [(4,)]),
    "reciprocal": (lambda x: _positive(x).reciprocal(), [(4,)]),
    "rsqrt": (lambda x: _positive(x).rsqrt(), [(4,)]),
    "sinh": (lambda x: x.sinh(), [(4,)]),
    "tan": (lambda x: _bounded(x).tan(), [(4,)]),
    "pow, tensor and number": (lambda x: _positive(x).pow(2.5), [(4,)]),
    "pow, two tensors": (lambda x, y: _positive(x) ** y, [(4,), (4,)]),
    "pow, number and tensor": (lambda x: 2.0 ** x, [(4,)]),
    "softplus": (lambda x: F.softplus(x), [(4,)]),
    "layer_norm": (lambda x: F.layer_norm(x, (4,)), [(2, 4)]),
    "group_norm": (lambda x: F.group_norm(x, 2), [(2, 4, 3)]),
    "frobenius norm": (lambda x: genesis.linalg.matrix_norm(x), [(3, 3)]),
    "nuclear norm": (lambda x: genesis.linalg.matrix_norm(x, "nuc"), [(3, 3)]),
    "matrix_norm, ord 2": (lambda x: genesis.linalg.matrix_norm(x, 2), [(3, 3)]),
    "norm": (lambda x: x.norm(), [(3, 3)]),
    "cosine_similarity": (lambda x, y: F.cosine_similarity(x, y), [(2, 4), (2, 4)]),
    "mse_loss": (lambda x, y: F.mse_loss(x, y), [(4,), (4,)]),
    "l1_loss": (lambda x, y: F.l1_loss(x, y), [(4,), (4,)]),
    "smooth_l1_loss": (lambda x, y: F.smooth_l1_loss(x, y), [(4,), (4,)]),
    "kl_div": (lambda x, y: F.kl_div(x, _positive(y), reduction="batchmean"), [(4,), (4,)]),
    "dist": (lambda x, y: genesis.dist(x, y), [(4,), (4,)]),
    "pdist": (lambda x: F.pdist(x), [(3, 4)]),
    "cdist": (lambda x, y: genesis.cdist(x, y), [(2, 4), (3, 4)]),
    "renorm": (lambda x: x.renorm(2, 0, 0.5), [(3, 4)]),
    "logsumexp": (lambda x: x.logsumexp(1), [(3, 4)]),
    "upsample_nearest1d": (lambda x: F.interpolate(x, scale_factor=2), [(1, 1, 4)]),
    "upsample_nearest2d, exact": (lambda x: F.interpolate(x, scale_factor=2, mode="nearest-exact"),
                                  [(1, 1, 3, 3)]),
    "upsample_nearest3d": (lambda x: F.interpolate(x, scale_factor=2), [(1, 1, 2, 2, 2)]),
    "upsample_linear1d": (lambda x: F.interpolate(x, scale_factor=2, mode="linear"), [(1, 1, 4)]),
    "upsample_bilinear2d": (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
                            [(1, 1, 3, 3)]),
    "upsample_trilinear3d": (lambda x: F.interpolate(x, scale_factor=2, mode="trilinear"),
                             [(1, 1, 2, 2, 2)]),
    "upsample_bicubic2d": (lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"),
                           [(1, 1, 4, 4)]),
    "prod": (lambda x: x.prod(1), [(3, 4)]),
    "softmax": (lambda x: x.softmax(-1), [(3, 4)]),
    "log_softmax": (lambda x: x.log_softmax(-1), [(3, 4)]),
    "cumprod": (lambda x: x.cumprod(1), [(3, 4)]),
    "cumsum": (lambda x: x.cumsum(1), [(3, 4)]),
    "vector_norm": (lambda x: genesis.linalg.vector_norm(x), [(3, 4)]),
    "sum": (lambda x: x.sum(1), [(3, 4)]),
}


def _inputs(shapes, device):
    return [(genesis.randn(*shape, device=device) * 0.5).half().requires_grad_()
            for shape in shapes]


@pytest.mark.parametrize("name", OPS)
def test_the_op_runs_in_float32_and_gradients_come_back_in_float16(fake_cuda, name):
    function, shapes = OPS[name]
    inputs = _inputs(shapes, fake_cuda)
    with genesis.autocast("cuda", dtype=genesis.float16):
        out = function(*inputs)
    assert out.dtype is genesis.float32, name
    assert bool(genesis.isfinite(out).all())
    out.sum().backward()
    for tensor in inputs:
        assert tensor.grad is not None and tensor.grad.dtype is genesis.float16, name


@pytest.mark.parametrize("name", ["exp", "log", "pow, two tensors", "softplus", "logsumexp",
                                  "upsample_bilinear2d", "softmax"])
def test_cpu_tensors_under_autocast_cuda_keep_their_dtype(name):
    function, shapes = OPS[name]
    with genesis.autocast("cuda", dtype=genesis.float16):
        assert function(*_inputs(shapes, "cpu")).dtype is genesis.float16


# reductions PyTorch's CUDA lists leave out: the input's dtype, accumulated in float32
KEPT_REDUCTIONS = {
    "mean": lambda x: x.mean(1),
    "var": lambda x: x.var(1),
    "std": lambda x: x.std(1),
    "var_mean": lambda x: genesis.var_mean(x, 1)[0] + genesis.var_mean(x, 1)[1],
}


@pytest.mark.parametrize("name", KEPT_REDUCTIONS)
def test_mean_var_and_std_keep_float16_and_accumulate_in_float32(fake_cuda, name):
    rows = genesis.full((2, 4096), 1.0, device=fake_cuda)
    rows[1] = genesis.arange(4096, device=fake_cuda) % 2  # float16's sum of these stops at 2048
    leaf = rows.half().requires_grad_()
    with genesis.autocast("cuda", dtype=genesis.float16):
        out = KEPT_REDUCTIONS[name](leaf)
        assert out.dtype is genesis.float16, name
        assert leaf.sum(1).dtype is genesis.float32  # sum is on the list
    expected = KEPT_REDUCTIONS[name](rows.double())
    assert genesis.allclose(out.double(), expected, rtol=1e-3, atol=1e-3), name
    out.sum().backward()
    assert leaf.grad.dtype is genesis.float16


def test_float32_inputs_stay_float32_and_float64_stays_float64(fake_cuda):
    x = genesis.rand(4, device=fake_cuda) + 0.5
    with genesis.autocast("cuda", dtype=genesis.float16):
        assert x.log().dtype is genesis.float32
        assert x.double().pow(2).dtype is genesis.float64


def test_in_place_forms_are_not_autocast(fake_cuda):
    leaf = (genesis.rand(3, device=fake_cuda) + 0.5).requires_grad_()
    x = leaf.half() * 1
    with genesis.autocast("cuda", dtype=genesis.float16):
        assert x.exp_() is x
        y = leaf.half() * 1
        assert y.pow_(2) is y
    assert x.dtype is genesis.float16 and y.dtype is genesis.float16
    assert type(x.grad_fn.next_functions[0][0]).__name__ == "MulBackward"  # no cast between
    (x.float() + y.float()).sum().backward()
    expected = leaf.detach().double().exp() + 2 * leaf.detach().double()
    assert genesis.allclose(leaf.grad.double(), expected, rtol=2e-2)


# PyTorch's CUDA promote list: mixed float16/float32 operands run in float32
PROMOTED = {
    "vdot": lambda h, f: genesis.vdot(h(3), f(3)),
    "scatter_add": lambda h, f: h(3).scatter_add(0, genesis.tensor([0, 2], device=h.device),
                                                 f(2)),
    "index_put": lambda h, f: h(3).index_put((genesis.tensor([0, 2], device=h.device),), f(2)),
    "index_put, accumulate": lambda h, f: h(3).index_put(
        (genesis.tensor([0, 0], device=h.device),), f(2), accumulate=True),
    "grid_sample": lambda h, f: F.grid_sample(h(1, 1, 3, 3), f(1, 2, 2, 2).tanh(),
                                              align_corners=False),
}


class _Maker:
    def __init__(self, device, dtype):
        self.device, self.dtype, self.made = device, dtype, []

    def __call__(self, *shape):
        tensor = genesis.randn(*shape, device=self.device).to(self.dtype).requires_grad_()
        self.made.append(tensor)
        return tensor


@pytest.mark.parametrize("name", PROMOTED)
def test_mixed_operands_of_a_promote_op_run_in_float32(fake_cuda, name):
    half, single = _Maker(fake_cuda, genesis.float16), _Maker(fake_cuda, genesis.float32)
    with genesis.autocast("cuda", dtype=genesis.float16):
        out = PROMOTED[name](half, single)
        assert out.dtype is genesis.float32, name
        assert PROMOTED[name](_Maker(fake_cuda, genesis.float16),
                              _Maker(fake_cuda, genesis.float16)).dtype is genesis.float16
    out.sum().backward()
    assert all(t.grad.dtype is genesis.float16 for t in half.made)
    assert all(t.grad.dtype is genesis.float32 for t in single.made)

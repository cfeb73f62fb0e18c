"""autocast("cpu") follows PyTorch's CPU op lists, autocast(dtype) and the global switch
CUDA's: each op's output dtype and values against torch.autocast("cpu"), the gradients'
dtypes, and a small training run under bfloat16 autocast. autocast("cuda") leaves CPU tensors
alone; its rules are tested on the fake GPU (tests/cuda/test_autocast_on_device.py)."""
import numpy as np
import pytest

import genesis
from genesis.autocast_rules import AutocastRule, rule_of
from tests.helpers import torch_or_skip

if genesis.bfloat16.numpy_dtype is None:
    pytest.skip("ml_dtypes is not installed, so there is no bfloat16", allow_module_level=True)


def _spd(lib, tensor):
    """A symmetric positive definite matrix made from `tensor` (n, n)."""
    return tensor @ tensor.mT + 3 * lib.eye(tensor.shape[0]).to(tensor.dtype)


# name -> (function of (lib, F, *inputs), input shapes); the same code runs in genesis and
# in torch. Inputs are float32 or the autocast dtype, all of one dtype per call.
OPS = {
    # PyTorch's CPU lower-precision list
    "mm": (lambda lib, F, a, b: lib.mm(a, b), [(3, 4), (4, 5)]),
    "bmm": (lambda lib, F, a, b: lib.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    "matmul": (lambda lib, F, a, b: a @ b, [(2, 3, 4), (4, 5)]),
    "linear": (lambda lib, F, x, w, b: F.linear(x, w, b), [(3, 4), (5, 4), (5,)]),
    "addmm": (lambda lib, F, c, a, b: lib.addmm(c, a, b), [(3, 5), (3, 4), (4, 5)]),
    "baddbmm": (lambda lib, F, c, a, b: lib.baddbmm(c, a, b), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "addbmm": (lambda lib, F, c, a, b: lib.addbmm(c, a, b), [(3, 5), (2, 3, 4), (2, 4, 5)]),
    "einsum": (lambda lib, F, a, b: lib.einsum("ij,jk->ik", a, b), [(3, 4), (4, 5)]),
    "tensordot": (lambda lib, F, a, b: lib.tensordot(a, b, 1), [(3, 4), (4, 5)]),
    "vecdot": (lambda lib, F, a, b: lib.linalg.vecdot(a, b), [(3, 4), (3, 4)]),
    "conv1d": (lambda lib, F, x, w: F.conv1d(x, w), [(1, 2, 6), (3, 2, 3)]),
    "conv2d": (lambda lib, F, x, w: F.conv2d(x, w), [(1, 2, 5, 5), (3, 2, 3, 3)]),
    "conv_transpose2d": (lambda lib, F, x, w: F.conv_transpose2d(x, w), [(1, 2, 4, 4), (2, 3, 3, 3)]),
    "prelu": (lambda lib, F, x, w: F.prelu(x, w), [(2, 3), (1,)]),
    "scaled_dot_product_attention": (lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
                                     [(1, 2, 3, 4)] * 3),
    # not autocast on the CPU (CUDA lowers mv, promotes dot and bilinear)
    "mv": (lambda lib, F, a, b: lib.mv(a, b), [(3, 4), (4,)]),
    "dot": (lambda lib, F, a, b: lib.dot(a, b), [(4,), (4,)]),
    "bilinear": (lambda lib, F, a, b, w: F.bilinear(a, b, w), [(3, 2), (3, 4), (5, 2, 4)]),
    # float32 on CUDA, the input's dtype on the CPU
    "softmax": (lambda lib, F, x: x.softmax(-1), [(3, 4)]),
    "log_softmax": (lambda lib, F, x: x.log_softmax(-1), [(3, 4)]),
    "layer_norm": (lambda lib, F, x, w, b: F.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    "rms_norm": (lambda lib, F, x: F.rms_norm(x, (4,)), [(3, 4)]),
    "group_norm": (lambda lib, F, x: F.group_norm(x, 2), [(2, 4, 3)]),
    "sum": (lambda lib, F, x: x.sum(1), [(3, 40)]),
    "mean": (lambda lib, F, x: x.mean(1), [(3, 40)]),
    "var": (lambda lib, F, x: x.var(1), [(3, 40)]),
    "std": (lambda lib, F, x: x.std(1), [(3, 40)]),
    "cumsum": (lambda lib, F, x: x.cumsum(1), [(3, 40)]),
    "cumprod": (lambda lib, F, x: (x / 8 + 1).cumprod(1), [(3, 6)]),
    "vector_norm": (lambda lib, F, x: lib.linalg.vector_norm(x, dim=1), [(3, 40)]),
    "cosine_similarity": (lambda lib, F, a, b: F.cosine_similarity(a, b), [(3, 4), (3, 4)]),
    "logsumexp": (lambda lib, F, x: x.logsumexp(1), [(3, 4)]),
    # PyTorch's CPU float32 list
    "prod": (lambda lib, F, x: (x / 8 + 1).prod(1), [(3, 6)]),
    "mse_loss": (lambda lib, F, a, b: F.mse_loss(a, b), [(3, 4), (3, 4)]),
    "l1_loss": (lambda lib, F, a, b: F.l1_loss(a, b), [(3, 4), (3, 4)]),
    "smooth_l1_loss": (lambda lib, F, a, b: F.smooth_l1_loss(a, b), [(3, 4), (3, 4)]),
    "huber_loss": (lambda lib, F, a, b: F.huber_loss(a, b), [(3, 4), (3, 4)]),
    "kl_div": (lambda lib, F, a, b: F.kl_div(a, b.softmax(-1), reduction="batchmean"), [(3, 4), (3, 4)]),
    "binary_cross_entropy": (lambda lib, F, a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
                             [(3, 4), (3, 4)]),
    "binary_cross_entropy_with_logits": (
        lambda lib, F, a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid()), [(3, 4), (3, 4)]),
    "nll_loss": (lambda lib, F, x: F.nll_loss(x, lib.tensor([0, 1, 3])), [(3, 4)]),
    "cross_entropy": (lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 1, 3]), label_smoothing=0.1),
                      [(3, 4)]),
    "multi_margin_loss": (lambda lib, F, x: F.multi_margin_loss(x, lib.tensor([0, 1, 3])), [(3, 4)]),
    "triplet_margin_loss": (lambda lib, F, a, p, n: F.triplet_margin_loss(a, p, n), [(3, 4)] * 3),
    "margin_ranking_loss": (lambda lib, F, a, b: F.margin_ranking_loss(a, b, lib.ones(3).to(a.dtype)),
                            [(3,), (3,)]),
    "soft_margin_loss": (lambda lib, F, a: F.soft_margin_loss(a, lib.ones(3).to(a.dtype)), [(3,)]),
    "hinge_embedding_loss": (lambda lib, F, a: F.hinge_embedding_loss(a, lib.ones(3).to(a.dtype)), [(3,)]),
    "poisson_nll_loss": (lambda lib, F, a, b: F.poisson_nll_loss(a, b.abs()), [(3,), (3,)]),
    "cosine_embedding_loss": (
        lambda lib, F, a, b: F.cosine_embedding_loss(a, b, lib.ones(3).to(a.dtype)), [(3, 4), (3, 4)]),
    "cdist": (lambda lib, F, a, b: lib.cdist(a, b), [(3, 4), (2, 4)]),
    "trace": (lambda lib, F, a: lib.trace(a), [(3, 3)]),
    "quantile": (lambda lib, F, a: lib.quantile(a, 0.3), [(7,)]),
    "inverse": (lambda lib, F, a: lib.linalg.inv(_spd(lib, a)), [(3, 3)]),
    "solve": (lambda lib, F, a, b: lib.linalg.solve(_spd(lib, a), b), [(3, 3), (3, 2)]),
    "cholesky": (lambda lib, F, a: lib.linalg.cholesky(_spd(lib, a)), [(3, 3)]),
    "svdvals": (lambda lib, F, a: lib.linalg.svdvals(a), [(3, 3)]),
    "eigvalsh": (lambda lib, F, a: lib.linalg.eigvalsh(_spd(lib, a)), [(3, 3)]),
    "lstsq": (lambda lib, F, a, b: lib.linalg.lstsq(_spd(lib, a), b).solution, [(3, 3), (3, 2)]),
    "max_pool3d": (lambda lib, F, x: F.max_pool3d(x, 2), [(1, 1, 4, 4, 4)]),
    "avg_pool3d": (lambda lib, F, x: F.avg_pool3d(x, 2), [(1, 1, 4, 4, 4)]),
    "adaptive_avg_pool3d": (lambda lib, F, x: F.adaptive_avg_pool3d(x, 2), [(1, 1, 4, 4, 4)]),
    "reflect_pad2d": (lambda lib, F, x: F.pad(x, (1, 1, 1, 1), mode="reflect"), [(1, 2, 4, 4)]),
    "replicate_pad1d": (lambda lib, F, x: F.pad(x, (1, 2), mode="replicate"), [(1, 2, 4)]),
    "reflect_pad3d": (lambda lib, F, x: F.pad(x, (1,) * 6, mode="reflect"), [(1, 1, 3, 3, 3)]),
    "grid_sample": (lambda lib, F, x, grid: F.grid_sample(x, grid.tanh(), align_corners=False),
                    [(1, 1, 4, 4), (1, 2, 2, 2)]),
    # no rule: the input's dtype
    "max_pool2d": (lambda lib, F, x: F.max_pool2d(x, 2), [(1, 1, 4, 4)]),
    "gelu": (lambda lib, F, x: F.gelu(x), [(3, 4)]),
    "exp": (lambda lib, F, x: x.exp(), [(3, 4)]),
}


def _run(lib, name, arrays, dtype, autocast_dtype):
    function, _ = OPS[name]
    inputs = [lib.tensor(array).to(dtype) for array in arrays]
    F = lib.nn.functional
    with lib.autocast("cpu", dtype=autocast_dtype):
        return function(lib, F, *inputs)


@pytest.mark.parametrize("lower", ["bfloat16", "float16"])
@pytest.mark.parametrize("input_dtype", ["float32", "lower"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_cpu_autocast_gives_pytorchs_dtype_and_values(name, input_dtype, lower):
    torch = torch_or_skip()
    rng = np.random.default_rng(sum(map(ord, name)))
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in OPS[name][1]]
    dtype = lower if input_dtype == "lower" else "float32"
    mine = _run(genesis, name, arrays, getattr(genesis, dtype), getattr(genesis, lower))
    theirs = _run(torch, name, arrays, getattr(torch, dtype), getattr(torch, lower))
    assert mine.dtype.name == str(theirs.dtype).removeprefix("torch."), name
    want = theirs.detach().float().numpy()
    scale = float(np.abs(want).max()) if want.size else 1.0
    np.testing.assert_allclose(mine.detach().float().numpy(), want, rtol=0.02, atol=0.02 * scale + 1e-3)


@pytest.mark.parametrize("name", ["layer_norm", "softmax", "sum", "cumsum", "mse_loss", "addmm",
                                  "linear", "inverse", "reflect_pad2d"])
def test_gradients_come_back_in_each_inputs_dtype(name):
    """A float32 leaf gets a float32 gradient and a bfloat16 leaf a bfloat16 one, whichever
    way autocast cast them, with PyTorch's values."""
    torch = torch_or_skip()
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in OPS[name][1]]
    grads = {}
    for lib in (genesis, torch):
        leaves = [lib.tensor(array).to(lib.bfloat16 if i == 0 else lib.float32).requires_grad_()
                  for i, array in enumerate(arrays)]
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = OPS[name][0](lib, lib.nn.functional, *leaves)
        out.float().pow(2).sum().backward()
        grads[lib.__name__] = leaves
    for mine, theirs in zip(grads["genesis"], grads["torch"]):
        assert mine.grad.dtype is mine.dtype
        assert mine.grad.dtype.name == str(theirs.grad.dtype).removeprefix("torch.")
        want = theirs.grad.float().numpy()
        np.testing.assert_allclose(mine.grad.float().numpy(), want, rtol=0.05,
                                   atol=0.05 * float(np.abs(want).max()) + 1e-3)


def _bfloat16(*shape):
    return genesis.randn(*shape).to(genesis.bfloat16)


def test_cuda_rules_apply_to_the_dtype_first_form_on_every_device():
    """genesis's autocast(dtype) form names no device type: it runs CPU tensors by CUDA's
    lists, as before."""
    x = _bfloat16(3, 4)
    with genesis.autocast(genesis.bfloat16):
        assert x.sum().dtype is genesis.float32
        assert x.softmax(-1).dtype is genesis.float32
        assert x.cumsum(1).dtype is genesis.float32
        assert genesis.nn.functional.layer_norm(x, (4,)).dtype is genesis.float32
        assert genesis.linalg.vector_norm(x).dtype is genesis.float32
        assert genesis.mv(genesis.randn(2, 3), genesis.randn(3)).dtype is genesis.bfloat16
        assert genesis.addmv(genesis.randn(2), genesis.randn(2, 3),
                             genesis.randn(3)).dtype is genesis.bfloat16
        # CUDA promotes dot, bilinear and tensordot to the widest input
        assert genesis.dot(_bfloat16(3), genesis.randn(3)).dtype is genesis.float32
        assert genesis.tensordot(genesis.randn(2, 3), genesis.randn(3, 2), 1).dtype is genesis.float32
        assert genesis.nn.functional.bilinear(_bfloat16(2, 3), genesis.randn(2, 4),
                                              genesis.randn(5, 3, 4)).dtype is genesis.float32
        # an addbmm's batch sum stays in the lower dtype
        assert genesis.addbmm(genesis.randn(2, 2), genesis.randn(3, 2, 4),
                              genesis.randn(3, 4, 2)).dtype is genesis.bfloat16


def test_the_global_switch_follows_cudas_rules():
    try:
        genesis.enable_autocast = True
        assert genesis.ones(2, 2).to(genesis.float16).sum().dtype is genesis.float32
    finally:
        genesis.enable_autocast = False


def test_autocast_cuda_leaves_cpu_tensors_alone_as_in_pytorch():
    x, a = _bfloat16(3, 4), genesis.randn(3, 4)
    with genesis.autocast("cuda", dtype=genesis.bfloat16):
        assert x.sum().dtype is genesis.bfloat16 and x.softmax(-1).dtype is genesis.bfloat16
        assert (a @ a.T).dtype is genesis.float32
        with genesis.autocast("cpu", dtype=genesis.bfloat16):
            assert (a @ a.T).dtype is genesis.bfloat16 and x.sum().dtype is genesis.bfloat16
        assert (a @ a.T).dtype is genesis.float32


def test_per_device_queries_match_pytorchs_on_the_cpu_side():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            assert lib.is_autocast_enabled("cpu") and not lib.is_autocast_enabled("cuda")
            assert not lib.is_autocast_enabled()  # no argument: CUDA's
            assert lib.get_autocast_dtype("cpu") is lib.bfloat16
            assert lib.get_autocast_dtype("cuda") is lib.float16  # the default
            with lib.autocast("cuda", enabled=False):
                assert lib.is_autocast_enabled("cpu")
            with lib.autocast("cpu", enabled=False):
                assert not lib.is_autocast_enabled("cpu")
        assert not lib.is_autocast_enabled("cpu")
    with genesis.autocast("cpu"):
        assert genesis.is_autocast_cpu_enabled()


def test_a_checkpoint_recomputes_under_the_cpu_rules_its_forward_ran_in():
    from genesis.utils.checkpoint import checkpoint

    seen = []

    def block(x):
        out = genesis.nn.functional.layer_norm(x @ x, (3,))
        seen.append(out.dtype)
        return out

    x = genesis.randn(3, 3, requires_grad=True)
    with genesis.autocast("cpu", dtype=genesis.bfloat16):
        loss = checkpoint(block, x, use_reentrant=False, early_stop=False).float().sum()
    loss.backward()  # outside autocast, under CUDA's rules layer_norm would give float32
    assert seen == [genesis.bfloat16, genesis.bfloat16]
    assert x.grad.dtype is genesis.float32


def test_a_users_function_may_give_one_policy_or_a_rule_per_device():
    class Lowered(genesis.autograd.Function):
        autocast_policy = "lower"

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    class CudaOnly(Lowered):
        autocast_policy = AutocastRule(cuda="lower", cpu=None)

    x = genesis.randn(2)
    with genesis.autocast("cpu", dtype=genesis.bfloat16):
        assert Lowered.apply(x).dtype is genesis.bfloat16
        assert CudaOnly.apply(x).dtype is genesis.float32
    with genesis.autocast("cuda", dtype=genesis.bfloat16):
        assert CudaOnly.apply(x).dtype is genesis.float32  # a CPU tensor: left alone
    with genesis.autocast(genesis.bfloat16):  # every device, by CUDA's rules
        assert CudaOnly.apply(x).dtype is genesis.bfloat16
    with pytest.raises(ValueError, match="autocast_policy"):
        rule_of("float64")


def _attention_model(nn):
    class Attention(nn.Module):
        """Linear + LayerNorm + softmax attention with a residual, as a transformer block."""

        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(8, 16)
            self.norm = nn.LayerNorm(16)
            self.query, self.key, self.value = nn.Linear(16, 16), nn.Linear(16, 16, bias=False), \
                nn.Linear(16, 16)
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            h = self.embed(x)
            n = self.norm(h)
            scores = self.query(n) @ self.key(n).transpose(-2, -1) / 4.0
            h = h + scores.softmax(-1) @ self.value(n)
            return self.head(h.mean(1)), h.pow(2).mean()

    return Attention()


def _train(lib, state, x, y, steps=3):
    model = _attention_model(lib.nn)
    model.load_state_dict({key: lib.tensor(value) for key, value in state.items()})
    optimizer = lib.optim.AdamW(model.parameters(), lr=1e-2)
    criterion = lib.nn.CrossEntropyLoss()
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        with lib.autocast("cpu", dtype=lib.bfloat16):
            logits, activity = model(lib.tensor(x))
            loss = criterion(logits, lib.tensor(y)) + 0.01 * activity
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("seed", range(3))
def test_a_bfloat16_training_run_follows_pytorchs(seed):
    """The first loss (the forward alone) is PyTorch's to float32 rounding; after two AdamW
    steps the bfloat16 gradients' roundings (PyTorch's LayerNorm weight gradients round
    partial sums) leave the losses about 1e-4 apart."""
    torch = torch_or_skip()
    genesis.manual_seed(seed)
    rng = np.random.default_rng(seed)
    state = {key: value.numpy() for key, value in _attention_model(genesis.nn).state_dict().items()}
    x = rng.standard_normal((6, 5, 8)).astype(np.float32)
    y = rng.integers(0, 4, 6)
    mine, theirs = _train(genesis, state, x, y), _train(torch, state, x, y)
    assert mine[0] == pytest.approx(theirs[0], abs=1e-6)
    np.testing.assert_allclose(mine, theirs, atol=2e-3)

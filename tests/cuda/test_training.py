"""Training on "cuda": the same steps as on the CPU, random generators per device, mixed
precision, checkpointing. Each test runs on the fake GPU, and on the real one where there is
one (there the values must agree with the CPU's to float32 rounding)."""
import numpy as np
import pytest

import genesis
import genesis.nn as nn
import genesis.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.norm = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.gelu(self.norm(self.fc1(x))))


def _train(device: str, steps: int = 4, optimizer_class=genesis.optim.Adam, **options):
    genesis.manual_seed(0)
    model = Classifier()
    data = np.random.default_rng(1)
    x = genesis.tensor(data.standard_normal((32, 6)), dtype=genesis.float32, device=device)
    y = genesis.tensor(data.integers(0, 3, 32), device=device)
    model.to(device)
    optimizer = optimizer_class(model.parameters(), lr=0.05, **options)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, {name: p.detach().cpu().numpy() for name, p in model.named_parameters()}


@pytest.mark.parametrize("optimizer_class, options", [
    (genesis.optim.Adam, {}), (genesis.optim.SGD, {"momentum": 0.9}),
    (genesis.optim.AdamW, {"weight_decay": 0.1}), (genesis.optim.Adafactor, {"weight_decay": 0.1})])
def test_training_steps_match_the_cpu(cuda, optimizer_class, options):
    cpu_losses, cpu_params = _train("cpu", optimizer_class=optimizer_class, **options)
    gpu_losses, gpu_params = _train(cuda, optimizer_class=optimizer_class, **options)
    assert cpu_losses[-1] < cpu_losses[0]
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-4)
    for name, values in cpu_params.items():
        np.testing.assert_allclose(gpu_params[name], values, rtol=1e-4, atol=1e-5, err_msg=name)


def test_gradient_clipping_on_the_device(cuda):
    layer = nn.Linear(4, 4).to(cuda)
    (layer(genesis.randn(8, 4, device=cuda)) * 100).sum().backward()
    total = nn.utils.clip_grad_norm_(layer.parameters(), 1.0)
    assert total.device == genesis.device("cuda") and total.item() > 1.0
    norms = [float((p.grad * p.grad).sum()) for p in layer.parameters()]
    assert sum(norms) ** 0.5 == pytest.approx(1.0, rel=1e-4)


def test_dropout_and_init_draw_from_the_device_generator(cuda):
    genesis.manual_seed(3)
    first = F.dropout(genesis.ones(1000, device=cuda), 0.5, training=True)
    genesis.manual_seed(3)
    again = F.dropout(genesis.ones(1000, device=cuda), 0.5, training=True)
    assert first.device == genesis.device("cuda")
    assert first.tolist() == again.tolist() and 350 < (first == 0).sum().item() < 650
    weight = genesis.empty(64, 64, device=cuda)
    nn.init.kaiming_uniform_(weight)
    assert weight.device == genesis.device("cuda") and 0 < weight.abs().max().item() <= (6 / 64) ** 0.5


def test_seeds_are_per_device(cuda):
    genesis.manual_seed(0)
    cpu_first, gpu_first = genesis.randn(4).tolist(), genesis.randn(4, device=cuda).tolist()
    genesis.manual_seed(0)
    genesis.cuda.manual_seed(123)                  # the GPU's stream changes, the CPU's does not
    assert genesis.randn(4).tolist() == cpu_first
    gpu_reseeded = genesis.randn(4, device=cuda).tolist()
    assert gpu_reseeded != gpu_first
    genesis.cuda.manual_seed_all(123)
    assert genesis.randn(4, device=cuda).tolist() == gpu_reseeded
    genesis.manual_seed(0)                         # seeds every device again
    assert genesis.randn(4, device=cuda).tolist() == gpu_first


def test_rng_state_round_trip_on_the_device(cuda):
    state = genesis.get_rng_state("cuda")
    drawn = genesis.rand(5, device=cuda).tolist()
    assert genesis.rand(5, device=cuda).tolist() != drawn
    genesis.set_rng_state(state, "cuda")
    assert genesis.rand(5, device=cuda).tolist() == drawn


def test_checkpoint_replays_dropout_on_the_device(cuda):
    from genesis.utils.checkpoint import checkpoint

    weight = genesis.randn(8, 8, device=cuda, requires_grad=True)
    x = genesis.randn(4, 8, device=cuda, requires_grad=True)

    def block(inputs):
        return F.dropout(inputs @ weight, 0.5, training=True).tanh()

    genesis.manual_seed(7)
    block(x).sum().backward()
    direct = (x.grad.tolist(), weight.grad.tolist())
    x.grad = weight.grad = None
    genesis.manual_seed(7)
    checkpoint(block, x, use_reentrant=False).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.array(direct[0]), rtol=1e-6)
    np.testing.assert_allclose(weight.grad.cpu().numpy(), np.array(direct[1]), rtol=1e-6)


def test_autocast_runs_matmuls_in_float16_on_the_device(cuda):
    weight = genesis.randn(8, 8, device=cuda, requires_grad=True)
    x = genesis.randn(4, 8, device=cuda)
    with genesis.autocast():
        product = x @ weight
        total = product.softmax(-1).sum()
    assert product.dtype == genesis.float16 and product.device == genesis.device("cuda")
    assert total.dtype == genesis.float32
    total.backward()
    assert weight.grad.dtype == genesis.float32 and weight.grad.device == genesis.device("cuda")


def test_grad_scaler_trains_and_skips_overflowing_steps_on_the_device(cuda):
    genesis.manual_seed(0)
    model = Classifier().to(cuda)
    x = genesis.randn(16, 6, device=cuda)
    y = genesis.randint(0, 3, (16,), device=cuda)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
    scaler = genesis.GradScaler(init_scale=2.0 ** 10)
    losses = []
    for _ in range(5):
        optimizer.zero_grad()
        with genesis.autocast():
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < losses[0] and scaler.get_scale() == 2.0 ** 10
    before = model.fc1.weight.detach().cpu().numpy()
    optimizer.zero_grad()
    with genesis.autocast():
        loss = F.cross_entropy(model(x), y) * float("inf")
    scaler.scale(loss).backward()
    assert scaler.step(optimizer) is None
    scaler.update()
    assert scaler.get_scale() == 2.0 ** 9
    np.testing.assert_array_equal(model.fc1.weight.detach().cpu().numpy(), before)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_and_gradgradcheck_on_the_device(cuda, fast_mode):
    x = genesis.randn(3, 2, dtype=genesis.float64, device=cuda, requires_grad=True)
    w = genesis.randn(2, dtype=genesis.float64, device=cuda, requires_grad=True)
    function = lambda a, b: (a * b).sin().sum(1)  # noqa: E731
    assert genesis.autograd.gradcheck(function, (x, w), fast_mode=fast_mode)
    assert genesis.autograd.gradgradcheck(function, (x, w), fast_mode=fast_mode)

    class WrongSquare(genesis.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return grad * 3 * a
    with pytest.raises(genesis.autograd.GradcheckError, match="analytical and numerical gradients differ"):
        genesis.autograd.gradcheck(WrongSquare.apply, (x,), fast_mode=fast_mode)

"""Tensors on "cuda": moving both ways, creating there, reading values back on the host,
modules moving their parameters in place. Each test runs on the fake GPU, and on the real
one where there is one."""
import pickle

import numpy as np
import pytest

import genesis

CREATORS = {
    "zeros": lambda device: genesis.zeros(2, 3, device=device),
    "ones": lambda device: genesis.ones((2, 3), dtype=genesis.float64, device=device),
    "full": lambda device: genesis.full((2,), 7, device=device),
    "empty": lambda device: genesis.empty(4, device=device),
    "randn": lambda device: genesis.randn(3, 2, device=device),
    "rand": lambda device: genesis.rand(5, device=device),
    "randint": lambda device: genesis.randint(0, 10, (6,), device=device),
    "arange": lambda device: genesis.arange(0, 1, 0.25, device=device),
    "linspace": lambda device: genesis.linspace(0, 1, 5, device=device),
    "eye": lambda device: genesis.eye(3, device=device),
    "tensor": lambda device: genesis.tensor([[1, 2], [3, 4]], device=device),
    "tensor of a cpu tensor": lambda device: genesis.tensor(genesis.arange(3.0), device=device),
    "zeros_like": lambda device: genesis.zeros_like(genesis.ones(2, device=device)),
    "randn_like": lambda device: genesis.randn_like(genesis.ones(2, device=device)),
    "full_like": lambda device: genesis.full_like(genesis.ones(2, device=device), 3.0),
}


@pytest.mark.parametrize("name", CREATORS)
def test_creation_on_the_device(cuda, name):
    made = CREATORS[name](cuda)
    assert made.device == genesis.device("cuda:0") and made.is_cuda
    assert made.cpu().device == genesis.device("cpu")


def test_round_trip_keeps_values_dtype_and_shape(cuda):
    host = genesis.from_numpy(np.arange(12, dtype=np.float64).reshape(3, 4))
    for moved in (host.cuda(), host.to("cuda"), host.to(genesis.device("cuda:0")), host.cuda(0)):
        assert moved.device == genesis.device("cuda") and moved.dtype == genesis.float64
        back = moved.cpu()
        assert back.device == genesis.device("cpu")
        np.testing.assert_array_equal(back.numpy(), host.numpy())
    assert host.to("cpu") is host
    on_gpu = host.cuda()
    assert on_gpu.cuda() is on_gpu and on_gpu.to("cuda:0") is on_gpu


def test_moving_a_non_contiguous_tensor(cuda):
    host = genesis.tensor(np.arange(12.0).reshape(3, 4)).transpose(0, 1)[::2]
    np.testing.assert_array_equal(host.cuda().cpu().numpy(), host.numpy())


def test_move_and_cast_together(cuda):
    moved = genesis.tensor([1.5, 2.5]).to("cuda", genesis.float64)
    assert moved.device == genesis.device("cuda") and moved.dtype == genesis.float64
    assert moved.to(genesis.float16).device == genesis.device("cuda")
    like = genesis.zeros(1, dtype=genesis.int32, device="cuda")
    assert genesis.tensor([1.0]).to(like).device == like.device


def test_gradient_flows_back_across_the_move(cuda):
    leaf = genesis.tensor([1.0, 2.0, 3.0], requires_grad=True)
    on_gpu = leaf.to("cuda")
    assert on_gpu.grad_fn is not None
    (on_gpu * on_gpu).sum().backward()
    assert leaf.grad.device == genesis.device("cpu")
    assert leaf.grad.tolist() == [2.0, 4.0, 6.0]


def test_leaf_on_the_device_gets_its_gradient_there(cuda):
    weight = genesis.randn(3, 2, device="cuda", requires_grad=True)
    x = genesis.randn(4, 3, device="cuda")
    (x @ weight).relu().sum().backward()
    assert weight.grad.device == genesis.device("cuda") and weight.grad.shape == (3, 2)


def test_numpy_of_a_gpu_tensor_says_cpu_first(cuda):
    on_gpu = genesis.ones(2, device="cuda")
    with pytest.raises(TypeError, match=r"use tensor.cpu\(\) to copy it to host memory first"):
        on_gpu.numpy()
    with pytest.raises(TypeError, match=r"use tensor.cpu\(\)"):
        np.asarray(on_gpu)
    assert on_gpu.cpu().numpy().tolist() == [1.0, 1.0]
    assert np.asarray(on_gpu.cpu()).tolist() == [1.0, 1.0]
    assert on_gpu.numpy(force=True).tolist() == [1.0, 1.0]


def test_item_tolist_repr_copy_to_the_host(cuda):
    on_gpu = genesis.tensor([[1.5, -2.0]], device="cuda", requires_grad=True)
    assert on_gpu.tolist() == [[1.5, -2.0]]
    assert on_gpu[0, 1].item() == -2.0 and float(on_gpu[0, 0]) == 1.5
    assert bool(on_gpu[0, 0] > 0) and int(genesis.tensor(3, device="cuda")) == 3
    assert repr(on_gpu) == "tensor([[ 1.5000, -2.0000]], device='cuda:0', requires_grad=True)"
    assert repr(genesis.tensor([1, 2], device="cuda")) == "tensor([1, 2], device='cuda:0')"
    assert f"{on_gpu[0, 0]:.2f}" == "1.50"


def test_pickle_keeps_the_device(cuda):
    on_gpu = genesis.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    again = pickle.loads(pickle.dumps(on_gpu))
    assert again.device == genesis.device("cuda") and again.requires_grad
    assert again.tolist() == [1.0, 2.0]


def test_save_and_load_with_map_location(cuda, tmp_path):
    path = tmp_path / "weights.pt"
    genesis.save({"w": genesis.arange(3.0, device="cuda")}, path)
    on_host = genesis.load(path, map_location="cpu")
    assert on_host["w"].device == genesis.device("cpu") and on_host["w"].tolist() == [0.0, 1.0, 2.0]
    back = genesis.load(path, map_location="cuda")
    assert back["w"].device == genesis.device("cuda")


def test_copy_into_a_tensor_on_another_device(cuda):
    target = genesis.zeros(3, device="cuda")
    target.copy_(genesis.tensor([1.0, 2.0, 3.0]))
    assert target.device == genesis.device("cuda") and target.tolist() == [1.0, 2.0, 3.0]
    host = genesis.zeros(3)
    host.copy_(target * 2)
    assert host.tolist() == [2.0, 4.0, 6.0]


def test_module_to_cuda_keeps_parameter_identity(cuda):
    model = genesis.nn.Sequential(genesis.nn.Linear(3, 4), genesis.nn.BatchNorm1d(4),
                                  genesis.nn.Linear(4, 2))
    params = list(model.parameters())
    values = [p.tolist() for p in params]
    assert model.to("cuda") is model
    assert all(a is b for a, b in zip(model.parameters(), params))
    assert all(p.device == genesis.device("cuda") for p in params)
    assert [p.tolist() for p in params] == values
    assert model[1].running_mean.device == genesis.device("cuda")
    assert model(genesis.randn(5, 3, device="cuda")).device == genesis.device("cuda")
    model.cpu()
    assert all(p.device == genesis.device("cpu") for p in params)
    assert model[1].running_var.device == genesis.device("cpu")


def test_module_cuda_moves_existing_gradients(cuda):
    layer = genesis.nn.Linear(2, 1)
    layer(genesis.ones(1, 2)).sum().backward()
    layer.cuda()
    assert layer.weight.grad.device == genesis.device("cuda")
    assert layer.weight.grad.tolist() == [[1.0, 1.0]]


def test_optimizer_made_before_the_move_trains_after_it(cuda):
    genesis.manual_seed(0)
    reference = genesis.nn.Linear(3, 1)
    moved = genesis.nn.Linear(3, 1)
    moved.load_state_dict(reference.state_dict())
    x, y = genesis.randn(8, 3), genesis.randn(8, 1)
    runs = []
    for model, device in ((reference, "cpu"), (moved, cuda)):
        optimizer = genesis.optim.Adam(model.parameters(), lr=0.1)
        model.to(device)
        for _ in range(3):
            optimizer.zero_grad()
            genesis.nn.functional.mse_loss(model(x.to(device)), y.to(device)).backward()
            optimizer.step()
        state = optimizer.state[model.weight]
        assert state["exp_avg"].device == genesis.device(device)
        runs.append(model.weight.detach().cpu().numpy())
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-5, atol=1e-6)


def test_module_to_another_fake_gpu(two_fake_gpus):
    layer = genesis.nn.Linear(2, 2).to("cuda:1")
    assert layer.weight.device == genesis.device("cuda:1")
    assert layer(genesis.ones(1, 2, device="cuda:1")).device == genesis.device("cuda:1")
    moved = genesis.ones(2, device="cuda:0").to("cuda:1")
    assert moved.device == genesis.device("cuda:1")


def test_pinned_host_memory_for_copies_to_the_gpu(cuda):
    x = genesis.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    pinned = x.pin_memory()
    assert pinned.is_pinned() and not x.is_pinned() and pinned.device.type == "cpu"
    assert pinned.pin_memory() is pinned and pinned[0].is_pinned()  # a view of pinned memory
    assert pinned.tolist() == x.tolist()
    (pinned.to(cuda, non_blocking=True) * 2).sum().backward()  # the gradient passes through
    assert x.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    on_gpu = pinned.cuda(non_blocking=True)
    assert on_gpu.tolist() == x.tolist() and not on_gpu.is_pinned()
    with pytest.raises(RuntimeError, match="cannot pin a cuda:0 tensor; only CPU tensors"):
        on_gpu.pin_memory()


def test_pinning_without_a_gpu_says_it_needs_one(monkeypatch):
    from genesis.device import Device, DeviceError
    monkeypatch.setenv("GENESIS_FAKE_CUDA", "0")
    for device in list(Device._cache.values()):
        if device.type == "cuda":
            monkeypatch.setattr(device, "_xp", None)
    monkeypatch.setitem(__import__("sys").modules, "cupy", None)  # as where CuPy is missing
    with pytest.raises(DeviceError, match="pin_memory needs a CUDA device"):
        genesis.tensor([1.0]).pin_memory()

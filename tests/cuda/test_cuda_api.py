"""`genesis.cuda` and device parsing: values under the fake switch, behaviour without CuPy,
and the real figures on a GPU."""
import importlib.util

import pytest

import genesis
from genesis.device import DeviceError

no_cupy = pytest.mark.skipif(importlib.util.find_spec("cupy") is not None,
                             reason="CuPy is installed: this checks a machine without it")


def test_fake_gpu_answers_like_one_idle_gpu(fake_cuda):
    cuda = genesis.cuda
    assert cuda.is_available() and cuda.device_count() == 1 and cuda.current_device() == 0
    assert cuda.get_device_name() == cuda.FAKE_DEVICE_NAME
    cuda.synchronize()
    cuda.synchronize("cuda:0")
    cuda.reset_peak_memory_stats()
    cuda.empty_cache()
    assert (cuda.memory_allocated(), cuda.max_memory_allocated(), cuda.memory_reserved()) == (0, 0, 0)


def test_fake_switch_counts_gpus(two_fake_gpus):
    assert genesis.cuda.device_count() == 2
    assert genesis.zeros(1, device="cuda:1").device == genesis.device("cuda:1")
    with pytest.raises(DeviceError, match="cuda:2 was requested but GENESIS_FAKE_CUDA provides 2"):
        genesis.zeros(1, device="cuda:2")
    with pytest.raises(DeviceError, match="cuda:5"):
        genesis.cuda.synchronize(5)


def test_cuda_functions_refuse_cpu_devices(fake_cuda):
    with pytest.raises(ValueError, match="expected a CUDA device, got cpu"):
        genesis.cuda.memory_allocated("cpu")


@no_cupy
def test_without_cupy_nothing_raises_that_pytorch_answers(monkeypatch):
    monkeypatch.delenv("GENESIS_FAKE_CUDA", raising=False)
    cuda = genesis.cuda
    assert cuda.is_available() is False and cuda.device_count() == 0
    assert (cuda.memory_allocated(), cuda.max_memory_allocated(), cuda.memory_reserved()) == (0, 0, 0)
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    cuda.manual_seed(1)       # as in PyTorch: silently kept for when a GPU is used
    cuda.manual_seed_all(1)
    for call in (cuda.current_device, cuda.synchronize, cuda.get_device_name):
        with pytest.raises(DeviceError, match="CuPy is not importable"):
            call()


@no_cupy
def test_tensor_on_cuda_without_cupy_says_how_to_install(monkeypatch):
    monkeypatch.delenv("GENESIS_FAKE_CUDA", raising=False)
    monkeypatch.setattr(genesis.device("cuda:3"), "_xp", None)
    with pytest.raises(DeviceError, match=r"pip install 'genesis-autograd\[cuda\]'"):
        genesis.ones(2, device="cuda:3")


def test_device_spellings(fake_cuda):
    assert genesis.device("cuda") is genesis.device("cuda:0") is genesis.device(0)
    assert genesis.device(" CUDA:0 ") is genesis.device("cuda")
    assert genesis.device(genesis.device("cuda")) is genesis.device("cuda")
    assert str(genesis.device("cuda")) == "cuda:0"
    assert repr(genesis.device("cuda")) == "device(type='cuda', index=0)"
    with pytest.raises(DeviceError, match="unknown device 'cuda:x'"):
        genesis.device("cuda:x")


def test_real_gpu_figures(real_cuda):
    cuda = genesis.cuda
    assert cuda.is_available() and cuda.device_count() >= 1
    assert isinstance(cuda.get_device_name(), str) and cuda.get_device_name()
    cuda.synchronize()
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    before = cuda.memory_allocated()
    block = genesis.zeros(1024, 1024, device="cuda")          # 4 MiB
    held = cuda.memory_allocated()
    assert held - before >= 4 * 2 ** 20
    del block
    assert cuda.memory_allocated() <= held - 4 * 2 ** 20       # back in the pool, not in use
    assert cuda.max_memory_allocated() >= held                 # the peak remembers it
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() < held


def test_real_gpu_peak_counts_temporaries_never_queried(real_cuda):
    cuda = genesis.cuda
    cuda.reset_peak_memory_stats()
    start = cuda.memory_allocated()
    x = genesis.ones(2048, 1024, device="cuda")                # 8 MiB
    (x * 2).sum()                                              # a temporary of 8 MiB, gone now
    assert cuda.max_memory_allocated() - start >= 16 * 2 ** 20


def test_set_device_makes_a_bare_cuda_mean_that_gpu(two_fake_gpus):
    assert genesis.device("cuda") == genesis.device("cuda:0")
    genesis.cuda.set_device(1)
    assert genesis.cuda.current_device() == 1 and str(genesis.device("cuda")) == "cuda:1"
    assert genesis.zeros(2, device="cuda").device == genesis.device("cuda:1")
    assert genesis.ones(2).cuda().get_device() == 1
    genesis.cuda.set_device("cuda:0")
    assert genesis.cuda.current_device() == 0
    with pytest.raises(DeviceError, match="cuda:2 was requested"):
        genesis.cuda.set_device(2)
    assert genesis.cuda.current_device() == 0


def test_device_context_restores_the_previous_gpu_and_is_per_thread(two_fake_gpus):
    import threading

    seen = []
    with genesis.cuda.device(1):
        assert genesis.randn(2, device="cuda").device == genesis.device("cuda:1")
        worker = threading.Thread(target=lambda: seen.append(genesis.cuda.current_device()))
        worker.start()
        worker.join()
    assert seen == [0]  # another thread has its own current GPU
    assert genesis.cuda.current_device() == 0


def test_device_properties_of_the_fake_gpu(fake_cuda):
    properties = genesis.cuda.get_device_properties(0)
    assert properties.name == genesis.cuda.FAKE_DEVICE_NAME
    assert (properties.major, properties.minor, properties.total_memory) == (0, 0, 0)
    assert repr(properties).startswith("DeviceProperties(name='genesis fake CUDA device")


def test_tensor_conveniences_follow_the_tensor_to_its_device(fake_cuda):
    gpu = genesis.randn(3, dtype=genesis.float64).cuda(non_blocking=True)
    assert gpu.get_device() == 0 and genesis.ones(1).get_device() == -1
    for made in (gpu.new_zeros(2, 2), gpu.new_ones((2,)), gpu.new_empty(1), gpu.new_full((2,), 7),
                 gpu.new_tensor([1, 2])):
        assert made.device == gpu.device and made.dtype is genesis.float64
    assert gpu.new_tensor([1, 2]).tolist() == [1.0, 2.0]
    assert gpu.new_zeros(2, dtype=genesis.int64, device="cpu").device == genesis.device("cpu")
    moved = genesis.tensor([1, 2]).type_as(gpu)
    assert moved.device == gpu.device and moved.dtype is genesis.float64
    leaf = genesis.ones(2, requires_grad=True)
    leaf.type_as(gpu).sum().backward()
    assert leaf.grad.device == genesis.device("cpu") and leaf.grad.tolist() == [1.0, 1.0]


def test_a_real_gpu_other_than_the_current_one_is_refused_with_the_way_out(monkeypatch):
    """CuPy allocates and launches on the current GPU: using cuda:5 while cuda:0 is current
    would put its arrays on the wrong GPU, so it is an error naming set_device (the check
    runs on real GPUs only; here a stand-in namespace plays the GPU's)."""
    import types

    from genesis.device import Device, current_gpu

    gpu = Device("cuda", 5)
    stand_in = types.ModuleType("cupy")
    monkeypatch.setattr(gpu, "_xp", stand_in)
    monkeypatch.setattr(gpu, "_real_gpu", True)
    monkeypatch.setattr(current_gpu, "index", 0)
    with pytest.raises(DeviceError, match=r"cuda:5 is not the current GPU \(cuda:0\).*set_device\(5\)"):
        gpu.xp
    monkeypatch.setattr(current_gpu, "index", 5)
    assert gpu.xp is stand_in

"""Tensors in shared memory (Tensor.share_memory_, Module.share_memory) and how
genesis.multiprocessing sends them to other processes: shared ones by reference, others as
copies; the Hogwild pattern (workers stepping one shared model) under fork and spawn."""
import multiprocessing
import pickle

import numpy as np
import pytest

import genesis
import genesis.multiprocessing as mp
from genesis.multiprocessing.reductions import reduce_tensor
from multiprocessing.reduction import ForkingPickler
from tests.helpers import torch_or_skip


def test_share_memory_keeps_values_and_identity_and_is_idempotent():
    x = genesis.arange(6.0).reshape(2, 3)
    version = x._version
    assert x.share_memory_() is x and x.is_shared()
    first = x._data
    assert x.share_memory_()._data is first  # already shared: left as it is
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and x._version == version
    view = x[1]  # a view taken after sharing is on the shared memory too
    assert view.is_shared() and not genesis.zeros(1).is_shared()


def test_share_memory_matches_pytorch_on_what_is_shared():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        x = lib.ones(3, requires_grad=True)
        assert not x.is_shared()
        assert x.share_memory_() is x and x.is_shared() and x.requires_grad
        linear = lib.nn.Linear(2, 2)
        assert linear.share_memory() is linear
        assert all(p.is_shared() for p in linear.parameters())


def test_module_share_memory_keeps_parameters_so_optimizers_still_step_them():
    model = genesis.nn.Sequential(genesis.nn.Linear(3, 2), genesis.nn.BatchNorm1d(2))
    params = list(model.parameters())
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
    model.share_memory()
    assert [p is q for p, q in zip(params, model.parameters())] == [True] * 4
    assert all(b.is_shared() for b in model.buffers())
    model(genesis.randn(4, 3)).sum().backward()
    before = params[0].detach().clone()
    optimizer.step()
    assert params[0].is_shared() and not genesis.equal(before, params[0].detach())


def test_a_shared_tensor_crosses_a_queue_by_reference_and_others_by_copy():
    queue = mp.SimpleQueue()
    shared, private = genesis.zeros(3).share_memory_(), genesis.zeros(3)
    queue.put(shared)
    queue.put(private)
    received_shared, received_private = queue.get(), queue.get()
    received_shared[1] = 5.0
    received_private[1] = 5.0
    assert shared.tolist() == [0.0, 5.0, 0.0] and private.tolist() == [0.0, 0.0, 0.0]
    assert received_shared.is_shared() and not received_private.is_shared()


def test_parameters_and_strided_views_keep_their_kind_and_layout():
    weight = genesis.nn.Parameter(genesis.arange(12.0).reshape(3, 4)).share_memory_()
    received = ForkingPickler.loads(ForkingPickler.dumps(weight))
    assert isinstance(received, genesis.nn.Parameter) and received.requires_grad
    assert received.tolist() == weight.tolist()
    column = weight.detach()[:, 1]  # a strided view of the shared memory
    received_column = ForkingPickler.loads(ForkingPickler.dumps(column))
    received_column.fill_(-1.0)
    assert weight[:, 1].tolist() == [-1.0, -1.0, -1.0] and weight[:, 0].tolist() == [0.0, 4.0, 8.0]
    frozen_here = genesis.nn.Parameter(genesis.ones(2), requires_grad=False).share_memory_()
    frozen = ForkingPickler.loads(ForkingPickler.dumps(frozen_here))
    assert isinstance(frozen, genesis.nn.Parameter) and not frozen.requires_grad


def test_a_tensor_whose_sharer_let_it_go_is_a_clear_error():
    message = ForkingPickler.dumps(genesis.ones(2).share_memory_())  # the only holder is gone
    with pytest.raises(RuntimeError, match="the process that shared it released it"):
        ForkingPickler.loads(message)


def test_a_recorded_result_that_requires_grad_is_refused_as_pytorch():
    torch = torch_or_skip()
    import torch.multiprocessing  # noqa: F401  (registers PyTorch's reductions)
    messages = []
    for lib in (genesis, torch):
        result = lib.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError) as raised:
            ForkingPickler.dumps(result)
        messages.append(str(raised.value))
    assert messages[0] == messages[1]
    assert reduce_tensor(genesis.ones(2).detach())[0] is not None


def test_plain_pickle_still_copies_shared_tensors():
    shared = genesis.ones(2).share_memory_()
    copy = pickle.loads(pickle.dumps(shared))
    copy.fill_(3.0)
    assert shared.tolist() == [1.0, 1.0] and not copy.is_shared()


def _hogwild_worker(rank, model, steps):
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(steps):
        optimizer.zero_grad()
        model(genesis.ones(1, 2)).sum().backward()  # d/dbias = 1: each step lowers bias by 0.5
        optimizer.step()


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_hogwild_workers_step_the_parents_shared_model(start_method):
    if start_method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {start_method} here")
    model = genesis.nn.Linear(2, 1)
    with genesis.no_grad():
        model.bias.fill_(0.0)
    model.share_memory()
    context = mp.get_context(start_method)
    workers = [context.Process(target=_hogwild_worker, args=(rank, model, 3)) for rank in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0, 0]
    np.testing.assert_allclose(model.bias.detach().numpy(), [-3.0])  # 2 workers x 3 steps x 0.5


def test_sharing_strategies_are_pytorchs():
    torch = torch_or_skip()
    import torch.multiprocessing as torch_mp
    assert mp.get_all_sharing_strategies() == torch_mp.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == torch_mp.get_sharing_strategy()
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("carrier_pigeon")

"""DistributedDataParallel and DataParallel on one process: the wrapped module, called as it
is, under PyTorch's names ("module." prefixes), with PyTorch's errors."""
import pytest

import genesis
import genesis.nn as nn
from genesis.nn.parallel import DataParallel, DistributedDataParallel


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x, scale=1.0):
        return self.fc2(genesis.relu(self.fc1(x))) * scale


KEYS = ["module.fc1.weight", "module.fc1.bias", "module.fc2.weight", "module.fc2.bias"]


def test_ddp_needs_a_process_group_as_pytorchs(real_dist):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as mine:
        DistributedDataParallel(Net())
    with pytest.raises(ValueError) as theirs:
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("device_ids", [[0], ["cpu"]])
def test_ddp_refuses_device_ids_for_a_module_on_the_cpu_as_pytorch(one_process, device_ids):
    with pytest.raises(ValueError, match=r"device_ids and output_device arguments only work .* "
                                         r"leave device_ids out"):
        DistributedDataParallel(Net(), device_ids=device_ids)
    for accepted in (None, []):  # as PyTorch: no device_ids, or an empty list
        assert DistributedDataParallel(Net(), device_ids=accepted).device_ids == accepted


def test_ddp_wraps_and_forwards(one_process):
    net = Net()
    model = DistributedDataParallel(net, device_ids=None, output_device=None,
                                    find_unused_parameters=False, broadcast_buffers=True,
                                    gradient_as_bucket_view=True, static_graph=True)
    x = genesis.randn(3, 4)
    assert model.module is net
    assert genesis.equal(model(x, scale=2.0), net(x, scale=2.0))
    assert list(model.state_dict()) == [name for name, _ in model.named_parameters()] == KEYS
    assert model.process_group is one_process.group.WORLD


def test_names_and_repr_are_pytorchs(torch_gloo, one_process):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(torch.nn.Linear(2, 2)))
    mine = DistributedDataParallel(nn.Sequential(nn.Linear(2, 2)))
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert repr(mine) == repr(theirs)
    assert type(mine).__name__ == type(theirs).__name__ == "DistributedDataParallel"


def test_gradients_are_the_modules_own(one_process):
    genesis.manual_seed(0)
    net = Net()
    plain = Net()
    plain.load_state_dict(net.state_dict())
    x = genesis.randn(5, 4)
    DistributedDataParallel(net)(x).sum().backward()
    plain(x).sum().backward()
    for (name, mine), (_, expected) in zip(net.named_parameters(), plain.named_parameters()):
        assert genesis.equal(mine.grad, expected.grad), name


def test_no_sync_accumulates_and_join_runs_its_block(one_process):
    model = DistributedDataParallel(Net())
    x = genesis.randn(2, 4)
    with model.no_sync():
        assert model.require_backward_grad_sync is False
        model(x).sum().backward()
    assert model.require_backward_grad_sync is True
    once = model.module.fc1.weight.grad.clone()
    model(x).sum().backward()
    assert genesis.allclose(model.module.fc1.weight.grad, once * 2)
    with model.join():
        model(x)


def test_a_module_without_trainable_parameters_is_refused_as_pytorch(one_process):
    with pytest.raises(RuntimeError, match="^DistributedDataParallel is not needed when a module "
                                           "doesn't have any parameter that requires a gradient.$"):
        DistributedDataParallel(nn.ReLU())


def test_a_checkpoint_of_model_module_loads_into_the_bare_model(one_process, tmp_path):
    model = DistributedDataParallel(Net())
    genesis.save(model.module.state_dict(), tmp_path / "checkpoint.pt")
    fresh = Net()
    fresh.load_state_dict(genesis.load(tmp_path / "checkpoint.pt"))
    assert genesis.equal(fresh.fc2.bias, model.module.fc2.bias)


def test_data_parallel_wraps_and_forwards():
    net = Net()
    model = DataParallel(net)
    x = genesis.randn(3, 4)
    assert model.module is net and genesis.equal(model(x), net(x))
    assert list(model.state_dict()) == KEYS
    assert nn.DataParallel is DataParallel

"""Module: registration and naming, state dicts, modes, dtype/device moves, printing."""
import copy

import numpy as np
import pytest

import genesis
from genesis import nn
from tests.helpers import torch_or_skip


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)
        self.scale = nn.Parameter(genesis.ones(2))
        self.register_buffer("running", genesis.zeros(2))
        self.register_buffer("scratch", genesis.zeros(2), persistent=False)
        self.register_buffer("count", genesis.tensor(0))

    def forward(self, x):
        return self.linear(x) * self.scale + self.running


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(Block(), nn.Tanh())
        self.head = nn.Linear(2, 1)

    def forward(self, x):
        return self.head(self.encoder(x))


def test_parameters_buffers_and_children_are_registered_with_dotted_names():
    net = Net()
    # a module's own parameters come before its children's, as in PyTorch
    assert [name for name, _ in net.named_parameters()] == [
        "encoder.0.scale", "encoder.0.linear.weight", "encoder.0.linear.bias",
        "head.weight", "head.bias"]
    assert [name for name, _ in net.named_buffers()] == [
        "encoder.0.running", "encoder.0.scratch", "encoder.0.count"]
    assert [name for name, _ in net.named_modules()] == [
        "", "encoder", "encoder.0", "encoder.0.linear", "encoder.1", "head"]
    assert [name for name, _ in net.named_children()] == ["encoder", "head"]
    assert [name for name, _ in net.named_parameters(recurse=False)] == []
    assert len(list(net.parameters())) == 5 and len(list(net.buffers())) == 3
    assert net.get_parameter("encoder.0.linear.bias") is net.encoder[0].linear.bias
    assert net.get_submodule("encoder.0") is net.encoder[0]
    assert net.get_buffer("encoder.0.running") is net.encoder[0].running


def test_named_parameters_with_prefix():
    layer = nn.Linear(2, 2)
    assert [n for n, _ in layer.named_parameters(prefix="model")] == ["model.weight", "model.bias"]


def test_shared_parameters_and_modules_are_yielded_once():
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.Tanh(), shared)
    assert len(list(model.parameters())) == 2
    assert [name for name, _ in model.named_modules()] == ["", "0", "1"]
    # state_dict lists a shared module under each of its names, as PyTorch does
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    tied = nn.Module()
    tied.a = nn.Linear(2, 2)
    tied.b = nn.Linear(2, 2)
    tied.b.weight = tied.a.weight
    assert [name for name, _ in tied.named_parameters()] == ["a.weight", "a.bias", "b.bias"]


def test_setattr_rules():
    module = nn.Module()
    module.weight = nn.Parameter(genesis.zeros(2))
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'weight'"):
        module.weight = genesis.zeros(2)
    module.weight = None
    assert module.weight is None and list(module.parameters()) == []
    module.register_buffer("stat", genesis.zeros(1))
    with pytest.raises(TypeError, match="as buffer 'stat'"):
        module.stat = 3
    module.stat = genesis.ones(1)
    assert module.stat.tolist() == [1.0]
    module.child = nn.Tanh()
    with pytest.raises(TypeError, match="as child module 'child'"):
        module.child = 4
    module.plain = 5
    assert module.plain == 5 and "plain" not in module.state_dict()
    del module.child
    assert "child" not in dict(module.named_children())
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'missing'"):
        module.missing
    assert "stat" in dir(module)


def test_assigning_again_keeps_the_position_as_in_pytorch():
    """Tying a weight (`head.weight = embed.weight`) or replacing a child keeps the order of
    parameters(), state_dict() and so an optimizer's parameter list."""
    torch = torch_or_skip()

    def build(lib):
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = lib.nn.Embedding(5, 3)
                self.body = lib.nn.Linear(3, 3)
                self.head = lib.nn.Linear(3, 5)
                self.register_buffer("first", lib.zeros(1))
                self.register_buffer("second", lib.zeros(1))
                self.head.weight = lib.nn.Parameter(lib.zeros(5, 3))
                self.embed.weight = self.head.weight
                self.body = lib.nn.Linear(3, 3)
                self.first = lib.ones(1)

        model = Tied()
        return list(model.state_dict()), [name for name, _ in model.named_parameters()]

    assert build(genesis) == build(torch)


def test_assigning_before_init_and_bad_names_fail_clearly():
    class Forgetful(nn.Module):
        def __init__(self):
            self.weight = nn.Parameter(genesis.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Forgetful()

    class NoInit(nn.Module):
        def __init__(self):
            pass

    with pytest.raises(AttributeError, match=r"must call super\(\).__init__\(\)"):
        NoInit()(genesis.ones(1))
    module = nn.Module()
    with pytest.raises(KeyError, match="contain"):
        module.register_buffer("a.b", genesis.zeros(1))
    with pytest.raises(KeyError, match="already exists"):
        module.register_parameter("training", nn.Parameter(genesis.zeros(1)))
    with pytest.raises(TypeError, match="genesis.nn.Parameter or None required"):
        module.register_parameter("w", genesis.zeros(1))
    assert nn.Parameter(genesis.zeros(1, requires_grad=True) * 2).is_leaf
    with pytest.raises(TypeError, match="is not a Module subclass"):
        module.add_module("x", 3)
    with pytest.raises(NotImplementedError, match="missing the required \"forward\""):
        module(genesis.zeros(1))


def test_parameter_type_repr_and_sharing():
    data = genesis.tensor([1.0, 2.0])
    param = nn.Parameter(data)
    assert param.requires_grad and param.is_leaf
    assert repr(param) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert type(param * 2) is genesis.Tensor and type(param.detach()) is genesis.Tensor
    with genesis.no_grad():
        data.add_(1)  # same storage and version counter
    assert param.tolist() == [2.0, 3.0] and param._version == data._version
    frozen = nn.Parameter(genesis.tensor([1, 2]), requires_grad=False)
    assert not frozen.requires_grad
    copied = copy.deepcopy(param)
    assert type(copied) is nn.Parameter and copied.requires_grad
    assert copied._data is not param._data


def test_state_dict_round_trip_and_detached_values():
    source, target = Net(), Net()
    state = source.state_dict()
    assert list(state) == ["encoder.0.scale", "encoder.0.running", "encoder.0.count",
                           "encoder.0.linear.weight", "encoder.0.linear.bias", "head.weight",
                           "head.bias"]
    assert not state["head.weight"].requires_grad
    assert np.shares_memory(state["head.weight"].numpy(), source.head.weight.detach().numpy())
    assert source.state_dict(keep_vars=True)["head.weight"] is source.head.weight
    result = target.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (name, mine), (_, theirs) in zip(target.state_dict().items(), state.items()):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=name)


def test_load_state_dict_reports_every_problem_in_one_error_and_copies_nothing():
    model = Net()
    before = model.head.weight.tolist()
    state = Net().state_dict()
    del state["head.bias"]
    state["head.extra"] = genesis.zeros(1)
    state["encoder.0.scale"] = genesis.zeros(5)
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(state)
    message = str(error.value)
    assert "Error(s) in loading state_dict for Net" in message
    assert 'Missing key(s) in state_dict: "head.bias"' in message
    assert 'Unexpected key(s) in state_dict: "head.extra"' in message
    assert "size mismatch for encoder.0.scale: copying a param with shape (5,) from checkpoint, " \
           "the shape in current model is (2,)" in message
    assert model.head.weight.tolist() == before


def test_load_state_dict_non_strict_returns_missing_and_unexpected():
    model = nn.Linear(2, 2)
    result = model.load_state_dict({"weight": genesis.ones(2, 2), "other": genesis.ones(1)},
                                   strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["other"]
    assert model.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        model.load_state_dict({"weight": genesis.ones(3)}, strict=False)
    with pytest.raises(RuntimeError, match='expected a Tensor for "weight", got list'):
        model.load_state_dict({"weight": [[1.0]], "bias": genesis.ones(2)})


def test_load_state_dict_casts_to_the_target_dtype_and_keeps_identity():
    model = nn.Linear(2, 1)
    weight = model.weight
    version = weight._version
    model.load_state_dict({"weight": genesis.ones(1, 2, dtype=genesis.float64),
                           "bias": genesis.zeros(1, dtype=genesis.float64)})
    assert model.weight is weight and weight.dtype == genesis.float32
    assert weight.tolist() == [[1.0, 1.0]] and weight._version > version


def test_load_state_dict_with_assign_takes_the_tensors_themselves_as_pytorch_does():
    """`assign=True`: the module's parameters and buffers become the state dict's tensors
    (their dtype too; a parameter keeps the requires_grad of the one it replaces), so an
    optimizer built before still holds the old parameters."""
    torch = torch_or_skip()
    seen = []
    for lib in (genesis, torch):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        model[0].bias.requires_grad_(False)
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
        state = {key: value.clone() for key, value in model.state_dict().items()}
        state["1.running_mean"] = lib.full((2,), 3.0, dtype=lib.float64)
        model.load_state_dict(state, assign=True)
        seen.append((model[0].weight.data_ptr() == state["0.weight"].data_ptr(),
                     type(model[0].weight).__name__, model[0].weight.requires_grad,
                     model[0].bias.requires_grad, str(model[1].running_mean.dtype).split(".")[-1],
                     model[1].running_mean is state["1.running_mean"],
                     "1.running_mean" in dict(model.named_buffers()),
                     optimizer.param_groups[0]["params"][0] is model[0].weight))
    assert seen[0] == seen[1] == (True, "Parameter", True, False, "float64", True, True, False)


def test_train_eval_propagates():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="bool"):
        net.train("no")


def test_to_dtype_keeps_parameter_identity_and_converts_grads_and_buffers():
    net = Net()
    params = list(net.parameters())
    optimizer = genesis.optim.SGD(net.parameters(), lr=0.1)
    net(genesis.ones(4, 3)).sum().backward()
    assert net.to(genesis.float64) is net
    assert all(a is b for a, b in zip(params, net.parameters()))
    assert all(p.dtype == genesis.float64 and p.grad.dtype == genesis.float64 for p in params)
    assert net.encoder[0].running.dtype == genesis.float64
    assert net.encoder[0].count.dtype == genesis.int64  # integer buffers keep their dtype
    optimizer.step()  # the optimizer still holds the same (now float64) parameters
    out = net(genesis.ones(4, 3, dtype=genesis.float64))
    assert out.dtype == genesis.float64
    net.float()
    assert all(p.dtype == genesis.float32 for p in net.parameters())
    with pytest.raises(TypeError, match="floating point"):
        net.to(genesis.int64)


def test_to_bumps_versions_so_old_graphs_refuse_to_backward():
    layer = nn.Linear(2, 1)
    out = layer(genesis.ones(1, 2, requires_grad=True))  # saves the weight for the input's grad
    layer.double()
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        out.sum().backward()


def test_to_device_with_fake_cuda(monkeypatch):
    monkeypatch.setenv("GENESIS_FAKE_CUDA", "1")
    monkeypatch.setattr(genesis.Device("cuda", 0), "_xp", None)
    layer = nn.Linear(2, 1)
    weight = layer.weight
    layer.to("cuda")
    assert layer.weight is weight and weight.device == genesis.device("cuda")
    assert layer(genesis.ones(3, 2, device="cuda")).device == genesis.device("cuda")
    layer.cpu()
    assert weight.device == genesis.device("cpu")


def test_zero_grad_to_none_or_zeros():
    layer = nn.Linear(2, 1)
    layer(genesis.ones(3, 2)).sum().backward()
    grad = layer.weight.grad
    layer.zero_grad(set_to_none=False)
    assert layer.weight.grad is grad and grad.tolist() == [[0.0, 0.0]]
    layer.zero_grad()
    assert layer.weight.grad is None and layer.bias.grad is None


def test_requires_grad_and_apply():
    net = Net()
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    visited = []
    net.apply(lambda module: visited.append(type(module).__name__))
    assert visited == ["Linear", "Block", "Tanh", "Sequential", "Linear", "Net"]


def test_repr_matches_pytorch():
    torch = torch_or_skip()
    ours = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Sequential(nn.Linear(4, 2, bias=False),
                                                                   nn.Dropout(0.1)),
                         nn.Flatten(), nn.Embedding(5, 2, padding_idx=0), nn.Identity())
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                 torch.nn.Sequential(torch.nn.Linear(4, 2, bias=False),
                                                     torch.nn.Dropout(0.1)),
                                 torch.nn.Flatten(), torch.nn.Embedding(5, 2, padding_idx=0),
                                 torch.nn.Identity())
    assert repr(ours) == repr(theirs)
    layers = [nn.Linear(2, 2) for _ in range(3)] + [nn.Tanh(), nn.Tanh()]
    torch_layers = [torch.nn.Linear(2, 2) for _ in range(3)] + [torch.nn.Tanh(), torch.nn.Tanh()]
    assert repr(nn.ModuleList(layers)) == repr(torch.nn.ModuleList(torch_layers))


def test_repr_of_a_custom_module():
    assert repr(Net()) == (
        "Net(\n"
        "  (encoder): Sequential(\n"
        "    (0): Block(\n"
        "      (linear): Linear(in_features=3, out_features=2, bias=True)\n"
        "    )\n"
        "    (1): Tanh()\n"
        "  )\n"
        "  (head): Linear(in_features=2, out_features=1, bias=True)\n"
        ")")


def test_deepcopy_gives_an_independent_module():
    net = Net()
    clone = copy.deepcopy(net)
    assert all(type(p) is nn.Parameter for p in clone.parameters())
    with genesis.no_grad():
        clone.head.weight.fill_(7.0)
    assert net.head.weight.tolist() != clone.head.weight.tolist()
    out = clone(genesis.ones(1, 3))
    out.sum().backward()
    assert clone.head.weight.grad is not None and net.head.weight.grad is None


def _grads_after_deepcopy(lib) -> list:
    """Whether .grad is copied: not for a parameter (nor a module's), yes for a plain tensor."""
    layer = lib.nn.Linear(1, 1)
    layer(lib.ones(1, 1)).sum().backward()
    tensor = lib.ones(2, requires_grad=True)
    (tensor * 2).sum().backward()
    return [copy.deepcopy(layer).weight.grad, copy.deepcopy(layer.bias).grad,
            copy.deepcopy(tensor).grad.tolist()]


def test_deepcopy_of_a_parameter_leaves_its_grad_behind():
    assert _grads_after_deepcopy(genesis) == [None, None, [2.0, 2.0]]


def test_deepcopy_grads_match_pytorch():
    torch = torch_or_skip()
    assert _grads_after_deepcopy(genesis) == _grads_after_deepcopy(torch)

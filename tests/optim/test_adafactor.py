"""Adafactor against PyTorch's: factored second moments for stacks of matrices and a full one
for 0-d parameters, tensor lr, schedules, and PyTorch's argument
checks (its 30-step and float32 comparisons, option by option, and its state dicts loaded
across genesis and PyTorch are in test_adamax_nadam_radam_asgd_rprop.py)."""
import numpy as np
import pytest

import genesis
from genesis import optim
from genesis.compat import serve_torch
from tests.helpers import torch_or_skip
from tests.optim.test_adamax_nadam_radam_asgd_rprop import _initial_arrays, _parameters, _steps

def _stacked_loss(params):
    """A stack of matrices (factored over its last two dims) and a 0-d scale."""
    stack, scale = params
    return (stack.sin() * scale).sum() + scale * scale


def test_a_stack_of_matrices_and_a_number_match_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((2, 3, 5)), np.array(0.7)]
    results = []
    for lib in (genesis, torch):
        params = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
        optimizer = lib.optim.Adafactor(params, lr=0.05, weight_decay=0.01)
        for _ in range(20):
            optimizer.zero_grad()
            _stacked_loss(params).backward()
            optimizer.step()
        assert tuple(optimizer.state[params[0]]["row_var"].shape) == (2, 3, 1)
        assert tuple(optimizer.state[params[0]]["col_var"].shape) == (2, 1, 5)
        assert tuple(optimizer.state[params[1]]["variance"].shape) == ()
        results.append([p.detach().numpy() for p in params])
    for mine, reference in zip(*results):
        np.testing.assert_allclose(mine, reference, rtol=0, atol=1e-10)


def test_a_tensor_lr_and_a_schedule_change_the_steps_like_pytorch():
    torch = torch_or_skip()
    arrays = _initial_arrays()
    results = []
    for lib in (genesis, torch):
        params = _parameters(lib, arrays)
        lr = lib.tensor(0.02, dtype=lib.float64)
        optimizer = lib.optim.Adafactor(params, lr=lr)
        schedule = lib.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
        for _ in range(9):
            _steps(lib, optimizer, params, lib.from_numpy(arrays[3]), 1)
            schedule.step()
        assert optimizer.param_groups[0]["lr"] is lr
        results.append([p.detach().numpy() for p in params] + [lr.item()])
    for mine, reference in zip(*results):
        np.testing.assert_allclose(mine, reference, rtol=0, atol=1e-10)


BAD_ARGUMENTS = [dict(lr=-1.0), dict(beta2_decay=0.5), dict(eps=(-1e-3, 1e-3)),
                 dict(eps=(None, -1.0)), dict(d=0.5), dict(weight_decay=-0.1),
                 dict(lr=genesis.tensor([0.1, 0.2]))]


@pytest.mark.parametrize("options", BAD_ARGUMENTS, ids=[str(options) for options in BAD_ARGUMENTS])
def test_invalid_arguments_are_refused_like_pytorch(options):
    torch = torch_or_skip()
    theirs_options = {key: torch.tensor(value.tolist()) if isinstance(value, genesis.Tensor)
                      else value for key, value in options.items()}
    with pytest.raises(Exception) as ours:
        optim.Adafactor([genesis.zeros(2, requires_grad=True)], **options)
    with pytest.raises(Exception) as theirs:
        torch.optim.Adafactor([torch.zeros(2, requires_grad=True)], **theirs_options)
    assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))


def test_defaults_and_an_empty_state_dict_match_pytorch():
    torch = torch_or_skip()
    ours = optim.Adafactor([genesis.zeros(2, requires_grad=True)])
    theirs = torch.optim.Adafactor([torch.zeros(2, requires_grad=True)])
    assert ours.defaults == theirs.defaults
    assert ours.state_dict() == theirs.state_dict()


def test_parameters_without_gradients_are_left_alone():
    used, unused = genesis.ones(2, 2, requires_grad=True), genesis.ones(3, requires_grad=True)
    optimizer = optim.Adafactor([used, unused], lr=0.1)
    (used * used).sum().backward()
    optimizer.step()
    assert unused.tolist() == [1.0, 1.0, 1.0] and unused not in optimizer.state
    assert (used.detach().numpy() < 1).all()


def test_pytorch_scripts_get_it_as_torch_optim_adafactor():
    with serve_torch():
        import torch
        assert torch.optim.Adafactor is optim.Adafactor

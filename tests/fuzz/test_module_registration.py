"""Fuzzing Module registration: names (empty, dotted, not strings, taken), values of the
wrong kind, and modules that contain themselves.

Names and values are checked as PyTorch checks them (KeyError for a bad or taken name,
TypeError for a wrong value); a module cycle never makes named_modules, state_dict or
repr run forever (PyTorch dies with RecursionError there): state_dict says which
attribute closes the cycle, repr marks it.
"""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import genesis
from genesis import nn

from .compare import FUZZ, finishes, genesis_error, message_of, same_outcome, torch

NAMES = st.one_of(st.text(max_size=4), st.sampled_from(["", ".", "a.b", "weight", "training",
                                                         "forward", "_parameters"]))
REGISTRATIONS = ["register_parameter", "register_buffer", "add_module"]


def _value(library, registration: str):
    if registration == "register_parameter":
        return library.nn.Parameter(library.zeros(1))
    if registration == "register_buffer":
        return library.zeros(1)
    return library.nn.ReLU()


@FUZZ
@given(registration=st.sampled_from(REGISTRATIONS), name=NAMES)
def test_names_are_checked_as_pytorch_checks_them(registration, name):
    def register(library):
        module = library.nn.Linear(1, 1)
        getattr(module, registration)(name, _value(library, registration))
        return module

    outcome = same_outcome(lambda: register(genesis), lambda: register(torch))
    if outcome.raised:
        message = message_of(outcome.error)
        assert repr(name) in message or "already exists" in message, outcome.describe()
    else:
        module = outcome.result
        listed = {"register_parameter": dict(module.named_parameters()),
                  "register_buffer": dict(module.named_buffers()),
                  "add_module": dict(module.named_children())}[registration]
        assert name in listed


@FUZZ
@given(registration=st.sampled_from(REGISTRATIONS), name=st.sampled_from([5, None, 1.5, b"w", ("a",)]))
def test_names_must_be_strings(registration, name):
    genesis_error(lambda: getattr(nn.Linear(1, 1), registration)(name, _value(genesis, registration)),
                  culprits=["name should be a string", type(name).__name__],
                  like=lambda: getattr(torch.nn.Linear(1, 1), registration)(
                      name, _value(torch, registration)))


@pytest.mark.parametrize("name", ["", ".", "a.b"])
@pytest.mark.parametrize("kind", ["parameter", "module"])
def test_attribute_names_that_break_dotted_paths_are_refused(name, kind):
    """setattr(model, "a.b", Parameter) is refused in both; for a module PyTorch takes it (and
    then names its weight "a.b.weight", which get_submodule can't find): genesis refuses it
    as add_module does."""
    value = nn.Parameter(genesis.zeros(1)) if kind == "parameter" else nn.ReLU()
    error = genesis_error(lambda: setattr(nn.Linear(1, 1), name, value), culprits=[repr(name)])
    assert isinstance(error, KeyError)


@pytest.mark.parametrize("value", [3, "w", [1.0], None.__class__])
@pytest.mark.parametrize("registration", REGISTRATIONS)
def test_values_of_the_wrong_kind(registration, value):
    genesis_error(lambda: getattr(nn.Linear(1, 1), registration)("extra", value),
                  culprits=[type(value).__name__],
                  like=lambda: getattr(torch.nn.Linear(1, 1), registration)("extra", value))


@pytest.mark.parametrize("value", [lambda library: library.zeros(1, 1), lambda library: 3,
                                   lambda library: library.nn.ReLU()])
def test_assigning_over_a_parameter_needs_a_parameter(value):
    def assign(library):
        layer = library.nn.Linear(1, 1)
        layer.weight = value(library)

    error = genesis_error(lambda: assign(genesis), culprits=["'weight'", "Parameter"],
                          like=lambda: assign(torch))
    assert isinstance(error, TypeError)


def test_assigning_none_over_a_parameter_removes_it_as_in_pytorch():
    layer = nn.Linear(1, 1)
    layer.weight = None
    assert [name for name, _ in layer.named_parameters()] == ["bias"]


@pytest.mark.parametrize("given_value", [[1.0], 3, "w"])
def test_parameter_wraps_tensors_only(given_value):
    genesis_error(lambda: nn.Parameter(given_value), culprits=[type(given_value).__name__])


def _self_cycle():
    layer = nn.Linear(2, 2)
    layer.me = layer
    return layer, "me"


def _two_cycle():
    outer, inner = nn.Sequential(nn.ReLU()), nn.Sequential(nn.Linear(2, 2))
    outer.add_module("inner", inner)
    inner.add_module("outer", outer)
    return outer, "outer"


def _list_cycle():
    blocks = nn.ModuleList([nn.Linear(2, 2)])
    blocks.append(blocks)
    return blocks, "1"


def _deep_cycle():
    top = nn.Sequential(nn.Sequential(nn.Sequential(nn.Linear(2, 2))))
    top[0][0].add_module("back", top[0])
    return top, "back"


CYCLES = [_self_cycle, _two_cycle, _list_cycle, _deep_cycle]


@pytest.mark.parametrize("make", CYCLES)
def test_a_module_cycle_never_runs_forever(make):
    model, attribute = make()
    with finishes():
        assert len(list(model.named_modules())) >= 1  # each module once: no cycle to follow
        assert len(list(model.parameters())) == 2
        model.zero_grad()
        model.to(genesis.float64)
        error = genesis_error(lambda: model.state_dict(), culprits=["module cycle", f"'{attribute}'"])
        assert isinstance(error, RuntimeError)  # PyTorch: RecursionError, a RuntimeError
        genesis_error(lambda: list(model.named_modules(remove_duplicate=False)),
                      culprits=["module cycle"])
        genesis_error(lambda: model.load_state_dict({}), culprits=["module cycle"])
        text = repr(model)
    assert "<cycle: this" in text and text.count("\n") < 40


def test_a_module_shared_by_two_parents_is_no_cycle():
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.Sequential(shared))
    assert list(model.state_dict()) == ["0.weight", "0.bias", "1.0.weight", "1.0.bias"]
    assert "cycle" not in repr(model)


@FUZZ
@given(depth=st.integers(1, 6), back=st.data())
def test_any_back_reference_up_the_tree_is_named(depth, back):
    chain = [nn.Sequential() for _ in range(depth)]
    for parent, child in zip(chain, chain[1:]):
        parent.add_module("child", child)
    target = back.draw(st.integers(0, depth - 1))
    chain[-1].add_module("up", chain[target])
    with finishes():
        error = genesis_error(lambda: chain[0].state_dict(), culprits=["'up'"])
        assert "child." * (depth - 1) + "up" in str(error)
        assert "<cycle" in repr(chain[0])


@pytest.mark.parametrize("hook", [3, None, "print"])
@pytest.mark.parametrize("registration", ["register_forward_hook", "register_forward_pre_hook",
                                          "register_full_backward_hook",
                                          "register_full_backward_pre_hook"])
def test_hooks_must_be_callable_when_registered(registration, hook):
    """PyTorch takes anything and fails at the first call, far from the line that registered
    it; genesis refuses it at registration."""
    error = genesis_error(lambda: getattr(nn.Linear(1, 1), registration)(hook),
                          culprits=[registration, "callable"])
    assert isinstance(error, TypeError)

"""Grad modes as PyTorch has them: bare and called decorators, generator functions (the mode
holds inside each resumption), thread-local state, and inference mode with its inference
tensors; each case run on torch and genesis and compared."""
import threading

import pytest

import genesis
from tests.helpers import torch_or_skip


def _libraries():
    return (torch_or_skip(), genesis)


@pytest.mark.parametrize("mode, expected", [("no_grad", False), ("enable_grad", True)])
@pytest.mark.parametrize("form", ["bare", "called"])
def test_no_grad_and_enable_grad_decorate_bare_or_called(mode, expected, form):
    for library in _libraries():
        decorator = getattr(library, mode) if form == "bare" else getattr(library, mode)()

        @decorator
        def doubled(x):
            return x * 2

        with library.set_grad_enabled(not expected):
            assert doubled(library.ones(1, requires_grad=True)).requires_grad is expected
            assert library.is_grad_enabled() is (not expected)  # restored after the call


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode"])
def test_a_mode_on_a_generator_holds_only_inside_each_resumption(mode):
    results = []
    for library in _libraries():
        @getattr(library, mode)()
        def steps(x):
            yield (x * 2).requires_grad, library.is_grad_enabled()
            yield (x * 3).requires_grad, library.is_grad_enabled()

        x = library.ones(1, requires_grad=True)
        with library.set_grad_enabled(mode == "no_grad"):
            generator = steps(x)
            first = next(generator)
            between = library.is_grad_enabled()
            second = next(generator)
        results.append((first, between, second))
    assert results[0] == results[1]


def test_set_grad_enabled_as_call_context_and_decorator():
    for library in _libraries():
        library.set_grad_enabled(False)
        assert not library.is_grad_enabled()
        library.set_grad_enabled(True)
        with library.set_grad_enabled(False):
            assert not library.is_grad_enabled()
        assert library.is_grad_enabled()

        @library.set_grad_enabled(False)
        def inside():
            return library.is_grad_enabled()

        assert library.is_grad_enabled() and inside() is False


def test_grad_mode_is_per_thread():
    for library in _libraries():
        seen = []
        with library.no_grad():
            worker = threading.Thread(target=lambda: seen.append(library.is_grad_enabled()))
            worker.start()
            worker.join()
        assert seen == [True]


def test_inference_mode_makes_inference_tensors_and_reports_itself():
    for library in _libraries():
        normal = library.ones(2)
        with library.inference_mode():
            assert library.is_inference_mode_enabled() and not library.is_grad_enabled()
            made = library.ones(2) * 2
            view = made[:1]
        assert made.is_inference() and view.is_inference() and not normal.is_inference()
        assert not library.is_inference_mode_enabled()
        with library.inference_mode(False):
            assert not library.is_inference_mode_enabled() and library.is_grad_enabled()


def test_inference_tensors_refuse_a_backward_and_in_place_changes_outside():
    for library in _libraries():
        with library.inference_mode():
            made = library.ones(2)
        weight = library.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            weight * made
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                               "InferenceMode"):
            made.add_(1)
        with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
            made._version
        (weight + made).sum().backward()  # addition saves nothing: allowed, as in torch
        copy = made.clone()
        copy.add_(1)
        assert not copy.is_inference() and (weight * copy).requires_grad
        before = made.tolist()
        with library.inference_mode():
            made.add_(1)  # inside the mode: allowed
        assert made.tolist() == [value + 1 for value in before]


@pytest.mark.parametrize("form", ["bare", "called"])
def test_inference_mode_as_decorator(form):
    for library in _libraries():
        decorator = library.inference_mode if form == "bare" else library.inference_mode()

        @decorator
        def predict(x):
            return library.is_inference_mode_enabled(), (x * 2)

        enabled, out = predict(library.ones(1, requires_grad=True))
        assert enabled and not out.requires_grad and out.is_inference()


def test_a_view_made_with_grad_disabled_is_a_leaf_that_requires_grad_as_in_pytorch():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        base = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            view, copy = base[1:], base * 1
        assert view.requires_grad and view.is_leaf and view.grad_fn is None
        assert not copy.requires_grad  # an op's result made without grad: no gradient
        with pytest.raises(RuntimeError, match="no_grad"):
            view.mul_(2)  # changed in place with grad enabled: refused, as in PyTorch


def _grad_mode_inside_inference_mode(lib) -> list:
    """(is_grad_enabled(), whether x * 2 records) at each step of nesting grad modes in
    inference mode: grad mode may be switched on there, but nothing is recorded."""
    x = lib.ones(1, requires_grad=True)
    seen = []

    def look():
        seen.append((lib.is_grad_enabled(), (x * 2).requires_grad))

    with lib.inference_mode():
        with lib.enable_grad():
            look()
            with lib.no_grad():
                look()
            with lib.inference_mode(False):
                look()
            look()
        look()
        with lib.set_grad_enabled(True):
            look()
        lib.set_grad_enabled(True)  # as a call: until inference mode ends
        look()
    look()
    with lib.no_grad(), lib.inference_mode(), lib.enable_grad():
        look()
    return seen


def test_enable_grad_inside_inference_mode_records_nothing():
    assert _grad_mode_inside_inference_mode(genesis) == [
        (True, False), (False, False), (True, True), (True, False), (False, False),
        (True, False), (True, False), (True, True), (True, False)]


def test_enable_grad_inside_inference_mode_as_in_pytorch():
    torch = torch_or_skip()
    assert _grad_mode_inside_inference_mode(genesis) == _grad_mode_inside_inference_mode(torch)


@pytest.mark.parametrize("value", [1, 0, None, "no", 1.0])
def test_set_grad_enabled_takes_only_a_bool(value):
    for library in _libraries():
        with pytest.raises(TypeError, match="argument 'enabled' .* must be bool"):
            library.set_grad_enabled(value)
        assert library.is_grad_enabled()  # unchanged by the refused call


def test_modes_clone_into_a_new_mode_of_the_same_kind():
    for library in _libraries():
        for mode in (library.no_grad(), library.enable_grad(), library.inference_mode(False)):
            copy = mode.clone()
            assert type(copy) is type(mode) and copy is not mode
        assert library.inference_mode(False).clone().mode is False
        with library.no_grad().clone():
            assert not library.is_grad_enabled()
        copy = library.set_grad_enabled(False).clone()  # sets the mode at once, as the first
        assert copy.mode is False and not library.is_grad_enabled()
        library.set_grad_enabled(True)


def test_data_and_detach_are_inference_tensors_exactly_when_the_tensor_is():
    """`.data` and `.detach()` of a tensor take its inference-ness, not the current mode's:
    an inference tensor's stay inference tensors outside the mode, a normal tensor's are
    normal inside it."""
    for library in _libraries():
        normal = library.ones(2)
        with library.inference_mode():
            inside = library.ones(2)
            assert not normal.data.is_inference() and not normal.detach().is_inference()
        assert inside.data.is_inference() and inside.detach().is_inference()

"""What each registered op saves for backward, against PyTorch: an in-place write after the
forward, to an output or to an input (through `.detach()`, keeping the values), must make
genesis's backward raise SavedTensorModifiedError only where PyTorch's raises too ("modified
by an inplace operation"). A spurious refusal of correct PyTorch code is a false alarm. Where
PyTorch's backward succeeds, genesis's must too, with PyTorch's gradient. (Genesis may succeed
where PyTorch refuses: it saved less.) And where a write that changes the values passes
genesis's checks, its gradient must be the one without the write: nothing it reads escaped
the check.

To stay fast, the sweep takes each op's first sample, its first sample with an operand that
needs no grad (what a backward saves can depend on which inputs need a gradient), and the
samples named in EXTRA_SAMPLES.
"""
import numpy as np
import pytest

import genesis
from genesis.autograd.function import SavedTensorModifiedError
from genesis.ops.registry import all_ops
from tests.helpers import outputs_of

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

# Registry references that are not PyTorch's op itself (they stand in for values and
# gradients), replaced here by PyTorch's own op, whose saved tensors are what users meet.
TORCH_OP = {
    "hardsigmoid": lambda torch, a: torch.nn.functional.hardsigmoid(a),
    "lobpcg": lambda torch, a, k=1, largest=True: torch.lobpcg(a, k=k, largest=largest),
}
# Ops whose PyTorch op cannot be compared here, with the reason.
NOT_COMPARED = {
    "vander": "torch.vander's own backward fails (an in-place cumprod); the registry's "
              "reference is a stack of powers, which saves other tensors than torch.vander",
}
# Ops that draw random numbers: their gradient is compared with genesis's own backward
# without the write (same seed), not with PyTorch's.
RANDOM = {"dropout", "alpha_dropout", "feature_alpha_dropout", "rrelu", "fractional_max_pool2d",
          "fractional_max_pool3d", "lobpcg"}
# Ops whose PyTorch backward reads an alias of an input that escapes its version check, so a
# write to that input passes there unnoticed (and gives a wrong gradient if it changes the
# values): genesis's refusal is right, and those writes are not compared.
PYTORCH_MISSES_A_WRITE_TO_AN_INPUT = {
    "kron": "torch.kron multiplies _unsafe_view aliases of its inputs, which do not share their "
            "version counters",
}
# Samples beyond the first ones where what PyTorch saves differs (a broadcast or padded
# operand that PyTorch copies, a mode that saves other tensors).
EXTRA_SAMPLES = {"matmul": (6, 7), "einsum": (5, 6, 15), "conv1d": (2,), "conv2d": (2,),
                 "kl_div": (3, 7), "scaled_dot_product_attention": (3,),
                 "pow": (8, 12, 14, 15), "float_power": (8,), "clamp": (7,)}
# (op, sample index) pairs where genesis still raises and PyTorch does not, with the reason.
KNOWN_FALSE_ALARMS: dict = {}

_RTOL, _ATOL = 1e-7, 1e-9


def _selected_samples(info) -> list:
    samples = info.samples(np.random.default_rng(0))
    chosen = {0} | set(EXTRA_SAMPLES.get(info.name, ()))
    chosen |= set([i for i, sample in enumerate(samples) if sample.grad is not None][:1])
    return [(index, samples[index]) for index in sorted(chosen) if index < len(samples)]


def _cases() -> list:
    cases = []
    for info in all_ops():
        if info.torch is None or not info.differentiable or info.name in NOT_COMPARED:
            continue
        for index, sample in _selected_samples(info):
            marks = ()
            reason = KNOWN_FALSE_ALARMS.get((info.name, index))
            if reason is not None:
                marks = (pytest.mark.xfail(strict=True, reason=reason),)
            cases.append(pytest.param(info, index, sample, marks=marks,
                                      id=f"{info.name}-{index}-{sample.note}"))
    return cases


def _to_torch(value):
    if isinstance(value, genesis.Tensor):
        return torch.tensor(value.detach().numpy().copy()).requires_grad_(value.requires_grad)
    return value


def _rewrite(tensor) -> None:
    """An in-place write through `.detach()` that keeps the values (it bumps the version)."""
    alias = tensor.detach()
    alias.copy_(alias.clone())


def _shift(tensor) -> None:
    """An in-place write through `.detach()` that changes the values."""
    tensor.detach().add_(0.5)


class _RefusedWrite(Exception):
    """The library refused the sample or the in-place write itself (e.g. to an expanded
    output)."""


def _outcome(library, call, sample, target, write=_rewrite):
    """("modified",), ("error", message), ("ok", leaf gradients) or None (nothing to check) for
    the sample's forward, the write `target` (None, ("output", k) or ("input", k)) made by
    `write`, and a backward of every output that requires grad."""
    args, kwargs = sample.tensors()
    if library is torch:
        args = tuple(_to_torch(arg) for arg in args)
    library.manual_seed(0)
    try:
        outputs = call(*args, **kwargs)
    except RuntimeError:
        if library is torch:  # (e.g. an op PyTorch defines for fewer shapes)
            raise _RefusedWrite from None
        raise
    outputs = [outputs] if isinstance(outputs, library.Tensor) else \
        [output for output in outputs if isinstance(output, library.Tensor)]
    if target is not None:
        kind, position = target
        tensors = outputs if kind == "output" else args
        if position >= len(tensors):
            return None
        if write is _shift and not tensors[position].is_floating_point():
            return None
        try:
            write(tensors[position])
        except RuntimeError:  # (a write to an expanded output: refused by both libraries)
            if library is torch or write is _shift:
                raise _RefusedWrite from None
            raise
    weights = np.random.default_rng(3)
    weights = [weights.standard_normal(tuple(output.shape)) for output in outputs]
    pairs = [(output, library.tensor(weight, dtype=output.dtype))
             for output, weight in zip(outputs, weights) if output.requires_grad]
    leaves = [arg for arg in args if isinstance(arg, library.Tensor) and arg.requires_grad]
    if not pairs or not leaves:
        return None
    try:
        library.autograd.backward([output for output, _ in pairs], [w for _, w in pairs])
    except RuntimeError as error:
        if isinstance(error, SavedTensorModifiedError) or "modified by an inplace" in str(error):
            return ("modified",)
        return ("error", f"{type(error).__name__}: {error}")
    return ("ok", [None if leaf.grad is None else leaf.grad.detach().numpy().copy()
                   for leaf in leaves])


def _torch_call(info):
    reference = TORCH_OP.get(info.name, info.torch)
    return lambda *args, **kwargs: reference(torch, *args, **kwargs)


@pytest.mark.parametrize("info, index, sample", _cases())
def test_genesis_refuses_a_backward_after_a_write_only_where_pytorch_does(info, index, sample):
    args, kwargs = sample.tensors()
    targets = [("output", k) for k in range(len(outputs_of(info.call(*args, **kwargs))))]
    if info.name not in PYTORCH_MISSES_A_WRITE_TO_AN_INPUT:
        targets += [("input", position) for position, arg in enumerate(args)
                    if isinstance(arg, genesis.Tensor)]
    reference_call = _torch_call(info)
    problems = []
    for target in targets:
        try:
            theirs = _outcome(torch, reference_call, sample, target)
        except _RefusedWrite:
            continue
        if theirs is None or theirs[0] != "ok":
            continue  # PyTorch refuses too (or cannot run it): genesis may do either
        ours = _outcome(genesis, info.call, sample, target)
        if ours[0] == "modified":
            problems.append(f"{target}: genesis raised SavedTensorModifiedError, PyTorch did not")
            continue
        if ours[0] != "ok":
            problems.append(f"{target}: genesis raised {ours[1]}, PyTorch did not")
            continue
        expected = theirs[1]
        if info.name in RANDOM:
            expected = _outcome(genesis, info.call, sample, None)[1]
        for leaf, (mine, reference) in enumerate(zip(ours[1], expected)):
            if (mine is None) != (reference is None) or (
                    mine is not None and not np.allclose(mine, reference, rtol=_RTOL,
                                                         atol=_ATOL, equal_nan=True)):
                problems.append(f"{target}: the gradient of leaf {leaf} differs from PyTorch's")
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("info, index, sample", _cases())
def test_a_write_genesis_allows_leaves_its_gradient_as_it_was(info, index, sample):
    """Where a write that changes the values passes genesis's checks, the backward reads none
    of the values it changed: the gradient is the one without the write (no tensor is read
    through an alias that escapes the version check)."""
    if (info.name, index) in KNOWN_FALSE_ALARMS:
        pytest.skip("a known false alarm: genesis refuses the write")
    args, kwargs = sample.tensors()
    targets = [("output", k) for k in range(len(outputs_of(info.call(*args, **kwargs))))]
    targets += [("input", position) for position, arg in enumerate(args)
                if isinstance(arg, genesis.Tensor)]
    clean = _outcome(genesis, info.call, sample, None)
    problems = []
    for target in targets:
        try:
            shifted = _outcome(genesis, info.call, sample, target, write=_shift)
        except _RefusedWrite:
            continue
        if shifted is None or shifted[0] != "ok":
            continue
        for leaf, (mine, reference) in enumerate(zip(shifted[1], clean[1])):
            if (mine is None) != (reference is None) or (
                    mine is not None and not np.allclose(mine, reference, rtol=_RTOL,
                                                         atol=_ATOL, equal_nan=True)):
                problems.append(f"{target}: the gradient of leaf {leaf} changed")
    assert not problems, "; ".join(problems)

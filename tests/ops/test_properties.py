"""Property test: random small expression graphs built from the registry's smooth ops pass
gradcheck (and gradgradcheck) in float64.

Hypothesis draws a program: 1-3 inputs whose shapes broadcast together, then a chain of
1-4 steps, each applying a registry op to the latest value (and, for binary ops, an
earlier one). Ops with a restricted domain get a smooth wrapper that keeps them inside it
(log(x * x + 1), x / (y * y + 1), asin(0.9 * tanh(x)), ...); fast-growing ones see a
bounded input (exp(2 * tanh(x))). Reductions keep their dims (or reduce everything), so
every value still broadcasts against the others. Each op gets its own programs, in which
it appears at least once (a plain random choice would favour the first ops of each list).
Runs are derandomized (the same programs on every run) and take a few seconds.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import genesis
from genesis.autograd import gradcheck, gradgradcheck
from genesis.ops.registry import find_op


def _any(x):
    return x


def _bounded(x):
    return x.tanh() * 2


def _unit(x):
    return x.tanh() * 0.9


def _positive(x):
    return x * x + 1


# Unary registry ops and the map that keeps their input in a smooth, well-conditioned domain.
UNARY = {
    "neg": _any, "sin": _any, "cos": _any, "atan": _any, "tanh": _any, "sigmoid": _any,
    "erf": _any, "asinh": _any, "square": _any, "gelu": _any, "gelu_tanh": _any, "silu": _any,
    "mish": _any, "celu": _any,
    "exp": _bounded, "exp2": _bounded, "expm1": _bounded, "sinh": _bounded, "cosh": _bounded,
    "tan": lambda x: x.tanh(), "asin": _unit, "acos": _unit, "atanh": _unit,
    "log": _positive, "log2": _positive, "log10": _positive, "sqrt": _positive,
    "rsqrt": _positive, "reciprocal": _positive, "log1p": lambda x: x * x,
    "acosh": lambda x: x * x + 1.5,
}
# Binary registry ops and the maps for (first, second) operand.
BINARY = {
    "add": (_any, _any), "sub": (_any, _any), "mul": (_any, _any), "logaddexp": (_any, _any),
    "div": (_any, _positive), "pow": (lambda x: x * x + 0.5, lambda x: x.tanh()),
    "atan2": (_any, lambda x: x * x + 0.5), "hypot": (_any, lambda x: x * x + 0.5),
}
REDUCTIONS = ("sum", "mean", "prod", "logsumexp", "var")
NORMALIZERS = ("softmax", "log_softmax")
OPS = sorted(set(UNARY) | set(BINARY) | set(REDUCTIONS) | set(NORMALIZERS))


@functools.cache
def _registered(name: str):
    """The op's call and the fixed options of its first registry sample (gelu_tanh's
    approximate='tanh', ...)."""
    info = find_op(name)
    sample = info.samples(np.random.default_rng(0))[0]
    return info.call, tuple(sample.kwargs.items())


@pytest.mark.parametrize("name", OPS)
def test_ops_are_registered_smooth_and_differentiable(name):
    info = find_op(name)
    assert info.differentiable and not info.kinks


@dataclass(frozen=True)
class Step:
    op: str
    operands: tuple          # indices of earlier values
    options: tuple = ()      # (name, value) pairs

    def __str__(self) -> str:
        arguments = [f"v{index}" for index in self.operands] + [f"{k}={v!r}" for k, v in
                                                                 self.options]
        return f"{self.op}({', '.join(arguments)})"


@dataclass(frozen=True)
class Program:
    shapes: tuple            # of the inputs v0, v1, ...
    steps: tuple
    seed: int

    def inputs(self) -> tuple:
        rng = np.random.default_rng(self.seed)
        return tuple(genesis.from_numpy(rng.uniform(-1, 1, shape)).requires_grad_()
                     for shape in self.shapes)

    def __call__(self, *inputs):
        values = list(inputs)
        for step in self.steps:
            values.append(_apply(step, values))
        return values[-1]

    def __repr__(self) -> str:
        lines = [f"inputs {list(self.shapes)}, seed {self.seed}"]
        lines += [f"v{len(self.shapes) + n} = {step}" for n, step in enumerate(self.steps)]
        return "\n".join(lines)


def _apply(step: Step, values: list):
    call, fixed = _registered(step.op)
    options = dict(fixed + step.options)
    operands = [values[index] for index in step.operands]
    if step.op in UNARY:
        return call(UNARY[step.op](operands[0]), **options)
    if step.op in BINARY:
        first, second = BINARY[step.op]
        return call(first(operands[0]), second(operands[1]), **options)
    return call(operands[0], **options)


def _step(draw, kind: str, op, value_shapes: list, others: int | None = None) -> Step:
    """One step of `kind` on the latest value (`op` None: drawn too; a binary op's other
    operand among the first `others` values, default all); records the new shape."""
    latest = len(value_shapes) - 1
    shape = value_shapes[latest]
    if kind == "binary":
        other = draw(st.integers(0, latest if others is None else others - 1))
        op = op or draw(st.sampled_from(sorted(BINARY)))
        value_shapes.append(np.broadcast_shapes(shape, value_shapes[other]))
        return Step(op, (latest, other) if draw(st.booleans()) else (other, latest))
    if kind == "reduce":
        op = op or draw(st.sampled_from(REDUCTIONS))
        if op != "logsumexp" and draw(st.booleans()):  # everything, to a 0-d value
            value_shapes.append(())
            return Step("mean" if op == "var" and np.prod(shape) < 2 else op, (latest,))
        dim = draw(st.integers(0, len(shape) - 1))
        value_shapes.append(shape[:dim] + (1,) + shape[dim + 1:])
        return Step("sum" if op == "var" and shape[dim] < 2 else op, (latest,),
                    (("dim", dim), ("keepdim", True)))
    value_shapes.append(shape)
    if kind == "normalize":
        op = op or draw(st.sampled_from(NORMALIZERS))
        return Step(op, (latest,), (("dim", draw(st.integers(0, len(shape) - 1))),))
    return Step(op or draw(st.sampled_from(sorted(UNARY))), (latest,))


def _kind(op: str) -> str:
    return ("unary" if op in UNARY else "binary" if op in BINARY else
            "reduce" if op in REDUCTIONS else "normalize")


@st.composite
def programs(draw, required: str, max_steps: int = 4):
    """A random program in which the op `required` appears at least once."""
    base = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    shapes = []
    for _ in range(draw(st.integers(1, 3))):
        kept = base[draw(st.integers(0, len(base) - 1)):]
        shapes.append(tuple(1 if draw(st.booleans()) else extent for extent in kept))
    value_shapes = list(shapes)
    count = draw(st.integers(1, max_steps))
    required_at = draw(st.integers(0, count - 1))
    steps = []
    for position in range(count):
        if position == required_at:
            kind, op = _kind(required), required
        else:
            kind, op = draw(st.sampled_from(["unary", "binary", "reduce", "normalize"])), None
        if kind in ("reduce", "normalize") and not value_shapes[-1]:
            # A 0-d value: first combine it with an input (none is 0-d) to get dims back.
            steps.append(_step(draw, "binary", None, value_shapes, others=len(shapes)))
        steps.append(_step(draw, kind, op, value_shapes))
    return Program(tuple(shapes), tuple(steps), draw(st.integers(0, 2 ** 16)))



@pytest.mark.parametrize("op", OPS)
@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_random_expressions_pass_gradcheck(op, data):
    program = data.draw(programs(op), label="program")
    assert gradcheck(program, program.inputs(), atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("op", OPS)
@settings(max_examples=5, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_random_expressions_pass_gradgradcheck(op, data):
    program = data.draw(programs(op, max_steps=3), label="program")
    assert gradgradcheck(program, program.inputs(), atol=1e-5, rtol=1e-3)

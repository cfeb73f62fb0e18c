"""Per-node gradient checks: re-run one recorded Function call in float64 and compare its
backward with finite differences, without false alarms.

`InvocationLog` (an observer for `genesis.autograd.function.observers`) keeps a
copy of the inputs of each Function call that joined a graph. `check_invocation`
then re-runs that call in float64 on those inputs:

1. A Function that declares itself `nondeterministic`, or whose forward gives
   different results on the same inputs (random numbers), is skipped.
2. Fast check: for random unit directions, the directional derivative of a
   random projection of the outputs (two forward runs) against the backward.
3. If that disagrees, each input element of a sample is checked on its own; an
   element where the one-sided differences disagree is a kink (relu or abs at
   0, max with ties), where any value between them is a valid sub-gradient:
   those are reported as "not differentiable here", never as mismatches.
4. A failure is blamed (`genesis.debug.blame`): the inputs whose gradient is wrong, by
   forward's parameter names; the line of the backward that computes each (its `return`,
   seen while the re-run's backward ran, or the one assignment of the name returned
   there); and the shape of the error when every checked element fits one (a constant
   factor, a wrong sign, a transpose, two inputs' gradients swapped, a sum over the wrong
   axis, zeros).

The parts: `invocation_log` records the calls, `rebuilt_call` is the finite-difference
check of one call, `node_verdict` holds `NodeCheck` and the `Tolerances`; this module
decides where and in which precision a call is re-run.

Non-finite points are judged truthfully. Outputs that are NaN or ±inf at the
call's inputs (a -inf mask) have no derivative and are left out of the
projection; an output that stays the same infinity when an input moves changed
by zero. Input elements that are ±inf or NaN, and elements whose perturbation
turns an output non-finite or moves one that is (log at 0), have no finite
difference: they are skipped and counted in the verdict ("3 of 48 input elements skipped: finite
differences undefined at ±inf"), never reported as mismatches. So are the elements
whose gradient the Function defines rather than derives (`Function.defined_gradients`:
the padding row of an embedding gets zero, whatever the output does).

Precision. Outputs the re-run still makes in float32 (a cast) are checked with float32's
step and tolerances (`FLOAT32`), and so are float64 outputs that hold float32 values at
inputs moved off float32's grid (a forward that computes in float32 inside and casts back:
`F.gelu(x.float()).to(x.dtype)`); outputs in float16 or bfloat16 are too coarse for any
finite difference, so such a call is skipped, never failed. The rounding of the outputs
themselves is allowed for in the element-wise check.

A check that cannot re-run the call is a limit of the check, never a finding against
the code: when the float64 re-run raises (the call closes over float32 weights, say), the
call is checked in its own dtypes ("checked in float32: its float64 re-run failed
(...)"), and when that raises too it is skipped, with both reasons. A call recorded on a
GPU is re-run on the host first, where perturbing one element costs no launch and no
wait; if its code cannot run there (it makes tensors on "cuda" itself, say), it is
re-run on the call's own device.

>>> import genesis
>>> class Twice(genesis.Function):
...     @staticmethod
...     def forward(ctx, x):
...         return x * 2
...     @staticmethod
...     def backward(ctx, grad):
...         return grad * 3          # wrong on purpose
>>> log = InvocationLog()
>>> genesis.autograd.function.observers.add(log)
>>> y = Twice.apply(genesis.randn(4, requires_grad=True))
>>> genesis.autograd.function.observers.discard(log)
>>> check_invocation(next(iter(log.calls.values()))).status
'fail'
"""
from __future__ import annotations

from ..device import cpu
from ..tensor import Tensor
from .invocation_log import PER_SITE, Invocation, InvocationLog
from .node_verdict import FLOAT32, FLOAT64, NodeCheck, Tolerances
from .rebuilt_call import CannotRerun, RebuiltCall

__all__ = ["Invocation", "InvocationLog", "NodeCheck", "Tolerances", "FLOAT64", "FLOAT32",
           "PER_SITE", "check_invocation", "declared_surrogate", "surrogate_advice"]


def check_invocation(invocation: Invocation, seed: int = 0) -> NodeCheck:
    """Re-run `invocation` (in float64, else in its own dtypes) and check its backward (see
    the module docstring)."""
    function = invocation.function
    if function.nondeterministic:
        return NodeCheck("skipped", f"{function.node_name} declares itself nondeterministic")
    if function.not_rerunnable:
        return NodeCheck("skipped", f"{function.node_name}: {function.not_rerunnable}")
    if function.surrogate_gradient:
        return NodeCheck("skipped", declared_surrogate(function.node_name))
    places = (True, False) if _ran_on_a_gpu(invocation.args) else (True,)
    failed = {}   # in float64? -> why the re-run raised (the last place tried)
    for in_float64 in (True, False):
        if not in_float64 and _all_float64(invocation.args):
            break  # its own dtypes are float64: the same re-run again
        for on_host in places:
            note = "" if in_float64 else f"its float64 re-run failed ({failed[True]})"
            try:
                return RebuiltCall.build(invocation, on_host, in_float64, note).check(seed)
            except CannotRerun as error:
                failed[in_float64] = str(error)
    reasons = [f"{'in float64' if in_float64 else 'in its own dtypes'}: {why}"
               for in_float64, why in failed.items()]
    return NodeCheck("skipped", "cannot be re-run on copies of its inputs, so it is not checked ("
                     + "; ".join(reasons) + ")")


def declared_surrogate(name: str) -> str:
    """Why a Function with `surrogate_gradient = True` is not checked."""
    return (f"{name} declares a surrogate gradient (surrogate_gradient = True): its backward is "
            "not meant to be the derivative of its forward")


def surrogate_advice(name: str) -> str:
    """What to tell the author of a custom Function whose backward failed a check."""
    return (f"If {name}'s backward is meant to differ from its forward's derivative (a gradient "
            "reversal layer, a surrogate gradient), set "
            f"surrogate_gradient = True on {name}: the checks then skip it.")


def _ran_on_a_gpu(args) -> bool:
    return any(arg._device is not cpu if isinstance(arg, Tensor) else
               isinstance(arg, list | tuple) and _ran_on_a_gpu(arg) for arg in args)


def _all_float64(args) -> bool:
    return all(arg.dtype.itemsize == 8 for arg in args
               if isinstance(arg, Tensor) and arg.dtype.is_floating_point)

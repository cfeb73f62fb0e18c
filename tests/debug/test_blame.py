"""genesis.debug.blame: input names, the backward's def and return lines, the line each
gradient slot is computed on, and explanations only where every checked element fits."""
import numpy as np

import genesis
from genesis.debug.blame import BackwardSite, explain_inputs, forward_input_names


class Affine(genesis.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        return x * weight + bias

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        grad_x = grad * weight
        if ctx.needs_input_grad[1]:
            grad_weight = grad * x
        else:
            grad_weight = None
        return (grad_x,
                grad_weight,
                grad)  # the bias's


def _lines(marker):
    import inspect
    lines, start = inspect.getsourcelines(Affine.backward)
    return next(start + number for number, line in enumerate(lines) if marker in line)


def test_input_names_come_from_forward_without_ctx():
    assert forward_input_names(Affine) == ["x", "weight", "bias"]


def test_the_return_line_and_each_slots_line_are_found_by_running_the_backward():
    site = BackwardSite.of(Affine)
    assert site.def_line == _lines("def backward")
    x, w, b = (genesis.randn(3, requires_grad=True) for _ in range(3))
    with site.watching():
        Affine.apply(x, w, b).sum().backward()
    assert site.return_lines == [_lines("return (grad_x,")]
    assert site.slot_site(0) == (_lines("grad_x = grad * weight"), "grad_x = grad * weight")
    # assigned twice (a branch): the slot is placed at the return, not guessed
    assert site.slot_site(1) == (_lines("grad_weight,"), "grad_weight,")
    assert site.slot_site(2) == (_lines("grad)  # the bias's"), "grad)  # the bias's")


def test_no_return_seen_means_no_line():
    assert BackwardSite.of(Affine).slot_site(0) == (None, "")


def _checked(gradient, true, indices):
    return (indices, [gradient[i] for i in indices], [true[i] for i in indices])


def test_explanations_hold_at_every_checked_element_or_are_not_given():
    rng = np.random.default_rng(0)
    true = {0: rng.standard_normal((4, 4)), 1: rng.standard_normal((4, 4))}
    indices = [(0, 1), (2, 3), (3, 0), (1, 1)]
    cases = {
        "sign": ({0: -true[0]}, "analytical = -numerical at every checked element (the sign is wrong)"),
        "factor": ({0: 3 * true[0]}, "analytical = 3 x numerical at every checked element "
                                     "(a constant factor: an extra factor 3?)"),
        "transpose": ({0: true[0].T}, "analytical is the transpose of numerical at every "
                                      "checked element"),
        "noise": ({0: true[0] + rng.standard_normal((4, 4))}, None),
    }
    for name, (analytical, words) in cases.items():
        found = explain_inputs({0: _checked(analytical[0], true[0], indices)}, analytical, 1e-5, 1e-3)
        assert found.get(0) == words, name
    swapped = {0: true[1], 1: true[0]}
    found = explain_inputs({0: _checked(swapped[0], true[0], indices),
                            1: _checked(swapped[1], true[1], indices)}, swapped, 1e-5, 1e-3)
    assert "returns the two swapped" in found[0] and "input 1" in found[0]
    assert "input 0" in found[1]


def test_a_sum_over_the_wrong_axis_is_told_only_from_the_output_gradient():
    rng = np.random.default_rng(1)
    given = rng.standard_normal((4, 4))  # the gradient the output was given
    indices = [(0,), (2,), (3,)]
    right, wrong = given.sum(0), given.sum(1)
    found = explain_inputs({0: _checked(wrong, right, indices)}, {0: wrong}, 1e-5, 1e-3, [given])
    assert found[0] == ("reduced over the wrong axis: the backward sums the output's gradient "
                        "over axis 1, the true gradient sums it over axis 0")
    # a gradient that is no sum of the output's gradient: no such claim
    other = wrong + 1.0
    found = explain_inputs({0: _checked(other, right, indices)}, {0: other}, 1e-5, 1e-3, [given])
    assert "axis" not in found.get(0, "")

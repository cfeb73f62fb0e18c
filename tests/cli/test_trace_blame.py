"""Each finding points at the line to edit. A wrong custom backward: the input whose
gradient is wrong (by forward's name), the line that computes it, the backward's def, and
the shape of the error when every checked element fits one (missing factor, swapped,
transposed, wrong axis), none when the error has no simple shape. A backward reading state
changed after forward, a parameter cut off through a number, a saved tensor changed by an
optimizer step or through .data: each at its line."""
from genesis.debug.trace import Trace
from tests.cli.test_trace_cmd import BUGGY, trace
from tests.helpers import line_of


def the_finding(tmp_path, name, kind="gradient_mismatch", exit_code=1):
    """(script, its one finding, the console output) of `genesis trace` on a buggy example."""
    script = BUGGY / name
    result, out = trace(tmp_path, script)
    assert result.exit_code == exit_code, result.output
    (finding,) = Trace.load(out / "trace.json").findings
    assert finding.kind == kind
    return script, finding, result.output


def test_a_missing_factor_is_named_with_the_line_that_computes_the_gradient(tmp_path):
    script, finding, output = the_finding(tmp_path, "missing_factor.py")
    assert finding.title == "wrong gradient in SquaredNorm.backward for weight (input 0)"
    (blame,) = finding.details["blame"]
    assert blame["line"] == f"{script}:{line_of(script, 'grad_weight = grad * weight')}"
    assert blame["explanation"] == ("analytical = 0.5 x numerical at every checked element "
                                    "(a constant factor: a missing factor 2?)")
    assert finding.details["backward_site"] == f"{script}:{line_of(script, 'def backward')}"
    assert "computed at" in output and "a missing factor 2?" in output


def test_swapped_gradients_name_both_inputs(tmp_path):
    script, finding, output = the_finding(tmp_path, "swapped_gradients.py")
    assert finding.title == "wrong gradient in Gate.backward for value and gate (inputs 0, 1)"
    value, gate = finding.details["blame"]
    assert value["name"] == "value" and gate["name"] == "gate"
    assert "the backward returns the two swapped" in value["explanation"]
    assert "the backward returns the two swapped" in gate["explanation"]
    # each slot is traced to the assignment of the name the return puts there
    assert value["line"] == f"{script}:{line_of(script, 'grad_gate = grad * value')}"
    assert gate["line"] == f"{script}:{line_of(script, 'grad_value = grad * gate')}"


def test_a_transposed_weight_gradient_is_named(tmp_path):
    script, finding, _ = the_finding(tmp_path, "transposed_gradient.py")
    (blame,) = finding.details["blame"]
    assert blame["name"] == "weight" and blame["input"] == 1
    assert blame["explanation"] == "analytical is the transpose of numerical at every checked element"
    assert blame["line"] == f"{script}:{line_of(script, 'grad_weight = x.T @ grad')}"


def test_an_error_without_a_simple_shape_is_not_given_one(tmp_path):
    script, finding, _ = the_finding(tmp_path, "wrong_backward.py")
    (blame,) = finding.details["blame"]
    assert blame["name"] == "x" and blame["explanation"] == ""  # (1 - |x|) for (1 + |x|): no guess
    assert blame["line"] == f"{script}:{line_of(script, 'return grad / (1 - x.abs())')}"


def test_a_backward_reading_state_changed_after_forward_names_it(tmp_path):
    script, finding, _ = the_finding(tmp_path, "stale_backward.py", "stale_backward")
    assert finding.title == "TemperedSigmoid.backward depends on state that changed after forward"
    assert finding.source == f"{script}:{line_of(script, 'TemperedSigmoid.apply(x, self)')}"
    assert "ctx.layer.temperature was 2.0 at the end of forward and 1.8 when backward started" \
        in finding.message
    assert "set ctx.temperature = layer.temperature in forward" in finding.message


def test_a_number_round_trip_names_the_item_line_and_the_ops_before_it(tmp_path):
    script, finding, _ = the_finding(tmp_path, "number_round_trip.py", "no_gradient")
    assert finding.title == "gate.weight and gate.bias received no gradient: cut off by .item()"
    assert finding.source == f"{script}:{line_of(script, '.mean().item()')}"
    assert "by .item(), after Linear -> Sigmoid -> Mean" in finding.message


def test_an_optimizer_step_between_two_backward_calls_is_named_as_such(tmp_path):
    script, finding, _ = the_finding(tmp_path, "step_between_backwards.py", "inplace_modified", exit_code=3)
    assert finding.title == "a tensor saved by LinearBackward was modified by SGD.step() before backward"
    step_line = line_of(script, "optimizer.step()  # bug")
    assert finding.source == f"{script}:{step_line}"
    assert "An optimizer step between two backward calls through the same graph" in finding.message
    assert f"step_between_backwards.py:{line_of(script, 'return self.head(')}) saved it" \
        in finding.message


def test_a_sum_over_the_wrong_axis_is_named(tmp_path):
    script, finding, _ = the_finding(tmp_path, "wrong_axis.py")
    (blame,) = finding.details["blame"]
    assert blame["name"] == "bias" and blame["input"] == 1
    assert blame["explanation"] == ("reduced over the wrong axis: the backward sums the output's "
                                    "gradient over axis 1, the true gradient sums it over axis 0")
    assert blame["line"] == f"{script}:{line_of(script, 'return grad, grad.sum(1)')}"


def test_a_saved_tensor_changed_through_data_is_found_at_that_line(tmp_path):
    script, finding, _ = the_finding(tmp_path, "data_write.py", "inplace_modified")
    assert finding.title == ("a tensor saved by TanhBackward and LinearBackward was changed "
                             "through .data before backward")
    assert finding.source == f"{script}:{line_of(script, 'features.data.clamp_')}"
    assert "invisible to autograd's version counters" in finding.message

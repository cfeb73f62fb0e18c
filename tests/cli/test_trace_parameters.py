"""`genesis trace` end to end on training scripts written as PyTorch users write them:
clean ones get no parameter findings; buggy ones get one that names the parameters, says
why (never used, or cut off by .detach()/.data/no_grad and where) and points at the line."""
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genesis.debug.trace import Trace
from genesis_cli.app import app
from tests.helpers import line_of

DATA = Path(__file__).resolve().parent / "data" / "params"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WGAN = DATA.parent / "clean" / "wgan_weight_clipping.py"
CLEAN = sorted(path.name for path in DATA.glob("clean_*.py"))
# Parameters that get no gradient by design: the teacher runs under no_grad and is given to
# no optimizer (its rows say "not trained", and nothing is reported).
UNTRAINED = {"clean_frozen_and_teacher.py": {"teacher.0.weight", "teacher.0.bias", "teacher.2.weight",
                                              "teacher.2.bias"}}


def trace(tmp_path, script, *options, args=()):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-html", "--no-color", "--format", "dot",
                                      "--out", str(out), *options, str(script), *args])
    return result, Trace.load(out / "trace.json")


@pytest.mark.parametrize("name", CLEAN)
def test_clean_training_scripts_get_no_findings(tmp_path, name):
    result, traced = trace(tmp_path, DATA / name)
    assert result.exit_code == 0, result.output
    assert traced.findings == [] and traced.steps_seen > 0
    untrained = UNTRAINED.get(name, set())
    assert {row.name: row.status for row in traced.parameters} == {
        row.name: "not trained" if row.name in untrained else "ok" for row in traced.parameters}
    assert "No findings" in result.output


@pytest.mark.parametrize("name, parameters, reason, marker, words", [
    ("buggy_detach.py", ["encoder.0.weight", "encoder.0.bias"], ".detach()", "# BUG: detach",
     "cut off from the loss at"),
    ("buggy_data.py", ["proj.weight"], ".data", "# BUG: .data", "cut off from the loss at"),
    ("buggy_gan_generator_detached.py", ["G.0.weight", "G.0.bias"], ".detach()",
     "# BUG: detach", "cut off from the loss at"),
    ("buggy_no_grad.py", ["backbone.0.weight", "backbone.0.bias"], "no_grad", "# BUG: no_grad",
     "by genesis.no_grad() (gradients disabled)"),
    ("buggy_unused_output.py", ["aux.weight", "aux.bias"], "used", "# USE: aux",
     "but nothing computed from them reached the loss"),
    ("buggy_unused_layer.py", ["fc2.weight", "fc2.bias"], "unused", None,
     "never used in the forward"),
])
def test_a_parameter_without_gradient_says_why_and_where(tmp_path, name, parameters, reason,
                                                         marker, words):
    script = DATA / name
    result, traced = trace(tmp_path, script)
    assert result.exit_code == 1
    finding, = traced.findings
    assert finding.kind == "no_gradient" and finding.details["parameters"] == parameters
    assert finding.details["reason"] == reason and words in finding.message
    if marker is not None:
        line = line_of(script, marker)
        assert finding.source == f"{script}:{line}" and marker in finding.code
        assert f"{script.name}:{line} (`" in finding.message
    assert {row.name: row.status for row in traced.parameters if row.name in parameters} == \
        dict.fromkeys(parameters, "no gradient")


def test_a_function_whose_backward_returns_none_is_named_not_a_no_grad_cut(tmp_path):
    """The Function's forward runs with gradients disabled, as every Function's does: the
    finding names the Function the gradient did not come back through, beside the gradient
    check that finds its backward wrong."""
    script = DATA / "buggy_function_returns_none.py"
    result, traced = trace(tmp_path, script)
    assert result.exit_code == 1
    kinds = {finding.kind: finding for finding in traced.findings}
    assert set(kinds) == {"gradient_mismatch", "no_gradient"}, traced.findings
    finding = kinds["no_gradient"]
    assert finding.details["parameters"] == ["fc1.weight", "fc1.bias"]
    assert finding.details["reason"] == "function"
    assert finding.title == ("fc1.weight and fc1.bias received no gradient: no gradient came "
                             "back through Swish.backward")
    line = line_of(script, "# USE: Swish")
    assert finding.source == f"{script}:{line}"
    assert "went into the custom Function Swish at " in finding.message
    assert f"{script.name}:{line} (`" in finding.message
    assert "no_grad" not in finding.message


def test_a_layer_replaced_after_the_optimizer_was_built_is_said_to_be_no_longer_in_the_model(
        tmp_path):
    """The optimizer holds the old head (which nothing uses: no gradient, and no word of
    "later backward calls" it never ran in); the new head gets gradients no optimizer applies."""
    result, traced = trace(tmp_path, DATA / "buggy_replaced_layer.py")
    assert result.exit_code == 1
    by_kind = {finding.kind: finding for finding in traced.findings}
    assert sorted(by_kind) == ["no_gradient", "not_optimized"]
    old = by_kind["no_gradient"]
    assert old.details == {"parameters": ["fc.weight", "fc.bias"], "reason": "replaced"}
    assert "received no gradient: no longer in the model" in old.title
    assert "the module that held them was replaced by a new one" in old.message
    assert "later backward calls" not in old.message
    new = by_kind["not_optimized"]
    assert new.details["parameters"] == ["fc.weight#2", "fc.bias#2"]


def test_an_old_head_no_op_uses_is_found_at_the_line_giving_it_to_the_optimizer(tmp_path):
    """A head replaced inside an nn.Sequential (model[1] = ...): no op ever used the old one,
    so its no_gradient finding points at the line that gave it to the optimizer holding it."""
    script = DATA / "buggy_replaced_sequential_head.py"
    result, traced = trace(tmp_path, script)
    assert result.exit_code == 1
    by_kind = {finding.kind: finding for finding in traced.findings}
    assert sorted(by_kind) == ["no_gradient", "not_optimized"]
    assert by_kind["no_gradient"].details["reason"] == "replaced"
    assert by_kind["no_gradient"].source == f"{script}:{line_of(script, 'optimizer = torch.optim')}"
    # the new head's finding is at the line that made it, after the optimizer was built
    made = line_of(script, "model[1] = nn.Linear")
    assert by_kind["not_optimized"].source == f"{script}:{made}"
    assert f"{script.name}:{made}, after the optimizer was built" in \
        " ".join(by_kind["not_optimized"].message.split())


def test_layers_kept_in_a_plain_list_are_named_by_their_path_and_found_unoptimized(tmp_path):
    """Modules in a plain list attribute are not registered: model.parameters() misses
    them, so their gradients pile up and nothing applies them. They are named by the list's
    path, and the finding says to hold them in an nn.ModuleList."""
    script = DATA / "buggy_plain_list_layers.py"
    result, traced = trace(tmp_path, script)
    assert result.exit_code == 1
    finding, = traced.findings
    assert finding.kind == "not_optimized"
    assert finding.details["parameters"] == [  # the model's order, not the backward's
        "hidden[0].weight", "hidden[0].bias", "hidden[1].weight", "hidden[1].bias"]
    assert "plain list, tuple or dict attribute" in finding.message
    assert "nn.ModuleList" in finding.message and "Pass all the model's" not in finding.message
    listed = [row.name for row in traced.parameters]
    assert [name for name in listed if name.startswith("hidden")] == finding.details["parameters"]


def test_vanishing_gradient_is_found_with_its_rule_and_numbers(tmp_path):
    script = DATA / "buggy_vanishing.py"
    result, traced = trace(tmp_path, script)
    assert result.exit_code == 1
    finding, = traced.findings
    assert finding.kind == "vanishing_gradient"
    assert finding.details["parameters"] == ["fc1.weight", "fc1.bias"]
    assert finding.source == f"{script}:{line_of(script, '# BUG')}"
    assert "Rule: grad/weight norm ratio x1000 or more below" in finding.message
    assert "fell from" in finding.message and finding.details["evidence"][0]["name"] == "fc1.weight"


def test_a_critic_whose_loss_cancels_itself_is_found_and_told_so(tmp_path):
    """The clean WGAN with a typo, C(fake) - C(fake): every critic parameter gets exact zeros,
    its weights too, so no bias is taken for one the loss merely does not depend on."""
    clean = WGAN.read_text()
    script = tmp_path / "wgan_typo.py"
    script.write_text(clean.replace("C(fake).mean() - C(real).mean()", "C(fake).mean() - C(fake).mean()"))
    result, traced = trace(tmp_path, script)
    assert result.exit_code == 1
    assert [finding.details["parameters"] for finding in traced.findings] == [
        [f"C.net.{layer}.weight", f"C.net.{layer}.bias"] for layer in (0, 2, 4)]
    assert all(finding.kind == "zero_gradient" and "cancels exactly" in finding.message
               for finding in traced.findings)
    assert {row.name: row.status for row in traced.parameters if row.name.startswith("C.")} == {
        f"C.net.{layer}.{kind}": "zero gradient" for layer in (0, 2, 4)
        for kind in ("weight", "bias")}


def test_custom_function_example_shows_its_training_step(tmp_path):
    """gradcheck and gradgradcheck inside the script are not its steps: the graph recorded
    is the training step's, every parameter is tracked, nothing is reported."""
    result, traced = trace(tmp_path, EXAMPLES / "custom_function.py", "--check-all",
                           args=["--steps", "20"])
    assert result.exit_code == 0, result.output
    assert traced.findings == [] and traced.steps_seen == 20
    graph, = traced.graphs
    assert {node.name for node in graph.nodes if node.kind == "param"} == {
        "limit", "hidden.weight", "hidden.bias", "out.weight", "out.bias"}
    assert [row.name for row in traced.parameters] == [
        "limit", "hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    assert all(check["source"] is not None for check in traced.meta["checks"])


def test_weights_in_global_variables_are_named_by_them_when_backward_runs_in_a_function(
        tmp_path):
    """The backward is called inside `def step()`, whose locals do not hold the weights:
    they are named by the script's globals, not "input0"."""
    result, traced = trace(tmp_path, DATA / "clean_manual_sgd_in_function.py")
    assert result.exit_code == 0, result.output
    assert sorted(row.name for row in traced.parameters) == ["W1", "W2", "b1"]
    graph, = traced.graphs
    assert {node.name for node in graph.nodes if node.kind in ("param", "input")} >= {
        "W1", "b1", "W2"}


def test_parameter_rows_carry_the_step_of_every_figure(tmp_path):
    result, traced = trace(tmp_path, DATA / "clean_accumulation.py")
    row = traced.parameters[0]
    assert row.steps == list(range(160)) and len(row.history) == 160
    assert row.grad_norm == row.history[-1] and row.grad_norm_step == 159 and row.summary == []


def test_parametrized_layers_are_named_by_their_path_in_the_model(tmp_path):
    """spectral_norm and weight_norm call their parametrization while the layer is built,
    before the model holding it exists: its tensors are still named by their path in the
    model the optimizer is given (it was 'original' alone)."""
    result, traced = trace(tmp_path, DATA / "clean_parametrized_layers.py")
    assert result.exit_code == 0, result.output
    assert [row.name for row in traced.parameters] == [
        "0.bias", "0.parametrizations.weight.original0", "0.parametrizations.weight.original1",
        "2.bias", "2.parametrizations.weight.original"]


def test_a_model_rebuilt_after_the_recorded_steps_without_its_optimizer_is_found(tmp_path):
    """The model is made anew at step 10 (resuming from a state_dict) and the optimizer is
    not: the new parameters, first reached long after the recorded step, are tracked under
    their paths and found unoptimized, and the finding names the old ones the optimizer still
    holds. Rebuilding the optimizer too (clean_model_rebuilt_with_its_optimizer.py) is clean."""
    script = DATA / "buggy_model_rebuilt_mid_run.py"
    result, traced = trace(tmp_path, script)
    assert result.exit_code == 1, result.output
    finding, = traced.findings
    assert finding.kind == "not_optimized"
    assert finding.details["parameters"] == ["hidden.weight#2", "hidden.bias#2", "out.weight#2",
                                             "out.bias#2"]
    said = " ".join(finding.message.split())
    assert ("hidden.weight, hidden.bias, out.weight, out.bias, which Adam holds, got no gradient "
            "from any backward call since step 10") in said
    assert "the model (or these layers) was made anew after the optimizer was built" in said
    rebuilt = line_of(script, "model = Net()  # BUG")  # the line that made the new parameters
    assert f"(the new ones at " in said and f"{script.name}:{rebuilt})" in said
    assert finding.source == f"{script}:{rebuilt}"

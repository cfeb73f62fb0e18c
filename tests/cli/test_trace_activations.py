"""`genesis trace` on a model whose ReLU layer dies: one finding, naming the module whose
forward ran the relu, the line, the step it died and the layer that fed it; trace.json keeps
the per-module activation history. (Clean look-alikes: tests/cli/data/clean/, zero findings.)"""
from genesis.debug.trace import Trace
from tests.cli.test_trace_cmd import BUGGY, trace
from tests.helpers import line_of


def test_a_dead_relu_layer_is_named_with_its_module_line_and_step(tmp_path):
    script = BUGGY / "dead_relu.py"
    result, out = trace(tmp_path, script, "--check-all")
    assert result.exit_code == 1, result.output
    loaded = Trace.load(out / "trace.json")
    (finding,) = loaded.findings
    assert finding.kind == "dead_activation" and finding.module == "Regressor"
    assert finding.source == f"{script}:{line_of(script, 'x = self.hidden(x).relu()')}"
    assert finding.step == 0 and finding.details["activation"] == "Regressor.relu"
    assert "on the output of hidden (Linear)" in finding.message
    said = " ".join(result.output.split())
    assert "dead relu units in Regressor.relu" in said
    history = loaded.meta["history"]["activations"]
    assert list(history) == ["hidden", "Regressor.relu", "out", "Regressor"]
    assert min(history["Regressor.relu"]["dead"]["values"]) >= 0.5


def test_the_layers_a_dead_relu_starves_are_told_in_its_finding_not_apart(tmp_path):
    script = BUGGY / "dead_relu_cascade.py"
    result, out = trace(tmp_path, script)
    assert result.exit_code == 1, result.output
    (finding,) = Trace.load(out / "trace.json").findings
    assert finding.kind == "dead_activation" and finding.module == "3"
    line = line_of(script, "loss = nn.functional.mse_loss(model(x), y)")
    assert finding.source == f"{script}:{line}"
    assert finding.details["starved"] == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight"]
    assert finding.details["knock_on"] == [
        "0.weight and 0.bias: gradient always zero (every gradient path to them passes through 3)",
        "2.weight and 2.bias: gradient always zero (every gradient path to them passes through 3)",
        "4.weight: gradient always zero (it multiplies the all-zero output of 3)"]
    said = " ".join(result.output.split())
    assert "Findings (1)" in said and "What followed from it (not reported separately):" in said

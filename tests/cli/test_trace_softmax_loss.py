"""Softmax probabilities given to a loss that wants logits (cross_entropy) or
log-probabilities (nll_loss, kl_div's input), found at the loss's line with the module whose softmax made
them. The clean look-alikes (log_softmax + nll_loss, softmax(x).log() + nll_loss, softmax
for metrics, distillation's soft targets, attention softmax, label smoothing) are in
tests/cli/data/clean and give no findings (test_trace_clean_code.py)."""
from pathlib import Path

from genesis.debug.trace import Trace
from tests.cli.test_trace_cmd import trace
from tests.helpers import line_of

DATA = Path(__file__).resolve().parent / "data"


def the_finding(tmp_path, name: str):
    script = DATA / name
    result, out = trace(tmp_path, script)
    assert result.exit_code == 1, result.output
    (finding,) = Trace.load(out / "trace.json").findings
    assert (finding.kind, finding.severity) == ("softmax_into_loss", "warning"), finding.title
    return script, finding, " ".join(result.output.split())


def test_a_sequential_ending_in_softmax_trained_with_cross_entropy_loss(tmp_path):
    script, finding, output = the_finding(tmp_path, "softmax_into_cross_entropy.py")
    assert finding.source == f"{script}:{line_of(script, '# BUG')}"
    assert finding.title == ("softmax probabilities passed to cross_entropy, which applies "
                             "log_softmax itself")
    assert finding.module == "3" and finding.op == "CrossEntropyBackward" and finding.step == 0
    assert "the output of softmax in module 3 (Softmax), that is, probabilities" in finding.message
    assert "log(1 + 2/e) = 0.551" in finding.message
    assert "Pass the logits (the softmax's input) to cross_entropy" in output


def test_softmax_viewed_into_nll_loss(tmp_path):
    script, finding, output = the_finding(tmp_path, "softmax_into_nll_loss.py")
    assert finding.source == f"{script}:{line_of(script, '# BUG')}"
    assert finding.module is None and finding.op == "GatherBackward"
    assert finding.details["through"] == ["View"] and finding.details["loss"] == "nll"
    assert "which is what nll_loss (nn.NLLLoss) computes; it expects log-probabilities" in output
    assert "Use log_softmax instead of softmax" in output


def test_distillation_giving_kl_div_the_students_probabilities(tmp_path):
    script, finding, output = the_finding(tmp_path, "softmax_into_kl_div.py")
    assert finding.source == f"{script}:{line_of(script, '# BUG')}"
    assert finding.op == "KLDivBackward" and finding.details["loss"] == "kl_div"
    assert finding.title == ("softmax probabilities passed to kl_div as its input, which holds "
                             "log-probabilities")
    assert "reads its input as log-probabilities" in output
    assert "F.log_softmax(student / T, dim=-1)" in output

"""Smoke tests of the example scripts: each runs for a few steps (as `python examples/X.py
--steps N`, in-process) and prints what its docstring promises."""
import re
import runpy
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str, monkeypatch, capsys, *args: str) -> str:
    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / name), *args])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


def numbers_after(label: str, output: str) -> list:
    return [float(value) for value in re.findall(rf"{label}\s+(-?[\d.]+)", output)]


def test_quickstart_shows_the_graph_and_gradients(monkeypatch, capsys):
    output = run_example("quickstart.py", monkeypatch, capsys)
    assert "grad_fn   : <MeanBackward> -> ((<MulBackward>, 0)" in output
    assert re.search(r"x\.grad    : tensor\(\[\s*-?[\d.]+,\s+-?[\d.]+,\s+-?[\d.]+\]\)", output)
    assert "w.grad    : tensor([[" in output


def test_mlp_loss_goes_down(monkeypatch, capsys):
    output = run_example("mlp.py", monkeypatch, capsys, "--epochs", "60")
    losses = numbers_after("loss", output)
    assert len(losses) == 3 and losses[-1] < 0.8 * losses[0]
    accuracy = float(re.search(r"training accuracy: ([\d.]+)%", output).group(1))
    assert accuracy > 50  # three classes: chance is 33%


def test_custom_function_passes_gradcheck_and_trains(monkeypatch, capsys):
    output = run_example("custom_function.py", monkeypatch, capsys, "--steps", "60")
    assert "gradcheck     : True" in output and "gradgradcheck : True" in output
    losses = numbers_after("loss", output)
    assert len(losses) == 3 and losses[-1] < 0.5 * losses[0]
    assert re.search(r"learned limit: [\d.]+", output)


def test_transformer_loss_goes_down_and_it_samples_text(monkeypatch, capsys):
    output = run_example("transformer.py", monkeypatch, capsys, "--steps", "40")
    losses = numbers_after("loss", output)
    assert len(losses) == 2 and losses[-1] < 0.8 * losses[0]
    sample = re.search(r"sample: '(.*)'", output).group(1)
    assert sample.startswith("the quick ") and len(sample) == len("the quick ") + 40


def test_cnn_accuracy_goes_up(monkeypatch, capsys):
    output = run_example("cnn.py", monkeypatch, capsys, "--epochs", "2")
    accuracies = [float(value) for value in re.findall(r"accuracy ([\d.]+)%", output)]
    assert len(accuracies) == 2 and accuracies[1] > accuracies[0]
    losses = numbers_after("loss", output)
    assert losses[1] < losses[0]
    assert float(re.search(r"test accuracy: ([\d.]+)%", output).group(1)) > 50


def test_clean_kinks_runs(monkeypatch, capsys):
    output = run_example("clean_kinks.py", monkeypatch, capsys)
    assert numbers_after("loss", output)


def test_rnn_cell_learns_the_sign_of_a_walk(monkeypatch, capsys):
    output = run_example("rnn_cell.py", monkeypatch, capsys, "--steps", "60")
    losses = numbers_after("loss", output)
    assert len(losses) == 3 and losses[-1] < 0.5 * losses[0]
    assert float(re.search(r"training accuracy: ([\d.]+)%", output).group(1)) > 80


SMOKE_TESTED = {"quickstart.py", "mlp.py", "custom_function.py", "transformer.py", "cnn.py",
                "clean_kinks.py", "rnn_cell.py"}


def test_every_example_has_a_smoke_test():
    scripts = {path.name for path in EXAMPLES.glob("*.py")}
    assert scripts <= SMOKE_TESTED, f"add a smoke test here for {sorted(scripts - SMOKE_TESTED)}"

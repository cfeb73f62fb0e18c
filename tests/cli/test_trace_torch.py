"""`genesis trace --torch`: an unmodified PyTorch script runs on genesis; a torch name
genesis lacks stops it with one line; a script traced without --torch that uses the real
PyTorch is told so."""
import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genesis_cli.app import app
from tests.helpers import line_of

SCRIPTS = Path(__file__).parent / "data" / "torch"


def traced(tmp_path, script, *options) -> tuple:
    """Trace `script`: a file name in data/torch, or a Path anywhere."""
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--no-html", "--no-color", *options,
                                      "--out", str(out), str(SCRIPTS / script)])
    return result, json.loads((out / "trace.json").read_text())


def test_a_pytorch_script_runs_on_genesis_and_is_traced(tmp_path):
    result, trace = traced(tmp_path, "classifier.py", "--torch")
    assert result.exit_code == 0, result.output
    assert trace["steps_seen"] == 3 and trace["findings"] == []
    assert "step 2 loss" in result.output
    assert trace["meta"]["options"]["torch"] is True


def test_a_pytorch_wgan_has_no_findings_and_its_cancelling_bias_is_told_as_information(tmp_path):
    """The clean WGAN written for PyTorch itself: its critic's last bias drops out of
    mean(C(fake)) - mean(C(real)), and is no warning (exit status 0)."""
    genesis_code = (SCRIPTS.parent / "clean" / "wgan_weight_clipping.py").read_text()
    script = tmp_path / "wgan_weight_clipping.py"
    script.write_text(genesis_code.replace("import genesis as torch", "import torch")
                      .replace("import genesis.nn as nn", "import torch.nn as nn")
                      .replace("from genesis.utils.data", "from torch.utils.data"))
    assert "genesis" not in script.read_text()
    result, trace = traced(tmp_path, script, "--torch", "--check-all")
    assert result.exit_code == 0, result.output
    assert trace["findings"] == [], [finding["title"] for finding in trace["findings"]]
    status = {row["name"]: row["status"] for row in trace["parameters"]}
    assert status.pop("C.net.4.bias") == "no effect on the loss"
    assert set(status.values()) == {"ok"}
    said = " ".join(result.output.split())
    assert "INFO no effect on the loss" in said
    assert "the loss cannot depend on it, by construction" in said  # what the status means
    assert "create_graph=True)); not a finding" in said
    assert said.index("C.net.4.weight") < said.index("C.net.4.bias")  # after those that learn


def test_swa_and_ema_training_has_no_findings(tmp_path):
    """torch.optim.swa_utils as a PyTorch user writes it: the averaged models' parameters
    (copies that no optimizer holds, updated under no_grad, no gradient) are no finding;
    the learning rates (cosine, then SWALR) are PyTorch's."""
    result, trace = traced(tmp_path, "swa_ema_training.py", "--torch", "--check-all")
    assert result.exit_code == 0, result.output
    assert trace["findings"] == [], [finding["title"] for finding in trace["findings"]]
    status = {row["name"]: row["status"] for row in trace["parameters"]}
    assert sorted(status) == ["bn1.bias", "bn1.weight", "fc1.bias", "fc1.weight", "fc2.bias",
                              "fc2.weight"]
    assert set(status.values()) == {"ok"}
    assert "swa accuracy" in result.output and "ema accuracy" in result.output
    pytest.importorskip("torch", reason="PyTorch is not installed")
    pytorch = subprocess.run([sys.executable, str(SCRIPTS / "swa_ema_training.py")],
                             capture_output=True, text=True, timeout=300)
    assert pytorch.returncode == 0, pytorch.stderr
    lrs = re.compile(r"lr (\S+)$", re.MULTILINE)
    assert lrs.findall(result.output) == lrs.findall(pytorch.stdout) == [
        "0.0933", "0.0750", "0.0500", "0.0350", "0.0200", "0.0200"]


def test_an_unsupported_name_stops_the_script_with_one_line(tmp_path):
    result, trace = traced(tmp_path, "sparse_tensor.py", "--torch")
    assert result.exit_code == 3
    assert "not reached" not in result.output
    said = " ".join(result.output.split())
    assert ("UnsupportedTorchAPI: torch.sparse_coo_tensor is not supported by genesis yet (used at "
            in said) and "sparse_tensor.py:4)" in said
    assert "Traceback" not in result.output
    assert trace["meta"]["unsupported_torch"]["name"] == "torch.sparse_coo_tensor"
    assert ("the script stopped at" in said and "at torch.sparse_coo_tensor, which genesis does not "
            "serve yet" in said)


def test_an_unsupported_name_taken_by_from_import_stops_the_script_with_one_line(tmp_path):
    """It was Python's 'ImportError: cannot import name ... (genesis/__init__.py)', with a
    traceback and no word that genesis lacks it."""
    script = tmp_path / "train.py"
    script.write_text("import torch\nfrom torch import nn, sparse_coo_tensor\n")
    result, trace = traced(tmp_path, script, "--torch")
    assert result.exit_code == 3
    said = " ".join(result.output.split())
    assert ("UnsupportedTorchImport: torch.sparse_coo_tensor is not supported by genesis yet "
            "(used at ") in said and "train.py:2)" in said
    assert "Traceback" not in result.output and "cannot import name" not in said
    assert trace["meta"]["unsupported_torch"]["name"] == "torch.sparse_coo_tensor"


def test_an_unsupported_module_stops_the_script_at_its_import(tmp_path):
    result, trace = traced(tmp_path, "unsupported_module.py", "--torch")
    assert result.exit_code == 3
    said = " ".join(result.output.split())
    assert "UnsupportedTorchModule: torch.fx is not supported by genesis yet" in said
    assert "unsupported_module.py:2)" in said


def test_tracing_a_pytorch_script_without_torch_suggests_it(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is not installed")
    result, trace = traced(tmp_path, "classifier.py")
    assert result.exit_code == 4  # nothing checked
    said = " ".join(result.output.split())
    assert "built its graphs with PyTorch itself" in said
    assert "genesis trace --torch" in said and trace["meta"]["real_torch"] is True


def test_a_pytorch_script_stopped_by_sigterm_still_suggests_torch(tmp_path):
    """SIGTERM ends the script's process before the script's end, where the hint is decided
    otherwise: the process writes it down with the rest of what it keeps, and no traceback."""
    pytest.importorskip("torch", reason="PyTorch is not installed")
    script = tmp_path / "train.py"
    script.write_text("import os\nimport signal\nimport torch\n"
                      "w = torch.ones(3, requires_grad=True)\n"
                      "for step in range(10):\n"
                      "    (w * w).sum().backward()\n"
                      "    if step == 2:\n"
                      "        os.kill(os.getpid(), signal.SIGTERM)\n")
    result, trace = traced(tmp_path, script)
    assert result.exit_code == 128 + signal.SIGTERM, result.output
    said = " ".join(result.output.split())
    assert "script: was killed by SIGTERM (signal 15)" in said
    assert "built its graphs with PyTorch itself" in said and "genesis trace --torch" in said
    assert "Traceback" not in result.output
    assert trace["meta"]["real_torch"] is True and trace["meta"]["finished"] is False
    assert "history" in trace["meta"] and "losses" in trace["meta"]  # what it kept


def test_quiet_summary_suggests_torch_too(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is not installed")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["trace", "--quiet", "--no-html", "--out", str(out),
                                      str(SCRIPTS / "classifier.py")])
    assert "(the script used PyTorch itself: run it with --torch)" in result.output


@pytest.mark.parametrize("script, kind, title", [
    ("custom_optimizer_no_zero_grad.py", "gradient_accumulation",
     "gradients accumulate across LARS.step() calls: nothing clears them"),
    ("closure_optimizer_no_zero_grad.py", "gradient_accumulation",
     "gradients accumulate across MomentumSGD.step() calls: nothing clears them"),
    ("accumulation_flush_no_zero_grad.py", "gradient_accumulation",
     "gradients accumulate across Adam.step() calls: nothing clears them"),
    ("lookahead_no_zero_grad.py", "gradient_accumulation",
     "gradients accumulate across Lookahead.step() calls: nothing clears them"),
    ("head_group_lr_zero.py", "not_updated", "Adam never changes head.weight, head.bias"),
])
def test_a_training_loop_bug_in_a_pytorch_script_is_found_once_at_its_line(tmp_path, script, kind,
                                                                           title):
    """Buggy twins of clean corpus programs (tests/compat/programs): optimizers with a step
    of their own (watched like the built-in ones, blamed at the script's step() call, not
    inside the class), a wrapper's inner optimizer (judged once, as the wrapper), a
    zero_grad() forgotten after one of two step() calls (blamed at that call), and an lr-0
    group that should train next to one frozen by lr 0 on purpose and unfrozen later."""
    result, trace = traced(tmp_path, script, "--torch")
    assert result.exit_code == 1, result.output
    (finding,) = trace["findings"]
    assert (finding["kind"], finding["title"]) == (kind, title)
    assert finding["source"] == f"{SCRIPTS / script}:{line_of(SCRIPTS / script, '# bug')}"

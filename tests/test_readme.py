"""The README's library example runs as shown (its last statement raises AnomalyError on purpose)."""
import re
from pathlib import Path

import pytest

import genesis

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's word on -inf * 0, as genesis's filter
def test_readme_library_example_runs(tmp_path, monkeypatch, capsys):
    text = README.read_text()
    block = re.search(r"```python\n(import genesis\nimport genesis.nn.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    # log(0) = -inf is not raised at once (an intended -inf mask is no defect); the NaN that
    # -inf * 0 makes on the same line is, naming the Log the -inf came from
    with pytest.raises(genesis.autograd.AnomalyError,
                       match=r"Mul produced NaN from inputs holding Inf(.|\n)*Inf in Log"):
        exec(compile(block, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[:4] == ["tensor([2., 4., 6.])", "<AddBackward>", "((<MulBackward>, 0), (None, 0))",
                           "True"]
    assert (tmp_path / "model.svg").exists() and (tmp_path / "model.html").exists()

"""`genesis trace ... | head` and `| true`: the reader of the report leaves before it is
printed. The run keeps its files and its exit status (0 for a clean run, 1 for findings),
with no traceback; `genesis gradcheck` keeps its status too (genesis_cli.closed_readers)."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from genesis_cli.closed_readers import ReaderSafeStream, readers_may_leave

CLEAN = """\
import genesis
model = genesis.nn.Linear(3, 1)
model(genesis.randn(4, 3)).pow(2).mean().backward()
"""

FINDING = """\
import genesis
model = genesis.nn.Linear(3, 1)
unused = genesis.nn.Linear(3, 1)
optimizer = genesis.optim.SGD(list(model.parameters()) + list(unused.parameters()), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    model(genesis.randn(4, 3)).pow(2).mean().backward()
    optimizer.step()
"""


BROKEN_GRADIENT = """\
import genesis


class Square(genesis.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x  # the factor 2 is missing
"""


def into_a_closed_pipe(*arguments: str) -> subprocess.CompletedProcess:
    """`genesis ARGUMENTS` with its standard output a pipe nobody reads any more."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        return subprocess.run([sys.executable, "-m", "genesis_cli", *arguments],
                              stdout=write, stderr=subprocess.PIPE, text=True, check=False)
    finally:
        os.close(write)


def traced_into_a_closed_pipe(tmp_path, source: str, *options: str) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(source)
    return into_a_closed_pipe("trace", "--no-html", "--out", str(tmp_path / "out"), *options,
                              str(script))


@pytest.mark.parametrize("options", [(), ("--json",), ("-q",)])
def test_a_clean_run_whose_reader_left_ends_with_status_0_and_keeps_its_files(tmp_path, options):
    done = traced_into_a_closed_pipe(tmp_path, CLEAN, *options)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert (tmp_path / "out" / "trace.json").is_file()


def test_findings_still_give_status_1_when_the_reader_left(tmp_path):
    done = traced_into_a_closed_pipe(tmp_path, FINDING)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_gradcheck_keeps_its_pass_and_fail_status_when_the_reader_left(tmp_path):
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(BROKEN_GRADIENT.replace("grad * x  # the factor 2 is missing", "grad * 2 * x"))
    bad.write_text(BROKEN_GRADIENT)
    passed, failed = into_a_closed_pipe("gradcheck", str(good)), into_a_closed_pipe("gradcheck", str(bad))
    assert (passed.returncode, failed.returncode) == (0, 1), passed.stderr + failed.stderr
    assert "Traceback" not in passed.stderr + failed.stderr


def test_a_stream_whose_reader_left_drops_the_rest_and_points_at_dev_null(tmp_path):
    read, write = os.pipe()
    os.close(read)
    stream = ReaderSafeStream(os.fdopen(write, "w"))
    try:
        stream.write("x" * 100_000)  # more than a pipe holds: the write itself fails
        stream.flush()
        assert stream.reader_gone
        stream.write("more")
        stream.flush()  # the descriptor is /dev/null now: nothing raises, at exit either
        assert os.path.samefile(f"/proc/self/fd/{stream.fileno()}", os.devnull)
    finally:
        stream.close()


def test_readers_may_leave_puts_the_streams_back():
    before = sys.stdout, sys.stderr
    with readers_may_leave():
        assert isinstance(sys.stdout, ReaderSafeStream) and isinstance(sys.stderr, ReaderSafeStream)
        print("seen", file=sys.stdout)
    assert (sys.stdout, sys.stderr) == before


def test_other_errors_are_not_swallowed():
    class Full(io.StringIO):
        def write(self, text):
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        ReaderSafeStream(Full()).write("report")

"""The child process a traced script runs in is started before it is needed
(genesis_cli.warm_child): it must behave exactly like one started when the run begins."""
import os
import pty
import select
import subprocess
import sys
import time

from genesis_cli import supervise, warm_child
from genesis_cli.warm_child import WarmChild


def run_genesis(*arguments, **options):
    return subprocess.run([sys.executable, "-m", "genesis_cli", *arguments],
                          capture_output=True, text=True, check=False, **options)


def trace_with_a_stream_closed(redirection, out, script):
    """`genesis trace` started by a shell with one of its standard streams closed."""
    return subprocess.run(
        ["sh", "-c", f'exec "$0" -m genesis_cli trace --no-html --out "$1" "$2" {redirection}',
         sys.executable, str(out), str(script)], capture_output=True, text=True, check=False)


def test_a_child_given_no_orders_leaves_quietly(capfd):
    child = WarmChild.started()
    child.discard()
    assert child.process.returncode == 0
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


def test_trace_help_prints_only_the_help():
    completed = run_genesis("trace", "--help")
    assert completed.returncode == 0
    assert "Run SCRIPT (or -m MODULE) and report" in completed.stdout and completed.stderr == ""


def test_the_script_reads_the_commands_standard_input(tmp_path):
    script = tmp_path / "echo.py"
    script.write_text("import sys\nprint('got', sys.stdin.read().strip().upper())\n")
    completed = run_genesis("trace", "--no-html", "--out", str(tmp_path / "out"), str(script),
                            input="hello\n")
    assert "got HELLO" in completed.stdout
    assert completed.returncode == 4  # no backward call: nothing was checked


def test_long_orders_arrive_whole(tmp_path):
    script = tmp_path / "count.py"
    script.write_text("import sys\nprint('arguments', len(sys.argv) - 1, sys.argv[-1])\n")
    arguments = [f"argument-{index:06d}" for index in range(20000)]  # ~300 KB of orders
    completed = run_genesis("trace", "--no-html", "--out", str(tmp_path / "out"), str(script),
                            *arguments)
    assert "arguments 20000 argument-019999" in completed.stdout


def test_script_output_to_a_terminal_is_line_buffered(tmp_path):
    """Python buffers stdout by lines when it is a terminal: so must the warm child, whose
    stdout became the terminal only when its orders came. The script's first line must reach
    the terminal before its 3-second sleep ends, so well before its second line (timed from
    one arrival to the next: however long genesis trace takes to start on a busy machine)."""
    script = tmp_path / "slow.py"
    script.write_text("import time\nprint('first', flush=False)\ntime.sleep(3)\nprint('second')\n")
    master, slave = pty.openpty()
    child = subprocess.Popen([sys.executable, "-m", "genesis_cli", "trace", "--quiet", "--no-html",
                              "--out", str(tmp_path / "out"), str(script)],
                             stdin=slave, stdout=slave, stderr=slave,
                             env={key: value for key, value in os.environ.items()
                                  if key != "PYTHONUNBUFFERED"})  # Python's own choice
    os.close(slave)
    seen, arrived, deadline = b"", {}, time.monotonic() + 60
    try:
        while b"second" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    break
                for line in (b"first", b"second"):
                    if line in seen:
                        arrived.setdefault(line, time.monotonic())
        assert b"first" in arrived and b"second" in arrived, seen
        assert arrived[b"second"] - arrived[b"first"] > 1.5  # the first came before the sleep
    finally:
        child.wait(timeout=60)
        os.close(master)


def test_a_prestarted_child_that_died_is_replaced(tmp_path, monkeypatch):
    script = tmp_path / "hello.py"
    script.write_text("print('hello from the script')\n")
    dead = WarmChild.started()
    dead.process.kill()
    dead.process.wait()
    monkeypatch.setattr(warm_child, "_prestarted", [dead])
    out = tmp_path / "out.txt"
    with open(out, "w") as stream:
        run = supervise.run_traced(str(script), [], {"steps": 1, "check": False, "check_all": False,
                                                     "anomaly": True, "torch": False,
                                                     "metrics": None, "tensorboard": None},
                                   None, script_stdout=stream, script_stderr=stream)
    assert run.returncode == 0 and run.finished
    assert "hello from the script" in out.read_text()


def test_genesis_trace_started_without_a_standard_output_still_runs_and_writes(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import genesis\nx = genesis.ones(2, requires_grad=True)\n"
                      "(x * 3).sum().backward()\nprint('not shown anywhere')\n")
    out = tmp_path / "out"
    completed = trace_with_a_stream_closed(">&-", out, script)
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr
    assert (out / "trace.json").is_file()


def test_a_script_started_without_standard_input_has_none_as_under_python(tmp_path):
    script = tmp_path / "read.py"
    script.write_text("import sys\nprint('stdin', sys.stdin)\n")
    completed = trace_with_a_stream_closed("<&-", tmp_path / "out", script)
    assert "stdin None" in completed.stdout

"""`genesis trace` keeps what it captured whatever the script does to its process: exits
abruptly, is killed, changes directory, closes its streams, runs threads, forks; and an
output folder that can't be written costs the files, never the report."""
import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genesis.debug.journal import read_journal
from genesis_cli.trace_settings import PARTIAL_FOLDER
from genesis.debug.trace import Trace
from genesis_cli.app import app

ROOT = Path(__file__).resolve().parents[2]

TRAINING = """\
import genesis
import genesis.nn as nn

genesis.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)


def train_step():
    optimizer.zero_grad()
    loss = ((model(genesis.randn(16, 4)) - 1.0) ** 2).mean()
    loss.backward()
    optimizer.step()
    return loss
"""


def write_script(tmp_path: Path, body: str, name: str = "train.py") -> Path:
    script = tmp_path / name
    script.write_text(TRAINING + textwrap.dedent(body))
    return script


def trace(script: Path, out: Path, *options, cwd: Path | None = None):
    """`genesis trace` in-process (the script itself runs in a child process)."""
    previous = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(app, ["trace", "--no-html", "--no-color", "--out", str(out),
                                        *options, str(script)])
    finally:
        os.chdir(previous)


def strict_json(path: Path) -> dict:
    def refuse(literal):
        raise ValueError(f"{path} holds the non-JSON literal {literal}")
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def genesis_command(*arguments) -> list:
    return [sys.executable, "-m", "genesis_cli", *map(str, arguments)]


def environment() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def ctrl_c_while_importing(tmp_path: Path, module: str) -> str:
    """A PYTHONPATH under which every process gets Ctrl-C (SIGINT) as it starts importing
    `module` (a sitecustomize that adds an import finder)."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(textwrap.dedent(f"""
        import os, signal, sys

        class CtrlC:  # as if Ctrl-C came while {module} was being imported
            def find_spec(self, name, path=None, target=None):
                if name == {module!r}:
                    os.kill(os.getpid(), signal.SIGINT)
                return None

        sys.meta_path.insert(0, CtrlC())
    """))
    return os.pathsep.join([str(site), str(ROOT)])


# -- abrupt ends: what was captured up to then is reported and written ---------------------
def test_os_exit_after_some_steps_keeps_the_trace(tmp_path):
    script = write_script(tmp_path, """
        import os
        for step in range(10):
            train_step()
            if step == 5:
                os._exit(0)
    """)
    result = trace(script, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "before genesis could finish (os._exit" in result.output
    assert "gradient checks, which run once the script is done, did not run" in result.output
    loaded = Trace.load(tmp_path / "out" / "trace.json")
    assert loaded.meta["finished"] is False and loaded.graphs
    # os._exit brought the journal up to date: every backward call, the last norms
    assert loaded.steps_seen == 6
    assert {row.name: row.grad_norm_step for row in loaded.parameters} == dict.fromkeys(
        ["0.weight", "0.bias", "2.weight", "2.bias"], 5)
    assert not (tmp_path / "out" / PARTIAL_FOLDER).exists()  # trace.json holds it all now


def test_os_exit_with_a_status_passes_it_on(tmp_path):
    script = write_script(tmp_path, "import os\ntrain_step()\nos._exit(7)\n")
    result = trace(script, tmp_path / "out")
    assert result.exit_code == 7, result.output
    assert (tmp_path / "out" / "trace.json").is_file()


@pytest.mark.parametrize("ending, exit_code", [("os._exit(7)", 7),
                                               ("os.kill(os.getpid(), signal.SIGTERM)", -15)])
def test_a_run_that_ends_abruptly_records_how_the_script_ended(tmp_path, ending, exit_code):
    """The script's exit code in --json and trace.json is the one it ended with (-N: killed by
    signal N), not 0; and the files name the script as the report does."""
    script = write_script(tmp_path, f"import os, signal\ntrain_step()\n{ending}\n")
    result = trace(Path(script.name), tmp_path / "out", "--json", cwd=tmp_path)
    summary = json.loads(result.stdout)
    assert summary["exit_code"] == exit_code and summary["status"] == result.exit_code
    loaded = Trace.load(tmp_path / "out" / "trace.json")
    assert loaded.exit_code == exit_code and loaded.script == "train.py"


def test_sigkill_keeps_the_findings_made_before_it(tmp_path):
    script = write_script(tmp_path, """
        import os, signal
        train_step()
        (genesis.tensor([0.0, 1.0], requires_grad=True).log() * 0).sum().backward()  # NaN born
        train_step()
        os.kill(os.getpid(), signal.SIGKILL)     # as the out-of-memory killer would
    """)
    result = trace(script, tmp_path / "out")
    assert result.exit_code == 128 + signal.SIGKILL, result.output
    assert "was killed by SIGKILL" in result.output and "out-of-memory killer" in result.output
    loaded = Trace.load(tmp_path / "out" / "trace.json")
    assert loaded.meta["finished"] is False and loaded.steps_seen >= 2
    assert any(finding.kind == "nan_forward" for finding in loaded.findings)
    strict_json(tmp_path / "out" / "trace.json")


def test_a_script_outliving_a_killed_genesis_writes_its_outputs_and_no_journal(tmp_path):
    """genesis trace killed alone (not its process group): the script runs to its end, its
    process writes trace.json and removes the journal nobody will read."""
    started, finished = tmp_path / "started", tmp_path / "finished"
    script = write_script(tmp_path, f"""
        import time
        train_step()
        open({str(started)!r}, "w").close()
        time.sleep(1.0)
        train_step()
        open({str(finished)!r}, "w").close()
    """)
    out = tmp_path / "out"
    process = subprocess.Popen(genesis_command("trace", "--no-html", "--out", out, script),
                               env=environment(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.kill()
    process.wait()
    while not (finished.exists() and (out / "trace.json").exists()
               and not (out / PARTIAL_FOLDER).exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert Trace.load(out / "trace.json").steps_seen == 2
    assert not (out / PARTIAL_FOLDER).exists()


def test_a_killed_genesis_leaves_a_journal_that_render_reads(tmp_path):
    """Even when genesis itself dies with the script (the whole process group killed),
    trace.partial/ holds what was captured and `genesis render` draws it."""
    marker = tmp_path / "two-steps-done"
    script = write_script(tmp_path, f"""
        import time
        for step in range(3):
            train_step()
        open({str(marker)!r}, "w").close()
        time.sleep(60)
    """)
    out = tmp_path / "out"
    process = subprocess.Popen(genesis_command("trace", "--no-html", "--out", out, script),
                               env=environment(), start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the traced script never got going"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    journal = out / PARTIAL_FOLDER
    assert not (out / "trace.json").exists()
    unfinished = read_journal(journal)
    assert unfinished.meta["finished"] is False and len(unfinished.graphs) == 1
    assert unfinished.steps_seen >= 2  # progress is written at the 2nd, 4th, 8th, ... call
    result = CliRunner().invoke(app, ["render", str(out), "--out", str(tmp_path / "drawn.svg")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "drawn.svg").read_text().lstrip().startswith(("<?xml", "<svg"))


def test_a_journal_cut_mid_line_is_read_up_to_the_cut(tmp_path):
    script = write_script(tmp_path, """
        import time
        train_step()
    """)
    out = tmp_path / "out"
    journal = out / PARTIAL_FOLDER
    # run it finished, then rebuild a journal as a killed run leaves it: the last line cut short
    assert trace(script, out).exit_code == 0
    from genesis.debug.journal import Journal

    recorded = Trace.load(out / "trace.json")
    writer = Journal(journal, {"script": str(script), "args": [], "options": {}})
    writer.graph(0, recorded.graphs[0])
    writer.close()
    with open(journal / "journal.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"record": "graph", "index": 1, "graph": {"nodes": [')
    again = read_journal(journal)
    assert len(again.graphs) == 1 and again.meta["finished"] is False


# -- the script changes its process: outputs still land where --out said at start ----------
def test_the_script_changing_directory_does_not_move_the_outputs(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = write_script(tmp_path, f"""
        import os
        os.chdir({str(elsewhere)!r})
        train_step()
    """)
    result = trace(script, Path("relative-out"), cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "relative-out" / "trace.json").is_file()
    assert not (elsewhere / "relative-out").exists()


@pytest.mark.parametrize("sabotage", [
    "sys.stdout.close()",
    "sys.stdout = sys.stderr = open(os.devnull, 'w')",
    "os.close(1); os.close(2)",
])
def test_the_report_reaches_the_user_whatever_the_script_does_to_its_streams(tmp_path, sabotage):
    script = write_script(tmp_path, f"""
        import os, sys
        train_step()
        {sabotage}
        train_step()
    """)
    completed = subprocess.run(genesis_command("trace", "--no-html", "--no-color", "--out",
                                               tmp_path / "out", script),
                               env=environment(), capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert "backward calls: 2" in completed.stdout
    assert "Written:" in completed.stdout
    assert Trace.load(tmp_path / "out" / "trace.json").steps_seen == 2


def test_backward_on_several_threads_at_once_captures_each_threads_graph(tmp_path):
    script = write_script(tmp_path, """
        import threading

        barrier = threading.Barrier(4)
        errors = []

        def work(width):
            try:
                local = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 1))
                for _ in range(5):
                    barrier.wait(timeout=30)   # all four threads run backward together
                    local(genesis.randn(8, 3)).pow(2).mean().backward()
            except BaseException as error:
                errors.append(error)
                raise

        threads = [threading.Thread(target=work, args=(width,)) for width in (2, 3, 4, 5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
    """)
    result = trace(script, tmp_path / "out", "--steps", "8")
    assert result.exit_code == 0, result.output
    loaded = Trace.load(tmp_path / "out" / "trace.json")
    assert loaded.steps_seen == 20 and loaded.steps_recorded == 8
    widths = sorted({node.shape for graph in loaded.graphs for node in graph.nodes
                     if node.kind == "param" and node.name.endswith("0.weight")})
    assert widths == [(2, 3), (3, 3), (4, 3), (5, 3)]  # each thread's model has its own graph
    # the module calls of one thread never leak into another's graph: each graph's ops are
    # in one model, named by its variable and numbered ("local", "local#2", ...) once a
    # second model is known (a graph filed before the other threads called theirs has the
    # paths of the only model, "0", "1", "2")
    for graph in loaded.graphs:
        roots = {node.module.partition(".")[0] for node in graph.nodes
                 if node.kind == "op" and node.module}
        assert len(roots) == 1 and roots <= {"local", "local#2", "local#3", "local#4"} \
            or roots <= {"0", "1", "2"}, roots


def test_a_forked_child_neither_journals_nor_reports(tmp_path):
    script = write_script(tmp_path, """
        import os
        train_step()
        pid = os.fork()
        if pid == 0:            # the child trains a bit on its own and finishes the script
            train_step()
            train_step()
        else:
            os.waitpid(pid, 0)
            train_step()
    """)
    result = trace(script, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert result.output.count("genesis trace ") == 1  # one report, the parent's
    assert Trace.load(tmp_path / "out" / "trace.json").steps_seen == 2


def test_multiprocessing_workers_do_not_break_the_trace(tmp_path):
    script = write_script(tmp_path, """
        import multiprocessing


        def square(value):
            return value * value


        if __name__ == "__main__":
            train_step()
            for method in ("fork", "spawn"):
                with multiprocessing.get_context(method).Pool(2) as pool:
                    assert pool.map(square, range(4)) == [0, 1, 4, 9]
            train_step()
    """)
    result = trace(script, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert Trace.load(tmp_path / "out" / "trace.json").steps_seen == 2


# -- outputs that can't be written: a clear error, the report, no half-written file ----------
def test_an_output_path_that_is_a_file_is_named_and_the_report_still_printed(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    script = write_script(tmp_path, "train_step()\n")
    result = trace(script, blocker / "out")
    assert f"can't write to the output folder {blocker / 'out'}" in result.output
    assert "backward calls: 1" in result.output  # the report
    assert "Nothing was written" in result.output
    assert result.exit_code == 0
    assert blocker.read_text() == "not a folder"


def test_an_output_folder_that_is_a_file_is_called_a_file(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    result = trace(write_script(tmp_path, "train_step()\n"), blocker)
    said = " ".join(result.output.split())
    assert f"can't write to the output folder {blocker}: it is a file, not a folder." in said
    assert blocker.read_text() == "not a folder"


def test_a_full_disk_leaves_no_truncated_file_and_keeps_the_exit_status(tmp_path):
    """RLIMIT_FSIZE makes writes past a size fail as a full disk would (EFBIG)."""
    script = write_script(tmp_path, "train_step()\nimport sys\nsys.exit(5)\n")
    out = tmp_path / "out"

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    completed = subprocess.run(genesis_command("trace", "--no-color", "--out", out, script),
                               env=environment(), capture_output=True, text=True, timeout=120,
                               preexec_fn=small_files)
    assert completed.returncode == 5, completed.stderr
    assert "can't write" in completed.stderr and "trace.json" in completed.stderr
    assert "backward calls: 1" in completed.stdout
    for path in out.rglob("*"):  # whatever was written is whole
        if path.suffix == ".json":
            strict_json(path)
        assert ".tmp" not in path.name and ".partial." not in path.name, path


def test_each_output_folder_holds_only_its_runs_files(tmp_path):
    out = tmp_path / "out"
    two_graphs = write_script(tmp_path, """
        train_step()
        (genesis.randn(3, requires_grad=True) * 2).sum().backward()
    """, name="two.py")
    assert trace(two_graphs, out, "--steps", "2").exit_code == 0
    assert (out / "graph-2.svg").is_file()
    one_graph = write_script(tmp_path, "train_step()\n", name="one.py")
    assert trace(one_graph, out).exit_code == 0
    assert sorted(path.name for path in out.iterdir()) == ["graph.svg", "metrics.jsonl",
                                                            "trace.json"]


# -- scripts that die early, or never call backward -----------------------------------------
def test_a_syntax_error_shows_only_the_users_line_and_exits_non_zero(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import genesis\nx = (1,\n")
    result = trace(script, tmp_path / "out")
    assert result.exit_code == 3, result.output
    assert "SyntaxError" in result.output and "broken.py" in result.output
    for internal in ("runpy", "genesis_cli", "traced_run", "Traceback"):
        assert internal not in result.output
    assert "Nothing was checked: the script raised before its first backward call" in result.output


def test_a_raising_script_shows_its_own_frames_only(tmp_path):
    script = write_script(tmp_path, """
        def load_batch():
            raise RuntimeError("the data file is missing")

        train_step()
        load_batch()
    """)
    result = trace(script, tmp_path / "out")
    assert result.exit_code == 3, result.output
    assert "RuntimeError: the data file is missing" in result.output
    assert "in load_batch" in result.output
    for internal in ("runpy", "genesis_cli", "traced_run.py", "runner.py"):
        assert internal not in result.output
    assert "No findings in 1 backward call" in result.output


def test_a_script_without_backward_says_nothing_was_checked(tmp_path):
    script = write_script(tmp_path, "print(model(genesis.randn(2, 4)).shape)\n")
    result = trace(script, tmp_path / "out")
    assert result.exit_code == 4, result.output
    assert "Nothing was checked: the script made no backward call" in result.output
    assert "No findings" not in result.output
    quiet = trace(script, tmp_path / "out", "--quiet")
    assert "no backward call completed, nothing checked" in quiet.output and quiet.exit_code == 4


def test_ctrl_c_while_genesis_loads_says_the_script_never_started(tmp_path, monkeypatch):
    """Ctrl-C in the first second, while the script's process still imports genesis: no
    traceback of genesis's imports, no report of a run that never was ("lost ... give --out
    a writable folder"), no files; the exit status of a SIGINT."""
    monkeypatch.setenv("PYTHONPATH", ctrl_c_while_importing(tmp_path, "genesis_cli.traced_run"))
    ran = tmp_path / "ran"
    script = write_script(tmp_path, f"open({str(ran)!r}, 'w').close()\ntrain_step()\n")
    result = trace(script, tmp_path / "out")
    assert result.exit_code == 128 + signal.SIGINT, result.output
    assert "the script never started" in result.output and "Traceback" not in result.output
    assert not ran.exists() and not (tmp_path / "out").exists()  # the folder made for it too


def test_ctrl_c_in_the_script_ends_genesis_trace_as_python_ends(tmp_path):
    """A KeyboardInterrupt the script does not catch (Ctrl-C) is reported as an interruption,
    keeps what was captured, and gives what python gives: status 130, by SIGINT itself, so
    that a shell loop running genesis trace stops too."""
    script = write_script(tmp_path, "for step in range(5):\n    train_step()\n"
                                    "    if step == 2:\n        raise KeyboardInterrupt\n")
    result = trace(script, tmp_path / "out")
    assert result.exit_code == 128 + signal.SIGINT, result.output
    assert "script: interrupted (Ctrl-C or SIGINT: KeyboardInterrupt)" in " ".join(result.output.split())
    assert Trace.load(tmp_path / "out" / "trace.json").exit_code == -signal.SIGINT
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, cwd=tmp_path)
    traced = subprocess.run(genesis_command("trace", "-q", "--no-html", "--out", tmp_path / "o2",
                                            script), capture_output=True, env=environment(),
                            cwd=tmp_path)
    assert traced.returncode == plain.returncode == -signal.SIGINT, traced.stderr


def test_ctrl_c_while_genesis_trace_parses_its_command_line_ends_quietly(tmp_path):
    """Ctrl-C while `genesis trace` itself still imports (its command line not yet parsed):
    no traceback, the status of a SIGINT, and the waiting script process goes too."""
    script = write_script(tmp_path, "train_step()\n")
    path = ctrl_c_while_importing(tmp_path, "genesis_cli.root")
    completed = subprocess.run(genesis_command("trace", "--out", tmp_path / "out", script),
                               capture_output=True, text=True, timeout=60,
                               env={**environment(), "PYTHONPATH": path})
    assert completed.returncode == -signal.SIGINT, completed.stderr
    assert "Traceback" not in completed.stderr and not (tmp_path / "out").exists()


def test_a_script_that_ends_abruptly_before_backward_says_so(tmp_path):
    """os._exit before the first backward call: nothing was checked because the script made
    no backward call *before it ended*, not because it makes none."""
    script = write_script(tmp_path, "import os\nmodel(genesis.randn(2, 4))\nos._exit(0)\n")
    result = trace(script, tmp_path / "out")
    output = " ".join(result.output.split())
    assert "The run did not finish" in output, result.output
    assert "Nothing was checked: the script made no backward call before it ended" in output

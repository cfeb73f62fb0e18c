"""The console report of `genesis trace`: header, parameters, gradient checks, findings, files."""
from __future__ import annotations

import os
import signal
from collections import Counter

from rich.console import Console
from rich.text import Text

from genesis.debug.findings import SEVERITY_ORDER
from genesis.debug.printable import printable
from genesis.debug.trace import Trace
from viz.style import format_number

from ..ui import new_table, status_text

SEVERITY_STATUS = {"error": "FAIL", "warning": "WARN", "info": "INFO"}
NO_EFFECT = "no effect on the loss"
SET_BY_HAND = "gradient set by hand"
PARAMETER_STATUS = {"ok": "PASS", "no gradient": "WARN", "not trained": "INFO", NO_EFFECT: "INFO",
                    SET_BY_HAND: "INFO", "zero gradient": "WARN", "exploding": "WARN",
                    "vanishing": "WARN", "nan": "FAIL", "never trains": "FAIL"}
# the parameter table's order; problems are 0
ROW_ORDER = {"ok": 1, NO_EFFECT: 2, "not trained": 2, SET_BY_HAND: 2}
NO_EFFECT_NOTE = (f"{NO_EFFECT}: the loss cannot depend on it, by construction: a bias whose "
                  "gradient was exactly zero while its module's weight learned (what flows back "
                  "into the module cancels over the bias, as a WGAN critic's last bias does in "
                  "mean(C(fake)) - mean(C(real))), or a parameter with no gradient (-) that the "
                  "loss reaches only through a derivative it drops out of (an energy's last bias "
                  "under score matching, whose loss is built from autograd.grad(..., "
                  "create_graph=True)); not a finding")
SET_BY_HAND_NOTE = (f"{SET_BY_HAND}: no backward call reached it, but its optimizer stepped with a "
                    ".grad the script set (as Reptile's meta-update does); not a finding")
CHECK_STATUS = {"pass": "PASS", "fail": "FAIL", "skipped": "SKIP", "error": "ERROR"}
MAX_PARAMETER_ROWS = 40


def print_report(console: Console, trace: Trace, checks: list, files: dict) -> None:
    _header(console, trace)
    if trace.parameters:
        _parameters(console, trace)
    if checks:
        _checks(console, checks)
    _findings(console, trace)
    _files(console, files)


def _header(console: Console, trace: Trace) -> None:
    command = printable(" ".join([short(trace.script), *trace.args]))
    console.print(Text.assemble(("genesis trace ", "bold"), command))
    graphs = trace.graph_summary()
    sizes = ", ".join(f"{graph['ops']} op{'s' if graph['ops'] != 1 else ''}" for graph in graphs)
    devices = sorted({device for graph in graphs for device in graph["devices"] if device != "cpu"})
    on = f" on {', '.join(devices)}" if devices else ""  # a CPU run says nothing
    ended = _how_it_ended(trace)
    if trace.meta.get("lost"):  # (the record died with the script's process)
        console.print(f"  backward calls: unknown   script: {ended}", highlight=False)
        console.print()
        return
    seen = f"at least {trace.steps_seen}" if trace.meta.get("finished") is False else trace.steps_seen
    console.print(f"  backward calls: {seen} ({trace.steps_recorded} recorded fully)   "
                  f"graphs: {len(graphs)}{f' ({sizes}{on})' if sizes else ''}   "
                  f"time: {trace.duration_s:.2f} s   script: {ended}", highlight=False)
    console.print()


def _how_it_ended(trace: Trace) -> str:
    if trace.meta.get("finished") is False:
        return trace.meta.get("ended", "did not finish")
    if interrupted(trace):
        return INTERRUPTED
    return "raised an exception" if trace.script_error else f"exit status {trace.exit_code}"


INTERRUPTED = "interrupted (Ctrl-C or SIGINT: KeyboardInterrupt)"


def interrupted(trace: Trace) -> bool:
    """Whether the script ended on a KeyboardInterrupt it did not catch (Ctrl-C): its exit
    code is then -SIGINT, as python ends such a script."""
    return bool(trace.script_error) and trace.exit_code == -signal.SIGINT


def _parameters(console: Console, trace: Trace) -> None:
    """Each parameter's latest gradient norm and the step (backward call, from 0) it is from,
    written as the graph pictures and the HTML report write it. Problems first, then the
    parameters that got gradients (the latest to get one first: a model trained after a quick
    check of another comes before it), then those nobody trains."""
    rows = sorted(trace.parameters, key=lambda row: (
        ROW_ORDER.get(row.status, 0),
        -row.grad_norm_step if row.status == "ok" and row.grad_norm_step is not None else 0))
    table = new_table("parameter", "shape", ("grad norm", "right"), ("at step", "right"), "status",
                      title=f"Parameters ({len(rows)})")
    for row in rows[:MAX_PARAMETER_ROWS]:
        norm = "-" if row.grad_norm is None else format_number(row.grad_norm)
        step = "-" if row.grad_norm is None or row.grad_norm_step is None else str(row.grad_norm_step)
        said = row.status
        if said == "ok" and row.grad_norm is None:  # gradients reached it, none was measured
            said = ("reached (no .grad to read: a gradient taken by autograd.grad, or .grad "
                    "cleared before the backward call ended)")
        status = Text.assemble(status_text(PARAMETER_STATUS.get(row.status, "INFO")), f" {said}")
        table.add_row(Text(printable(row.name)), "x".join(map(str, row.shape)) or "scalar", norm, step,
                      status)
    console.print(table)
    if len(rows) > MAX_PARAMETER_ROWS:
        left = Counter(row.status for row in rows[MAX_PARAMETER_ROWS:])
        console.print(f"  ... {len(rows) - MAX_PARAMETER_ROWS} more ("
                      + ", ".join(f"{count} {status}" for status, count in left.items()) + ")")
    if any(row.grad_norm is not None for row in rows):
        console.print(Text("grad norm: of .grad as each backward call left it (unscaled; before "
                           "any clipping)", style="dim"))
    if any(row.status == NO_EFFECT for row in rows):
        console.print(Text(NO_EFFECT_NOTE, style="dim"))
    if any(row.status == SET_BY_HAND for row in rows):
        console.print(Text(SET_BY_HAND_NOTE, style="dim"))
    console.print()


def _checks(console: Console, checks: list) -> None:
    table = new_table("Function", "called at", "gradient check", title=f"Gradient checks ({len(checks)})",
                      unbroken=("called at",))
    for check in checks:
        verdict = Text.assemble(status_text(CHECK_STATUS[check["status"]]),
                                f" {check['reason']}" if check["reason"] else "")
        table.add_row(Text(printable(check["function"])), Text(printable(short(check["source"]))), verdict)
    console.print(table)
    console.print()


def _findings(console: Console, trace: Trace) -> None:
    if trace.meta.get("finished") is False:
        captured = "Nothing it captured reached genesis trace" if trace.meta.get("lost") else \
            "What was captured up to then is reported"
        console.print(Text(f"The run did not finish: the script {_how_it_ended(trace)}. "
                           f"{captured}; the gradient checks, which run once the script is "
                           "done, did not run.", style="bold yellow"))
        console.print()
    if not trace.findings:
        verdict = what_was_checked(trace)
        style = "bold green" if trace.steps_seen else "bold yellow"
        console.print(Text(verdict, style=style))
        console.print()
        return
    table = new_table("", "finding", "op / Function", "module", "where",
                      title=f"Findings ({len(trace.findings)})", unbroken=("where",))
    for finding in trace.findings:
        op = finding.op or "-"
        if finding.function and finding.op and finding.function not in finding.op:
            op = f"{finding.op} ({finding.function})"
        table.add_row(status_text(SEVERITY_STATUS[finding.severity]), Text(printable(finding.title)),
                      Text(printable(op)), Text(printable(finding.module or "-")),
                      Text(printable(short(finding.source))))
    console.print(table)
    console.print()
    for number, finding in enumerate(trace.findings, 1):
        title = Text.assemble((f"{number}. ", "bold"), (printable(finding.title), "bold"))
        console.print(title)
        if finding.source:
            console.print(Text(printable(f"   at {short(finding.source)}"
                                         + (f":  {finding.code}" if finding.code else ""))))
        if finding.step is not None:
            in_module = f", in module {finding.module}" if finding.module else ""
            console.print(Text(printable(f"   first at step {finding.step} of {trace.steps_seen} "
                                         f"(backward call {finding.step + 1}){in_module}")))
        for line in finding.message.splitlines():
            console.print(Text(printable(f"   {line}")), soft_wrap=True)
        console.print()


def what_was_checked(trace: Trace) -> str:
    """The sentence printed when there are no findings: what was checked, so "no findings"
    is never said of a run where nothing was, nor "no backward call" of a run whose record
    was lost.

    >>> what_was_checked(Trace(script="x.py", steps_seen=0))
    'Nothing was checked: the script made no backward call, so there were no gradients to check.'
    >>> what_was_checked(Trace(script="x.py", steps_seen=0, meta={"finished": False}))[:69]
    'Nothing was checked: the script made no backward call before it ended'
    >>> print(what_was_checked(Trace(script="x.py", steps_seen=1, meta={
    ...     "options": {"anomaly": False}, "calls_not_rechecked": 2,
    ...     "checks": [{"status": "pass"}, {"status": "skipped"}]})))
    No findings in 1 backward call: 1 of 2 re-checked Function calls agree with finite differences (1 skipped, see above; 2 more calls of a Function already re-checked at the same line were not re-checked).
    """
    if trace.meta.get("lost"):
        return ("Nothing was checked: what the script's process captured was lost with it (it "
                "ended before sending it, and without a writable output folder it kept no "
                "journal to read it from); give --out a writable folder to keep it.")
    if trace.steps_seen == 0:
        unsupported = trace.meta.get("unsupported_torch")
        if unsupported:
            where = f" at {unsupported['where']}" if unsupported.get("where") else ""
            return (f"Nothing was checked: the script stopped{where}, before its first backward "
                    f"call, at {unsupported['name']}, which genesis does not serve yet.")
        if trace.script_error:
            return ("Nothing was checked: the script raised before its first backward call "
                    "(its traceback was printed on stderr).")
        if trace.meta.get("real_torch"):
            return (f"Nothing was checked: the script built its graphs with PyTorch itself (it "
                    f"imported torch), so genesis saw no backward call. Run it on genesis with "
                    f"`genesis trace --torch {trace.script}`.")
        if trace.meta.get("finished") is False:  # killed, or os._exit, before the first one
            return ("Nothing was checked: the script made no backward call before it ended, so "
                    "there were no gradients to check.")
        return ("Nothing was checked: the script made no backward call, so there were no "
                "gradients to check.")
    options = trace.meta.get("options", {})
    parts = []
    checks = trace.meta.get("checks", [])
    if checks:
        passed = sum(1 for check in checks if check["status"] == "pass")
        notes = [f"{len(checks) - passed} skipped, see above"] if passed < len(checks) else []
        more = trace.meta.get("calls_not_rechecked", 0)
        if more:
            notes.append(f"{more} more call{'s' if more != 1 else ''} of a Function already "
                         f"re-checked at the same line {'were' if more != 1 else 'was'} not "
                         "re-checked")
        parts.append(f"{passed} of {len(checks)} re-checked Function call"
                     + ("s agree" if len(checks) != 1 else " agrees")
                     + " with finite differences" + (f" ({'; '.join(notes)})" if notes else ""))
    elif options.get("check", True) and trace.meta.get("finished") is not False:
        parts.append("no custom Function to re-check (--check-all re-checks built-in ops too)")
    if options.get("anomaly", True):
        skips = trace.meta.get("scaler_skips", 0)
        parts.append("no NaN or Inf that reached the loss, a gradient or a parameter" + (
            f" ({skips} step{'s' if skips != 1 else ''} a GradScaler skipped because its loss "
            "scale made the gradients overflow, as it does while it finds its scale)"
            if skips else ""))
    if trace.parameters:
        parts.append(f"every parameter a backward should reach got a gradient "
                     f"({len(trace.parameters)} tracked)")
    calls = f"{trace.steps_seen} backward call{'s' if trace.steps_seen != 1 else ''}"
    if trace.meta.get("finished") is False:
        calls = "at least " + calls
    return f"No findings in {calls}: " + "; ".join(parts) + "." if parts else \
        f"No findings in {calls} (every check was turned off)."


def wrote_anything(files: dict) -> bool:
    """Whether any of the trace's outputs (trace.json, a picture, report.html) was written."""
    return bool(files.get("json") or files.get("graphs") or files.get("html"))


def _files(console: Console, files: dict) -> None:
    if not wrote_anything(files):
        if not (files.get("metrics") or files.get("tensorboard")):
            console.print(Text("Nothing was written (the messages above say why).", style="bold red"))
            return
        console.print(Text("trace.json, the pictures and report.html were not written (the errors "
                           "above say why).", style="bold red"))
    console.print(Text("Written:", style="bold"))
    if files.get("json"):
        console.print(Text(printable(f"  {short(files['json'])}")), soft_wrap=True)
    for path in files.get("graphs", ()):
        console.print(Text(printable(f"  {short(path)}")), soft_wrap=True)
    if "html" in files:
        console.print(Text(printable(f"  {short(files['html'])}  (open it in a browser)")),
                      soft_wrap=True)
    if "metrics" in files:
        console.print(Text(printable(f"  {short(files['metrics'])}  (one JSON line per step)")),
                      soft_wrap=True)
    if "tensorboard" in files:
        console.print(Text(printable(f"  {short(files['tensorboard'])}  (TensorBoard event files)")),
                      soft_wrap=True)


def short(location: str | None) -> str:
    """A `file:line` relative to the current folder when the file is under it."""
    if not location:
        return "-"
    path, separator, line = location.rpartition(":")
    if not separator or not line.isdigit():
        path, line = location, ""
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    shown = relative if not relative.startswith("..") else path
    return f"{shown}:{line}" if line else shown


def summary(trace: Trace, files: dict, status: int) -> dict:
    """What `--json` prints: `status`, the exit status of genesis trace itself (0 no
    findings, 1 findings, 3 the script raised, 4 nothing checked, else the script's own:
    see `genesis trace --help`), beside `exit_code`, the script's; `record_lost` when the
    script's process died with what it captured (no journal to read); counts, findings,
    parameters, files."""
    counts = dict.fromkeys(SEVERITY_ORDER, 0)
    for finding in trace.findings:
        counts[finding.severity] += 1
    return {"script": trace.script, "args": trace.args, "status": status,
            "exit_code": trace.exit_code,
            "script_raised": trace.script_error is not None, "steps_seen": trace.steps_seen,
            "steps_recorded": trace.steps_recorded, "record_lost": bool(trace.meta.get("lost")),
            "counts": counts,
            "findings": [finding.to_dict() for finding in trace.findings],
            "parameters": [{"name": row.name, "shape": list(row.shape), "grad_norm": row.grad_norm,
                            "status": row.status} for row in trace.parameters],
            "files": files}

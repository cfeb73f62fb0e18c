"""What `genesis trace` costs on big graphs, and how fast its report opens.

(a) A script whose one backward call runs through a chain of `--ops` ops (100,000 by
    default: `y = y * 1.0001 + 0.0` repeated), run as `python SCRIPT` and as
    `genesis trace SCRIPT` (default options: gradient checks, NaN watch, report.html),
    each in a fresh process, the two interleaved `--repeat` times; medians of the wall
    time, the CPU time (user + system, all processes: steadier than the wall time on a
    busy machine) and the peak memory of the whole command: the largest resident set of any
    of its processes (`getrusage(RUSAGE_CHILDREN)` in a wrapper process) and the resident
    sets of all of them added up (sampled every 10 ms from /proc). Then the sizes of
    trace.json, graph.svg and report.html.
(b) A model of `--depth` nested modules (each holds the next and runs two ops: about
    200 ops for 100 modules), recorded in this process: the time `viz.to_html` takes
    to write its report, and its size.
(c) Both reports opened in headless Chromium: seconds from navigation to the viewer's
    ready mark (the first drawing painted), median of `--repeat` loads. Target: 2 s.

Nothing is asserted: the figures are printed side by side.

Run: python bench/trace_big_graphs.py [--ops 100000] [--depth 100] [--repeat 3] [--no-browser]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

CHAIN_SCRIPT = """\
import genesis

x = genesis.randn(16, requires_grad=True)
y = x
for _ in range({iterations}):
    y = y * 1.0001 + 0.0
y.sum().backward()
print("grad norm", float((x.grad * x.grad).sum()) ** 0.5)
"""

# Runs COMMAND, sampling the resident set of its whole process tree from /proc; prints
# {"wall_s", "cpu_s" and "largest_rss_mb" (getrusage over the finished children),
# "tree_rss_mb"}.
MEASURE = textwrap.dedent("""\
    import json, os, resource, subprocess, sys, time

    def tree_rss(root):
        parents = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as handle:
                        parents[int(entry)] = int(handle.read().rpartition(")")[2].split()[1])
                except OSError:
                    pass
        tree, frontier = {root}, [root]
        while frontier:
            parent = frontier.pop()
            for pid, ppid in parents.items():
                if ppid == parent and pid not in tree:
                    tree.add(pid)
                    frontier.append(pid)
        total = 0
        for pid in tree:
            try:
                with open(f"/proc/{pid}/statm") as handle:
                    total += int(handle.read().split()[1])
            except OSError:
                pass
        return total * os.sysconf("SC_PAGE_SIZE")

    started = time.perf_counter()
    child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while child.poll() is None:
        peak = max(peak, tree_rss(child.pid))
        time.sleep(0.01)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
                      "largest_rss_mb": usage.ru_maxrss / 1024, "tree_rss_mb": peak / 2**20,
                      "returncode": child.returncode}))
""")


def measured(command: list) -> dict:
    """Wall time and peak memory of `command`, run in a fresh wrapper process."""
    done = subprocess.run([sys.executable, "-c", MEASURE, *command], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, check=True)
    return json.loads(done.stdout)


def chain_commands(ops: int, folder: Path) -> tuple:
    script = folder / "chain.py"
    script.write_text(CHAIN_SCRIPT.format(iterations=ops // 2), encoding="utf-8")
    out = folder / "trace"
    plain = [sys.executable, str(script)]
    traced = [sys.executable, "-m", "genesis_cli", "trace", "--out", str(out), str(script)]
    return plain, traced, out


def compare_chain(ops: int, repeat: int, folder: Path) -> Path:
    plain, traced, out = chain_commands(ops, folder)
    runs = {"python SCRIPT": [], "genesis trace SCRIPT": []}
    for _ in range(repeat):  # interleaved, so a slow moment of the machine hits both
        runs["python SCRIPT"].append(measured(plain))
        runs["genesis trace SCRIPT"].append(measured(traced))
    median = {name: {key: statistics.median(run[key] for run in results)
                     for key in ("wall_s", "cpu_s", "largest_rss_mb", "tree_rss_mb")}
              for name, results in runs.items()}
    codes = sorted({run["returncode"] for results in runs.values() for run in results})
    print(f"(a) a chain of {ops:,} ops, one backward call (median of {repeat}; exit codes {codes})")
    print(f"  {'command':<24} {'wall s':>8} {'x plain':>8} {'cpu s':>8} {'x plain':>8} "
          f"{'largest MB':>11} {'x plain':>8} {'all procs MB':>13} {'x plain':>8}")
    base = median["python SCRIPT"]
    for name, figures in median.items():
        print(f"  {name:<24} {figures['wall_s']:>8.2f} {figures['wall_s'] / base['wall_s']:>7.2f}x "
              f"{figures['cpu_s']:>8.2f} {figures['cpu_s'] / base['cpu_s']:>7.2f}x "
              f"{figures['largest_rss_mb']:>11.0f} "
              f"{figures['largest_rss_mb'] / base['largest_rss_mb']:>7.2f}x "
              f"{figures['tree_rss_mb']:>13.0f} {figures['tree_rss_mb'] / base['tree_rss_mb']:>7.2f}x")
    for name in ("trace.json", "graph.svg", "report.html"):
        path = out / name
        size = f"{path.stat().st_size / 1e6:8.2f} MB" if path.exists() else "  (not written)"
        print(f"  {name:<12} {size}")
    return out / "report.html"


def nested_model(depth: int):
    """`depth` modules, each holding the next: x * scale, the inner module, tanh."""
    import genesis
    from genesis import nn

    class Nest(nn.Module):
        def __init__(self, levels: int):
            super().__init__()
            self.scale = nn.Parameter(genesis.ones(4))
            self.inner = Nest(levels - 1) if levels > 1 else None

        def forward(self, x):
            x = x * self.scale
            if self.inner is not None:
                x = self.inner(x)
            return x.tanh()

    return Nest(depth)


def nested_report(depth: int, repeat: int, folder: Path) -> Path:
    import genesis
    import viz

    model = nested_model(depth)
    with genesis.debug.record() as recording:
        model(genesis.randn(2, 4)).sum().backward()
    graph, = recording.graphs
    ops = sum(1 for node in graph.nodes if node.kind == "op")
    path = folder / "nested.html"
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        viz.to_html(graph, path)
        seconds.append(time.perf_counter() - started)
    print(f"(b) {depth} nested modules, {ops} ops, {len(graph.nodes)} nodes: viz.to_html "
          f"{statistics.median(seconds):.2f} s (median of {repeat}), "
          f"report.html {path.stat().st_size / 1e6:.2f} MB")
    return path


def open_times(paths: dict, repeat: int) -> None:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    args = ["--headless", "--no-sandbox", "--disable-gpu"]
    print(f"(c) report opened in headless Chromium: navigation to the first drawing painted "
          f"(median of {repeat}; target 2 s)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=args, headless=True)
        try:
            for name, path in paths.items():
                if not path.exists():
                    print(f"  {name:<28} (no report)")
                    continue
                walls, marks = [], []
                for _ in range(repeat):
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    started = time.perf_counter()
                    page.goto(path.as_uri(), wait_until="commit")
                    page.wait_for_selector("body[data-viewer=ready]", timeout=120_000)
                    walls.append(time.perf_counter() - started)
                    marks.append(float(page.get_attribute("body", "data-ready-ms")) / 1000)
                    view = page.locator("#view-select option:checked").text_content()
                    page.close()
                print(f"  {name:<28} {statistics.median(walls):6.2f} s wall, viewer's mark "
                      f"{statistics.median(marks):6.2f} s, first view: {view}")
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true", help="skip (c)")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="genesis-big-graphs-"))
    chain_report = compare_chain(options.ops, options.repeat, folder)
    nested = nested_report(options.depth, options.repeat, folder)
    if not options.no_browser:
        open_times({f"chain of {options.ops:,} ops": chain_report,
                    f"{options.depth} nested modules": nested}, options.repeat)
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()

"""HTML viewer on a ~5,000-node trace in headless Chromium: build time, page size, time to
interactive, view switching and frame times while panning, beside the browser simply
showing Graphviz's SVG of the same drawing (the floor any viewer starts from).

The model is a stack of blocks (Linear, Tanh, Linear, LayerNorm) under two levels of
modules; `--layers 277` gives 4,988 drawn nodes (8,310 with saved tensors). Target: the
page of the 5,000-node drawing is interactive in under 2 s.

Run: python bench/html_viewer.py [--layers N] [--chromium PATH]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import genesis  # noqa: E402
import viz  # noqa: E402
import viz.html_report  # noqa: E402
from genesis import nn  # noqa: E402
from viz.render import render  # noqa: E402

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
TARGET_S = 2.0

# Frame intervals while the page is being dragged (recorded in the page, read afterwards).
RECORD_FRAMES = """() => { window.__frames = []; let last = performance.now();
  const tick = (now) => { window.__frames.push(now - last); last = now;
    if (window.__frames.length < 400) requestAnimationFrame(tick); };
  requestAnimationFrame(tick); }"""


def traced_graph(layers: int):
    blocks = [nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.LayerNorm(8))
              for _ in range(layers)]
    model = nn.Sequential(*blocks)
    with genesis.debug.record() as recording:
        (model(genesis.randn(4, 8)) ** 2).mean().backward()
    return recording.graphs[0]


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def open_viewer(browser, path: Path) -> tuple:
    """(page, seconds from navigation to the viewer's ready mark, to the first click answered)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    start = time.perf_counter()
    page.goto(path.as_uri(), wait_until="commit")
    page.wait_for_selector("body[data-viewer=ready]", timeout=60_000)
    ready_ms = float(page.get_attribute("body", "data-ready-ms"))
    page.click('#canvas g.node[data-key="n0"]')  # the output, on screen when the page opens
    page.wait_for_selector("#details-title")
    return page, ready_ms / 1000, time.perf_counter() - start


def drag_frames(page) -> tuple:
    """Median and 95th percentile frame interval (ms) while dragging across the canvas."""
    box = page.locator("#canvas").bounding_box()
    page.evaluate(RECORD_FRAMES)
    page.mouse.move(box["x"] + 200, box["y"] + 200)
    page.mouse.down()
    for step in range(60):
        page.mouse.move(box["x"] + 200 + 5 * step, box["y"] + 200 + 3 * step)
    page.mouse.up()
    frames = page.evaluate("() => window.__frames.slice(1)")
    frames.sort()
    return statistics.median(frames), frames[int(0.95 * (len(frames) - 1))]


def bare_svg_load(browser, path: Path) -> float:
    """Seconds for Chromium to load and paint Graphviz's SVG file of the same drawing."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    start = time.perf_counter()
    page.goto(path.as_uri(), wait_until="load")
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    seconds = time.perf_counter() - start
    page.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, default=277)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    options = parser.parse_args()
    from playwright.sync_api import sync_playwright

    graph, record_s = timed(traced_graph, options.layers)
    drawn = sum(1 for node in graph.nodes if node.kind != "saved")
    print(f"graph: {len(graph.nodes):,} nodes ({drawn:,} without saved tensors), "
          f"recorded in {record_s:.2f} s")
    folder = Path(tempfile.mkdtemp(prefix="genesis-html-bench-"))
    overview, overview_s = timed(viz.to_html, graph, folder / "overview.html")
    # a second page that opens on the finest drawing (every node) instead of the overview
    report = viz.html_report
    report.DEFAULT_VIEW_ITEMS = report.READABLE_WIDTH = report.READABLE_HEIGHT = float("inf")
    viz.to_html(graph, folder / "full.html")
    _, svg_s = timed(render, graph, folder / "graph.svg", max_nodes=None)
    print(f"to_html: {overview_s:.2f} s (every collapse depth, with and without saved tensors), "
          f"page {len(overview.encode()) / 1e6:.1f} MB; Graphviz SVG alone {svg_s:.2f} s, "
          f"{(folder / 'graph.svg').stat().st_size / 1e6:.1f} MB")

    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=options.chromium, args=CHROMIUM_ARGS, headless=True)
    try:
        bare_svg_load(browser, folder / "graph.svg")  # warm up the browser
        bare_s = min(bare_svg_load(browser, folder / "graph.svg") for _ in range(3))
        print(f"\n{'page':<44} {'ready s':>8} {'1st click s':>12} {'vs bare SVG':>12} {'vs target':>10}")
        print(f"{'bare Graphviz SVG, ' + f'{drawn:,} nodes':<44} {bare_s:>8.2f} {'':>12} {1:>11.2f}x "
              f"{bare_s / TARGET_S:>9.2f}x")
        for name, path in (("viewer, default view", folder / "overview.html"),
                           (f"viewer, all {drawn:,} nodes drawn", folder / "full.html")):
            runs = [open_viewer(browser, path) for _ in range(3)]
            page, ready_s, click_s = min(runs, key=lambda run: run[2])
            for other in runs:
                if other[0] is not page:
                    other[0].close()
            view = page.locator("#view-select option:checked").text_content()
            print(f"{name + ' (' + view.split(' (')[1]:<44} {ready_s:>8.2f} {click_s:>12.2f} "
                  f"{click_s / bare_s:>11.2f}x {click_s / TARGET_S:>9.2f}x")
            if path.name == "full.html":
                near = drag_frames(page)
                page.keyboard.press("f")
                page.wait_for_timeout(600)
                fitted = drag_frames(page)
                switch_start = time.perf_counter()
                page.select_option("#view-select", index=0)
                page.wait_for_selector("#canvas g.node[data-key^=m]")
                switch_s = time.perf_counter() - switch_start
            page.close()
        print(f"\ndragging the {drawn:,}-node drawing, frame interval: at the opening zoom "
              f"median {near[0]:.1f} ms, "
              f"p95 {near[1]:.1f} ms; fitted (all of it on screen, no labels) median {fitted[0]:.1f} ms, "
              f"p95 {fitted[1]:.1f} ms")
        print(f"switching from it to the folded overview: {switch_s:.2f} s")
    finally:
        browser.close()
        playwright.stop()
    print(f"target: interactive under {TARGET_S:.0f} s; 'ready' is the viewer's own mark (performance.now "
          "at the first painted frame), '1st click' the wall time from navigation to a click's details shown")


if __name__ == "__main__":
    main()

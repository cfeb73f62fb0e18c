"""The HTML viewer in a real headless Chromium: drawing, selection, findings, search, zoom,
views, parameters, graph switching, hostile names, notebooks. Every test also fails on a
network request, a dialog, a console error or a page error (see conftest.Session)."""
from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

import viz
from genesis.debug import Graph
from genesis.debug.findings import Finding
from genesis.debug.trace import Trace

from . import reports

ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"


def node_id(trace, name: str, graph: int = 0) -> int:
    return trace.graphs[graph].find(name).id


def transform(page) -> str:
    return page.get_attribute("#canvas g.viewport", "transform")


def wait_for_transform_change(page, before: str) -> None:
    page.wait_for_function("before => document.querySelector('#canvas g.viewport')"
                           ".getAttribute('transform') !== before", arg=before)


def wait_until_still(page) -> None:
    page.wait_for_function("() => !document.getElementById('canvas').dataset.moving")


def select_view(page, label_start: str) -> None:
    """Pick the drawing whose label starts with `label_start` in the view menu."""
    options = page.locator("#view-select option")
    for index in range(options.count()):
        if options.nth(index).text_content().startswith(label_start):
            page.select_option("#view-select", options.nth(index).get_attribute("value"))
            return
    raise AssertionError(f"no view {label_start!r} in {options.all_text_contents()}")


def centre_offset(page, selector: str) -> float:
    """Distance in pixels from the centre of the element to the centre of the canvas."""
    return page.evaluate("""selector => {
        const box = document.querySelector(selector).getBoundingClientRect();
        const frame = document.getElementById('canvas').getBoundingClientRect();
        return Math.hypot(box.left + box.width / 2 - frame.left - frame.width / 2,
                          box.top + box.height / 2 - frame.top - frame.height / 2);
    }""", selector)


def test_drawing_is_visible_and_fits_the_canvas(session, model_report):
    page = session.page
    session.open(model_report)
    assert page.is_visible("#canvas svg")
    drawing = page.locator("#canvas svg g.viewport").bounding_box()
    canvas = page.locator("#canvas").bounding_box()
    assert drawing["width"] > 100 and drawing["height"] > 100
    for start, size in (("x", "width"), ("y", "height")):
        assert canvas[start] - 1 <= drawing[start]
        assert drawing[start] + drawing[size] <= canvas[start] + canvas[size] + 1
    assert page.locator("#canvas g.node").count() > 10
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "html_viewer_model.png"))
    assert (ARTIFACTS / "html_viewer_model.png").stat().st_size > 10_000


def test_clicking_a_node_shows_its_details_and_neighbours(session, model_report, model_trace):
    page = session.page
    session.open(model_report)
    graph = model_trace.graphs[0]
    tanh = next(node for node in graph.nodes if node.name == "TanhBackward")
    page.click(f'g.node[data-key="n{tanh.id}"]')
    assert page.text_content("#details-title") == "TanhBackward"
    details = page.text_content("#details-body")
    assert "Tanh (built-in)" in details
    assert "encoder.1 (Tanh)" in details
    assert f"{Path(tanh.source.file).name}" in details and f":{tanh.source.line}" in details
    assert "(5, 8) float32" in details
    assert "norm" in details and "max |g|" in details and "zeros" in details
    assert page.locator(f'g.node.selected[data-key="n{tanh.id}"]').count() == 1
    # its input (encoder.0's LinearBackward) and its consumer (head's) are highlighted
    neighbours = {page.get_attribute(f"g.node.neighbour >> nth={i}", "data-key")
                  for i in range(page.locator("g.node.neighbour").count())}
    producers = {f"n{edge.src}" for edge in graph.edges
                 if edge.dst == tanh.id and graph.nodes[edge.src].kind != "saved"}
    consumers = {f"n{edge.dst}" for edge in graph.edges if edge.src == tanh.id}
    assert neighbours == producers | consumers
    assert page.locator("g.edge.linked").count() == len(producers | consumers)


def test_details_list_saved_tensors_and_user_defined_function(session, model_report, model_trace):
    page = session.page
    session.open(model_report)
    culprit = next(node for node in model_trace.graphs[0].nodes if node.function == "WrongSigmoid")
    page.click(f'g.node[data-key="n{culprit.id}"]')
    details = page.text_content("#details-body")
    assert "WrongSigmoid (user-defined)" in details
    assert "user-defined Function" in details
    assert "Saved for backward" in details and "saved 0(5, 4) float32" in details
    assert "grad_mismatch" in details  # the finding's tag, drawn and listed


def test_clicking_a_finding_centres_and_highlights_the_culprit(session, model_report, model_trace):
    page = session.page
    session.open(model_report)
    culprit = model_trace.findings[1]
    first = page.locator("#findings-list li").first
    assert "error" in first.text_content() and culprit.title in first.text_content()  # most severe first
    page.keyboard.press("+")  # move away first, so centring has something to do
    page.keyboard.press("ArrowLeft")
    first.click()
    selector = f'g.node[data-key="n{culprit.node}"]'
    assert "selected" in page.get_attribute(selector, "class")
    wait_until_still(page)
    assert centre_offset(page, selector) < 3
    details = page.text_content("#details-body")
    assert culprit.title in details
    table = page.locator("#details-body table.entries").filter(has_text="analytical")
    header = table.locator("tr").first.text_content()
    assert all(column in header for column in ("input position", "analytical", "numerical", "abs error"))
    worst = culprit.details["worst"][0]
    assert f"{worst['analytical']:.6g}" in table.locator("tr").nth(1).text_content()
    assert table.locator("tr").count() == 1 + len(culprit.details["worst"])


def test_a_finding_inside_a_folded_module_switches_to_a_drawing_of_it(session, model_report, model_trace):
    page = session.page
    session.open(model_report)
    select_view(page, "modules folded (")
    bias = node_id(model_trace, "encoder.0.bias")
    assert page.locator(f'g.node[data-key="n{bias}"]').count() == 0  # folded into "encoder"
    page.locator("#findings-list li", has_text="encoder.0.bias").click()
    assert page.locator(f'g.node.selected[data-key="n{bias}"]').count() == 1
    assert page.text_content("#details-title") == "encoder.0.bias"


def test_a_click_on_the_background_clears_the_selection(session, model_report):
    page = session.page
    session.open(model_report)
    page.click('g.node[data-key="n0"]')
    assert page.locator("g.node.selected").count() == 1
    canvas = page.locator("#canvas").bounding_box()
    page.mouse.click(canvas["x"] + 5, canvas["y"] + canvas["height"] - 5)
    assert page.locator("g.node.selected").count() == 0
    assert page.text_content("#details-title") == "Nothing selected"


def test_a_run_without_graphs_still_shows_its_findings(session, tmp_path):
    page = session.page
    error = "Traceback (most recent call last):\n  ...\nValueError: bad shape"
    trace = Trace(script="crash.py", exit_code=1, script_error=error, findings=[
        Finding("script_error", "error", "the script raised ValueError", message=error, source="crash.py:3")])
    path = tmp_path / "crash.html"
    viz.to_html(trace, path)
    session.open(path)
    assert "No graph was recorded" in page.text_content("#canvas")
    assert page.is_disabled("#view-select") and page.is_disabled("#search-input")
    assert "ValueError: bad shape" in page.text_content("#run-summary")
    page.click("#findings-list li")
    assert page.text_content("#details-title") == "the script raised ValueError"
    assert "crash.py:3" in page.text_content("#details-body")


def test_an_empty_graph_opens_without_errors(session, tmp_path):
    path = tmp_path / "empty.html"
    viz.to_html(Graph(), path)
    session.open(path)
    assert session.page.locator("#canvas svg").count() == 1
    assert session.page.text_content("#parameters-count") == "(0)"


def test_search_finds_a_parameter_and_jumps_to_it(session, model_report, model_trace):
    page = session.page
    session.open(model_report)
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "search-input"
    page.keyboard.type("head.weight")
    results = page.locator("#search-results li[data-node]")
    assert results.count() == 1 and results.first.text_content().startswith("head.weight")
    page.keyboard.press("Enter")
    assert page.text_content("#details-title") == "head.weight"
    weight = node_id(model_trace, "head.weight")
    assert page.locator(f'g.node.selected[data-key="n{weight}"]').count() == 1
    page.keyboard.press("Escape")
    assert page.locator("g.node.selected").count() == 0
    assert page.input_value("#search-input") == ""


def test_search_by_module_and_by_source_line(session, model_report, model_trace):
    page = session.page
    session.open(model_report)
    graph = model_trace.graphs[0]
    page.fill("#search-input", "encoder.0")
    expected = {node.id for node in graph.nodes if "encoder.0" in (node.module or "") + node.name}
    found = {int(page.get_attribute(f"#search-results li[data-node] >> nth={i}", "data-node"))
             for i in range(page.locator("#search-results li[data-node]").count())}
    assert found == expected
    culprit = next(node for node in graph.nodes if node.function == "WrongSigmoid")
    page.fill("#search-input", f"{Path(culprit.source.file).name}:{culprit.source.line}")
    found = [page.get_attribute(f"#search-results li[data-node] >> nth={i}", "data-node")
             for i in range(page.locator("#search-results li[data-node]").count())]
    assert str(culprit.id) in found
    page.click(f'#search-results li[data-node="{culprit.id}"]')
    assert page.text_content("#details-title") == culprit.name
    assert page.locator(f'g.node.selected[data-key="n{culprit.id}"]').count() == 1
    page.fill("#search-input", "no such thing")
    assert page.text_content("#search-results") == "no node matches"


def test_zoom_buttons_keys_wheel_and_drag_change_the_view_transform(session, model_report):
    page = session.page
    session.open(model_report)
    fitted = transform(page)
    page.click("#zoom-in")
    wait_for_transform_change(page, fitted)
    wait_until_still(page)
    zoomed = transform(page)
    assert scale_of(zoomed) == pytest.approx(scale_of(fitted) * 1.25, rel=1e-3)
    page.keyboard.press("-")
    wait_until_still(page)
    assert scale_of(transform(page)) == pytest.approx(scale_of(fitted), rel=1e-3)
    canvas = page.locator("#canvas").bounding_box()
    page.mouse.move(canvas["x"] + 100, canvas["y"] + 100)
    unzoomed = transform(page)
    page.mouse.wheel(0, -300)
    wait_for_transform_change(page, unzoomed)
    assert scale_of(transform(page)) > scale_of(fitted) * 1.2
    before = translation_of(transform(page))
    page.mouse.move(canvas["x"] + 300, canvas["y"] + 300)  # drag on empty canvas
    page.mouse.down()
    page.mouse.move(canvas["x"] + 350, canvas["y"] + 280, steps=5)
    page.mouse.up()
    page.wait_for_timeout(50)
    after = translation_of(transform(page))
    assert after[0] - before[0] == pytest.approx(50, abs=1)
    assert after[1] - before[1] == pytest.approx(-20, abs=1)
    page.keyboard.press("0")
    wait_until_still(page)
    assert transform(page) == fitted


def scale_of(text: str) -> float:
    return float(re.search(r"scale\(([-\d.e]+)\)", text).group(1))


def translation_of(text: str) -> tuple:
    x, y = re.search(r"translate\(([-\d.e]+),([-\d.e]+)\)", text).groups()
    return float(x), float(y)


def test_views_fold_modules_and_show_saved_tensors(session, model_report, model_trace):
    page = session.page
    session.open(model_report)
    options = page.locator("#view-select option").all_text_contents()
    assert options[0].startswith("modules folded") and options[-1].startswith("all nodes")
    assert page.locator("#canvas g.node", has_text=re.compile(r"^saved \d")).count() == 0
    select_view(page, "modules folded (")
    folded = page.locator("g.node", has_text="encoder  (Sequential)")
    assert folded.count() == 1
    folded.click()
    details = page.text_content("#details-body")
    assert "folded module" in details and "encoder.0.weight" in details
    page.click("#details-body >> text=expand: show these nodes one by one")
    assert not page.text_content("#view-select option:checked").startswith("modules folded (")
    encoder = {f"n{node.id}" for node in model_trace.graphs[0].nodes
               if (node.module or "").startswith("encoder") and node.kind != "saved"}
    selected = {page.get_attribute(f"g.node.selected >> nth={i}", "data-key")
                for i in range(page.locator("g.node.selected").count())}
    assert selected == encoder
    select_view(page, "modules folded (")
    page.check("#saved-toggle")
    assert page.locator("#view-select option").first.text_content().startswith("modules folded")
    select_view(page, "all nodes")
    saved = len(model_trace.graphs[0].of_kind("saved"))
    assert page.locator("#canvas g.node", has_text=re.compile(r"^saved \d")).count() == saved
    page.uncheck("#saved-toggle")
    assert page.locator("#canvas g.node", has_text=re.compile(r"^saved \d")).count() == 0


def test_a_big_drawing_opens_readable_and_lays_out_only_the_labels_near_the_screen(session, deep_report):
    page = session.page
    session.open(deep_report)
    assert page.text_content("#view-select option:checked").startswith("modules folded")  # readable overview
    select_view(page, "all nodes")
    nodes = page.locator("#canvas g.node").count()
    assert nodes > 300
    labelled = page.locator("#canvas g.node.labelled")
    assert 0 < labelled.count() < nodes / 4
    assert page.locator("#canvas g.node.labelled", has_text="output0").count() == 1  # opens at the output
    assert page.locator("#canvas g.node:not(.labelled) text").first.is_hidden()
    assert page.locator("#canvas g.node.labelled text").first.is_visible()
    page.keyboard.press("f")  # fitted, the labels would be unreadably small: none are laid out
    page.wait_for_function("() => !document.querySelector('#canvas g.node.labelled')")
    page.fill("#search-input", "0.0.weight")
    page.keyboard.press("Enter")
    wait_until_still(page)
    page.wait_for_selector('#canvas g.node.labelled.selected')  # the far end of the stack, labelled now


def test_parameter_panel_draws_gradient_norm_sparklines(session, model_report, model_trace):
    page = session.page
    session.open(model_report)
    rows = page.locator("#parameters-table tr")
    assert rows.count() == len(model_trace.parameters)
    for index, row in enumerate(model_trace.parameters):
        line = rows.nth(index).locator("svg.sparkline polyline")
        assert line.count() == 1
        assert len(line.get_attribute("points").split()) == len(row.history) == 3
    rows.filter(has_text="head.bias").click()
    assert page.text_content("#details-title") == "head.bias"
    assert page.locator("#details-body svg.sparkline").count() == 1


def test_graph_switcher(session, two_graph_report):
    page = session.page
    trace = reports.two_graph_trace()
    session.open(two_graph_report)
    assert page.is_visible("#graph-select")
    assert page.locator("#graph-select option").count() == 2
    first = page.locator("#canvas g.node").count()
    page.select_option("#graph-select", "1")
    assert page.locator("#canvas g.node", has_text="PowBackward").count() == 1
    assert page.locator("#canvas g.node").count() != first
    page.fill("#search-input", "MeanBackward")
    page.keyboard.press("Enter")
    assert page.text_content("#details-title") == "MeanBackward"
    assert "of graph 2" in page.text_content("#details-body")
    assert len(trace.graphs) == 2


def test_hostile_names_show_as_text_and_run_nothing(session, hostile_report):
    page = session.page
    session.open(hostile_report)
    body = page.text_content("body")
    for text in (reports.HOSTILE_MODULE, reports.HOSTILE_PARAMETER, reports.HOSTILE_SCRIPT):
        assert text in body
    assert reports.HOSTILE_MODULE in page.text_content("#canvas svg")  # the cluster label, as text
    page.locator("#findings-list li").first.click()
    shown = page.text_content("#details-body").replace("\u2028", "")
    assert reports.HOSTILE_MESSAGE.replace("\u2028", "") in shown
    page.fill("#search-input", reports.HOSTILE_PARAMETER)
    page.keyboard.press("Enter")
    assert page.text_content("#details-title") == reports.HOSTILE_PARAMETER
    injected = page.evaluate("""() => ({
        elements: document.querySelectorAll(
            'img, iframe, object, embed, foreignObject, [onerror], [onload]').length,
        scripts: [...document.scripts].filter(s => !s.type || s.type.includes('javascript')).length,
        title: document.title })""")
    assert injected["elements"] == 0
    assert injected["scripts"] == 1
    assert reports.HOSTILE_SCRIPT in injected["title"]


def test_the_page_makes_no_request_but_itself(session, model_report):
    session.open(model_report)
    session.page.click("#findings-list li >> nth=0")
    session.page.select_option("#view-select", index=0)
    assert session.requests == [model_report.as_uri()]


def test_graph_repr_html_works_inside_a_notebook_output(session, model_trace):
    page = session.page
    graph = model_trace.graphs[0]
    output = graph._repr_html_()
    assert output.startswith("<iframe") and "<html" not in output  # escaped inside srcdoc
    page.set_content(f"<!DOCTYPE html><html><body><div class='output'>{output}</div></body></html>")
    frame = page.frame_locator("iframe")
    frame.locator("body[data-viewer=ready]").wait_for(timeout=15_000)
    tanh = graph.find("TanhBackward").id
    frame.locator(f'g.node[data-key="n{tanh}"]').click()
    assert frame.locator("#details-title").text_content() == "TanhBackward"


def test_informational_parameter_statuses_come_last_with_their_explanation(session, model_trace,
                                                                            tmp_path):
    """"no effect on the loss" (a bias whose gradient cancels), "not trained" and "gradient
    set by hand" are no problems: drawn after the parameters that learn, in the info style,
    with a title that says what they mean."""
    trace = copy.deepcopy(model_trace)
    first, second, third = trace.parameters[:3]
    first.status, second.status, third.status = \
        "no effect on the loss", "not trained", "gradient set by hand"
    path = tmp_path / "report.html"
    reports.write(trace, path)
    session.open(path)
    rows = session.page.locator("#parameters-table tr")
    assert rows.count() == len(trace.parameters)
    last = [rows.nth(rows.count() - 3 + i) for i in range(3)]
    assert [row.locator(".param-name").text_content() for row in last] == \
        [first.name, second.name, third.name]
    statuses = [row.locator(".param-status.info") for row in last]
    assert all(status.count() == 1 for status in statuses)
    assert "cancels" in statuses[0].get_attribute("title")
    assert "none was expected" in statuses[1].get_attribute("title")
    assert "the script set" in statuses[2].get_attribute("title")


def test_a_parameter_that_never_trains_is_drawn_first_as_a_problem(session, model_trace, tmp_path):
    """"never trains" (a layer built anew in each forward) is a problem, not "ok"."""
    trace = copy.deepcopy(model_trace)
    last = trace.parameters[-1]
    last.status = "never trains"
    path = tmp_path / "report.html"
    reports.write(trace, path)
    session.open(path)
    first = session.page.locator("#parameters-table tr").first
    assert first.locator(".param-name").text_content() == last.name
    assert first.locator(".param-status.bad").text_content().endswith("never trains")

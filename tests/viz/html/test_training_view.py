"""The report's Training view in headless Chromium: charts of a run's history (trace
meta["history"]) with NaN/Inf readings marked, summary bins drawn as bands, findings whose
"step N" link puts a marker on every chart, and plain words where nothing was recorded.
Every test also fails on a console error, a page error or a network request (conftest)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import genesis
import viz
from genesis import nn
from genesis.debug import record
from genesis.debug.findings import Finding
from genesis.debug.sampling import sampled
from genesis.debug.session import TraceSession
from genesis.debug.step_series import DistributionSeries, StepSeries
from genesis.debug.trace import Trace
from genesis.utils.data import DataLoader, TensorDataset

PARAMETERS = ("encoder.0.weight", "encoder.0.bias", "head.weight")
NAN_LOSS_STEP = 250
INF_GRAD_STEP = 280   # head.weight's gradient norm is +Inf here (a recent reading)
BINNED_INF_STEP = 20  # and here (folded into a summary bin)
STEPS = 300


def synthetic_history(steps: int = STEPS, *, optimizer: bool = True) -> dict:
    """A run's history as genesis.debug.run_history writes it, built from the same StepSeries
    and DistributionSeries: a falling loss with a NaN at NAN_LOSS_STEP, three parameters (one
    with +Inf gradient norms), two modules' activations, one SGD optimizer."""
    rng = np.random.default_rng(0)
    recent = 64  # small, so older steps are summarised in bins
    loss = StepSeries(recent)
    parameters = {name: {"grad_norm": StepSeries(recent), "update_ratio": StepSeries(recent),
                         "grad": DistributionSeries(16), "weight": DistributionSeries(16)}
                  for name in PARAMETERS}
    activations = {module: {key: StepSeries(recent) for key in ("mean", "std", "zeros", "dead", "saturated")}
                   for module in ("encoder.1", "head")}
    lr = StepSeries(recent)
    for step in range(steps):
        loss.add(step, math.nan if step == NAN_LOSS_STEP else 2 * math.exp(-step / 80) + 0.05 * rng.random())
        for index, name in enumerate(PARAMETERS):
            norm = (index + 1) * 0.5 * math.exp(-step / 150) + 0.01
            infinite = name == "head.weight" and step in (BINNED_INF_STEP, INF_GRAD_STEP)
            parameters[name]["grad_norm"].add(step, math.inf if infinite else norm)
            if sampled(step):
                if optimizer:
                    parameters[name]["update_ratio"].add(step, 1e-3 * 10 ** (index - 1))
                parameters[name]["grad"].add(step, rng.normal(0, norm, 200))
                parameters[name]["weight"].add(step, rng.normal(0.1 * index, 1 + step / 300, 200))
        if sampled(step):
            lr.add(step, 0.1 * 0.5 ** (step // 100))
            encoder, head = activations["encoder.1"], activations["head"]
            encoder["mean"].add(step, 0.1 + step / 1000)
            encoder["std"].add(step, 0.5)
            encoder["saturated"].add(step, min(1.0, step / 300))
            head["mean"].add(step, 0.3)
            head["std"].add(step, 0.2)
            head["zeros"].add(step, 0.4)
            head["dead"].add(step, 0.1 if step < 200 else 0.5)
    history = {
        "version": 1, "steps_seen": steps, "loss": loss.to_dict(),
        "parameters": {name: {key: series.to_dict() for key, series in parameter.items()}
                       for name, parameter in parameters.items()},
        "activations": {module: {"kind": "tanh" if module == "encoder.1" else "relu", "values": [],
                                 **{key: series.to_dict() for key, series in series_of.items()}}
                        for module, series_of in activations.items()},
        "events": [{"step": 0, "kind": "zero_grad", "who": "SGD"}, {"step": 0, "kind": "step", "who": "SGD"}]}
    if optimizer:
        history["optimizers"] = [{"name": "SGD", "made_at": "train.py:31",
                                  "groups": [{"params": list(PARAMETERS), "lr": lr.to_dict()}]}]
    return history


def traced(history: dict | None, findings=()) -> Trace:
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    with record() as recording:
        net(genesis.randn(5, 3)).sum().backward()
    meta = {} if history is None else {"history": history}
    return Trace(script="train.py", graphs=list(recording.graphs), findings=list(findings), steps_recorded=1,
                 steps_seen=STEPS, meta=meta)


FINDINGS = [
    Finding("nan_forward", "error", "the loss became NaN", step=NAN_LOSS_STEP),
    Finding("saturated_activation", "warning", "encoder.1 is saturated", module="encoder.1", step=200),
    Finding("update_ratio", "warning", "head.weight updates are large", details={"parameters": ["head.weight"]}),
    Finding("vanishing_gradient", "info", "a finding about nothing drawn"),
]


@pytest.fixture(scope="module")
def training_report(tmp_path_factory):
    path = tmp_path_factory.mktemp("training") / "report.html"
    viz.to_html(traced(synthetic_history(), FINDINGS), path)
    return path


def open_training(session, path) -> None:
    session.open(path)
    session.page.click("#tab-training")
    session.page.wait_for_selector("#training[data-ready]")


def chart(page, title: str):
    return page.locator(f'figure.chart[data-chart="{title}"]')


def test_the_training_view_draws_the_run(session, training_report):
    page = session.page
    session.open(training_report)
    assert page.is_visible("#canvas svg") and not page.is_visible("#training")  # opens on the graph
    page.click("#tab-training")
    page.wait_for_selector("#training[data-ready]")
    assert page.is_visible("#training") and not page.is_visible("#canvas") and not page.is_visible("#search-input")
    assert page.get_attribute("#tab-training", "aria-selected") == "true"
    loss = chart(page, "Loss per step")
    assert loss.locator("path.line").count() >= 1
    assert loss.locator("path.summary-band").count() >= 1 and loss.locator("path.summary-mean").count() >= 1
    assert "Steps 0 to" in page.text_content("#training-loss")
    for title in ("Gradient norm per parameter", "Update ratio per parameter"):
        series = chart(page, title).locator("g.series")
        assert sorted(series.nth(i).get_attribute("data-series") for i in range(series.count())) == sorted(PARAMETERS)
        assert chart(page, title).locator("ul.legend li").count() == 3
        assert "(log)" in chart(page, title).locator("text.y-label").text_content()
    assert chart(page, "Learning rate").locator("path.line").count() == 1
    distributions = page.locator("#distribution-charts figure.chart")
    assert distributions.count() == 2
    assert distributions.first.locator("path.percentile-band").count() == 4
    assert distributions.first.locator("path.median").count() == 1
    rows = page.locator(".activation-row")
    assert [rows.nth(i).get_attribute("data-module") for i in range(rows.count())] == ["encoder.1", "head"]
    assert rows.first.locator("path.spread-band").count() >= 1
    fractions = chart(page, "head: zeros, dead, saturated").locator("g.series")
    assert {fractions.nth(i).get_attribute("data-series") for i in range(fractions.count())} == {"zeros", "dead"}
    for figure in page.locator("#training svg.chart-svg").all():  # accessible: a title, a description
        assert figure.get_attribute("role") == "img" and figure.locator("title").first.text_content()
        assert "x: step (backward call)" in figure.locator("desc").text_content()
    page.click("#tab-graph")
    assert page.is_visible("#canvas svg") and not page.is_visible("#training")


def test_non_finite_readings_are_marked_not_dropped(session, training_report):
    page = session.page
    open_training(session, training_report)
    nan = chart(page, "Loss per step").locator(f'g.non-finite[data-step="{NAN_LOSS_STEP}"]')
    assert nan.count() == 1 and nan.get_attribute("data-value") == "NaN"
    assert f"NaN at step {NAN_LOSS_STEP}" in nan.locator("title").text_content()
    gradients = chart(page, "Gradient norm per parameter")
    recent = gradients.locator(f'g.non-finite[data-step="{INF_GRAD_STEP}"]')
    assert "head.weight: +Inf at step 280" in recent.locator("title").text_content()
    binned = gradients.locator("g.non-finite").filter(has_text="1 NaN/Inf reading of")
    assert binned.count() == 1 and "head.weight" in binned.text_content()
    first, last = (int(part) for part in binned.text_content().split("steps ")[1].split(" to "))
    assert first <= BINNED_INF_STEP <= last
    # the reading is said on hover too
    box = recent.locator("line").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tip = gradients.locator(".chart-tip")
    assert tip.is_visible() and f"step {INF_GRAD_STEP}" in tip.text_content()
    assert "head.weight: +Inf" in tip.locator(".tip-row.bad").text_content()


def test_a_findings_step_link_moves_the_marker_on_every_chart(session, training_report):
    page = session.page
    session.open(training_report)
    items = page.locator("#findings-list li")
    nan, saturated, ratio, other = (items.filter(has_text=finding.title) for finding in FINDINGS)
    assert nan.locator("button.link").text_content() == f"step {NAN_LOSS_STEP}"
    assert saturated.locator("button.link").text_content() == "step 200"
    assert ratio.locator("button.link").text_content() == "training charts"  # names a parameter
    assert other.locator("button.link").count() == 0                        # nothing to show
    nan.locator("button.link").click()  # from the graph view
    page.wait_for_selector("#training[data-ready]")
    markers = page.locator("#training g.step-marker:not([hidden])")
    charts = page.locator("#training svg.chart-svg").count()
    assert charts >= 9 and markers.count() == charts
    assert {markers.nth(i).get_attribute("data-step") for i in range(charts)} == {str(NAN_LOSS_STEP)}
    loss_marker = chart(page, "Loss per step").locator("g.step-marker line")
    before = float(loss_marker.get_attribute("x1"))
    assert "step 250: loss NaN" in page.text_content("#training-focus")
    assert "active" in nan.get_attribute("class")
    saturated.locator("button.link").click()
    assert {markers.nth(i).get_attribute("data-step") for i in range(charts)} == {"200"}
    assert float(loss_marker.get_attribute("x1")) < before
    # its module is picked out: the activation row of encoder.1
    assert page.locator(".activation-row.highlighted").get_attribute("data-module") == "encoder.1"
    # a finding naming a parameter picks out its lines (clicked in the Training view: it stays there)
    ratio.click()
    assert page.is_visible("#training")
    gradients = chart(page, "Gradient norm per parameter")
    assert gradients.locator("g.series.emph").get_attribute("data-series") == "head.weight"
    assert gradients.locator("g.series.dim").count() == 2
    assert page.input_value("#distribution-select") == "head.weight"
    assert page.locator("#training g.step-marker:not([hidden])").count() == 0
    page.click("#training-focus button.link >> text=clear")
    assert gradients.locator("g.series.dim").count() == 0
    # a finding with nothing to draw goes back to the graph
    other.click()
    assert page.is_visible("#canvas") and not page.is_visible("#training")


def test_hover_says_each_parameters_value(session, training_report):
    page = session.page
    open_training(session, training_report)
    gradients = chart(page, "Gradient norm per parameter")
    box = gradients.locator("rect.hover-zone").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.95, box["y"] + box["height"] / 2)
    tip = gradients.locator(".chart-tip")
    assert tip.is_visible()
    text = tip.text_content()
    assert text.startswith("step ") and all(f"{name}: " in text for name in PARAMETERS)
    page.mouse.move(box["x"] + 5, box["y"] + box["height"] / 2)  # over the summarised steps
    assert "(summary of" in tip.text_content() and "mean " in tip.text_content()
    page.locator("#training-gradients ul.legend li").nth(1).click()  # a legend entry picks a parameter
    assert gradients.locator("g.series.emph").get_attribute("data-series") == PARAMETERS[1]
    assert page.input_value("#distribution-select") == PARAMETERS[1]
    assert page.locator("#distribution-charts .chart-title").first.text_content().startswith(PARAMETERS[1])


def test_the_loss_can_be_drawn_on_a_log_scale(session, tmp_path):
    history = synthetic_history()
    history["loss"]["values"] = [abs(value) if isinstance(value, float) and math.isfinite(value) else value
                                 for value in history["loss"]["values"]]
    path = tmp_path / "report.html"
    viz.to_html(traced(history), path)
    page = session.page
    open_training(session, path)
    label = chart(page, "Loss per step").locator("text.y-label")
    assert label.text_content() == "loss"
    page.check("#loss-log")
    assert label.text_content() == "loss (log)"
    assert chart(page, "Loss per step").locator(f'g.non-finite[data-step="{NAN_LOSS_STEP}"]').count() == 1


def test_a_negative_loss_offers_no_log_scale(session, tmp_path):
    history = synthetic_history(40)
    history["loss"]["values"][3] = -1.0
    path = tmp_path / "report.html"
    viz.to_html(traced(history), path)
    open_training(session, path)
    assert session.page.locator("#loss-log").count() == 0


def test_a_reloaded_trace_json_draws_the_same(session, tmp_path):
    """trace.json writes NaN/Inf as strings; read back, they are marked just the same."""
    trace = traced(synthetic_history(), FINDINGS)
    (tmp_path / "trace.json").write_text(trace.to_json(), encoding="utf-8")
    loaded = Trace.load(tmp_path / "trace.json")
    assert "NaN" in loaded.meta["history"]["loss"]["values"]
    viz.to_html(loaded, tmp_path / "report.html")
    page = session.page
    open_training(session, tmp_path / "report.html")
    assert chart(page, "Loss per step").locator(f'g.non-finite[data-step="{NAN_LOSS_STEP}"]').count() == 1
    assert chart(page, "Gradient norm per parameter").locator(f'g.non-finite[data-step="{INF_GRAD_STEP}"]').count() == 1


def test_a_run_without_an_optimizer_says_so(session, tmp_path):
    path = tmp_path / "report.html"
    viz.to_html(traced(synthetic_history(optimizer=False)), path)
    page = session.page
    open_training(session, path)
    assert "No optimizer was seen in this run" in page.text_content("#training-updates")
    assert page.locator("#training-updates svg").count() == 0
    assert page.locator("#training-lr").count() == 0
    assert chart(page, "Gradient norm per parameter").locator("g.series").count() == 3
    # the missing learning-rate section leaves nothing in its place (no stray "null" text)
    assert page.evaluate("() => [...document.querySelector('#training').childNodes]"
                         ".filter((node) => node.nodeType === Node.TEXT_NODE).length") == 0


def test_an_empty_history_says_nothing_was_recorded(session, tmp_path):
    path = tmp_path / "report.html"
    empty = {"version": 1, "steps_seen": 0, "loss": {"steps": [], "values": [], "summary": []},
             "parameters": {}, "activations": {}}
    viz.to_html(traced(empty), path)
    page = session.page
    open_training(session, path)
    assert "Nothing was recorded over the run's steps (0 backward calls)" in page.text_content("#training-empty")
    assert page.locator("#training svg").count() == 0


def test_no_history_no_training_view(session, tmp_path):
    for name, value in (("older.html", traced(None, FINDINGS)), ("graph.html", traced(None).graphs[0])):
        viz.to_html(value, tmp_path / name)
        session.open(tmp_path / name)
        assert not session.page.is_visible("#tabs") and not session.page.is_visible("#tab-training")
        assert session.page.locator("#findings-list button.link").count() == 0  # no step links to nowhere


def test_a_history_without_graphs_opens_on_the_training_view(session, tmp_path):
    trace = Trace(script="train.py", steps_seen=STEPS, meta={"history": synthetic_history()})
    viz.to_html(trace, tmp_path / "report.html")
    session.open(tmp_path / "report.html")
    session.page.wait_for_selector("#training[data-ready]")
    assert session.page.is_visible("#training") and session.page.locator("#training svg.chart-svg").count() >= 9


class DeadRelu(nn.Module):
    """A regressor whose hidden bias starts at -2: most of its ReLU units never fire."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(16, 64)
        self.out = nn.Linear(64, 1)
        nn.init.constant_(self.hidden.bias, -2.0)

    def forward(self, x):
        return self.out(self.hidden(x).relu())


@pytest.fixture(scope="module")
def real_trace():
    """A real traced training run (DataLoader, SGD, zero_grad/backward/step; 40 steps)."""
    genesis.manual_seed(0)
    inputs = genesis.randn(256, 16)
    loader = DataLoader(TensorDataset(inputs, inputs[:, :4].sum(dim=1, keepdim=True)), batch_size=32, shuffle=True)
    model = DeadRelu()
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
    with TraceSession(steps=2) as session:
        for _ in range(5):
            for x, y in loader:
                loss = nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    return session.result(script="train.py")


def test_a_real_training_run(session, tmp_path, real_trace):
    history = real_trace.meta["history"]
    assert history["steps_seen"] == 40
    viz.to_html(real_trace, tmp_path / "report.html")
    page = session.page
    open_training(session, tmp_path / "report.html")
    assert chart(page, "Loss per step").locator("path.line").count() == 1
    names = ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    for title in ("Gradient norm per parameter", "Update ratio per parameter"):
        series = chart(page, title).locator("g.series")
        assert sorted(series.nth(i).get_attribute("data-series") for i in range(series.count())) == sorted(names)
    assert chart(page, "Learning rate").count() == 1
    assert page.locator("#distribution-charts figure.chart").count() == 2
    rows = page.locator(".activation-row")
    assert [rows.nth(i).get_attribute("data-module") for i in range(rows.count())] == list(history["activations"])
    assert page.locator("#training g.non-finite").count() == 0  # a finite run has no NaN/Inf marks
    # the dead ReLU finding links to its step and picks out its activation row
    finding = next(finding for finding in real_trace.findings if finding.kind == "dead_activation")
    page.locator("#findings-list li").filter(has_text=finding.title).locator("button.link").click()
    markers = page.locator("#training g.step-marker:not([hidden])")
    assert markers.count() == page.locator("#training svg.chart-svg").count()
    assert markers.first.get_attribute("data-step") == str(finding.step)
    assert page.locator(".activation-row.highlighted").get_attribute("data-module") == \
        finding.details.get("activation", finding.module)
    # in this view a parameter in the side panel picks out its lines; Esc clears the marker
    page.click('#parameters-table tr[data-parameter="out.weight"]')
    assert chart(page, "Gradient norm per parameter").locator("g.series.emph").get_attribute("data-series") == \
        "out.weight"
    page.keyboard.press("Escape")
    assert markers.count() == 0 and page.locator(".activation-row.highlighted").count() == 0
    assert page.is_hidden("#training-focus")


def bounded_series(first: int, points: int, bins: int, scale: float) -> dict:
    """A StepSeries dict at its bounds: `points` recent readings after `bins` summary bins."""
    steps = list(range(first, first + points))
    values = [scale * (1 + 0.5 * math.sin(step / 20)) for step in steps]
    width = first // bins
    summary = [{"first_step": index * width, "last_step": (index + 1) * width - 1, "readings": width,
                "non_finite": 0, "min": scale / 2, "max": scale * 2, "mean": scale, "last": scale}
               for index in range(bins)]
    return {"steps": steps, "values": values, "summary": summary}


def test_a_long_run_at_the_history_bounds(session, tmp_path):
    """100,000 steps, 60 parameters, 50 modules, each series at its bound (512 recent
    readings and summary bins), 64 distribution samples: every line drawn, activation rows
    drawn on request past the first ones."""
    first, points, bins = 100_000 - 512, 512, 16

    def samples():
        return [{"step": index * 1500, "percentiles": [-4, -3, -2, -1, 0, 1, 2, 3, 4], "count": 1000,
                 "non_finite": 0} for index in range(64)]

    def series(scale):
        return bounded_series(first, points, bins, scale)

    history = {"version": 1, "steps_seen": 100_000, "loss": series(1.0),
               "parameters": {f"layers.{index}.weight": {"grad_norm": series(index + 1.0), "update_ratio": series(1e-3),
                                                         "grad": samples(), "weight": samples()}
                              for index in range(60)},
               "activations": {f"layers.{index}": {"kind": "relu", "mean": series(1.0), "std": series(0.1),
                                                   "zeros": series(0.3), "dead": series(0.1), "values": samples()}
                               for index in range(50)}}
    viz.to_html(traced(history), tmp_path / "report.html")
    page = session.page
    open_training(session, tmp_path / "report.html")
    assert chart(page, "Gradient norm per parameter").locator("g.series path.line").count() == 60
    ticks = chart(page, "Loss per step").locator("text.x-tick").all_text_contents()
    assert ticks == ["0", "20,000", "40,000", "60,000", "80,000"]
    rows = page.locator(".activation-row")
    assert rows.count() == 40
    page.click("#training-activations button.link")
    assert rows.count() == 50

// The Training view: the run's story from trace meta["history"] (genesis.debug.run_history),
// drawn as inline SVG charts (training_chart.js): the loss, each parameter's gradient norm
// and update ratio |Δw|/|w|, the learning rates, gradient and weight distributions over time
// for a chosen parameter, and each module's activation statistics. A finding with a `step`
// gets a "step N" link that opens this view with a marker at that step on every chart; one
// with a `module` (or parameters) picks out that module's activation row and parameters.
// Without a history (a bare graph, an older trace) the view's tab is not shown; with an
// empty one the view says that nothing was recorded.
const ACTIVATION_ROWS = 40;   // module rows drawn at once; the rest on request
const ACTIVATION_FRACTIONS = [["zeros", "exact zeros"], ["dead", "dead units"], ["saturated", "saturated"]];

class TrainingView {
  constructor(viewer) {
    this.viewer = viewer;
    this.history = (viewer.data.run && viewer.data.run.meta && viewer.data.run.meta.history) || null;
    this.panel = viewer.$("training");
    this.active = false;
    this.built = false;
    this.charts = [];          // every chart drawn, for the marker and the picked-out series
    this.parameterCharts = []; // charts whose series are parameters
    this.marker = null;
    this.picked = new Set();   // parameter names picked out
    this.module = null;        // the activation row (module path) picked out
    this.activeFinding = null;
  }

  start() {
    if (!this.history) return;
    const tabs = this.viewer.$("tabs");
    tabs.hidden = false;
    this.viewer.$("tab-graph").addEventListener("click", () => this.show(false));
    this.viewer.$("tab-training").addEventListener("click", () => this.show(true));
    this.linkFindings();
    if (!this.viewer.graphs.length) this.show(true);
  }

  // Switch between the graph (false) and this view (true).
  show(training) {
    if (!this.history) return;
    this.active = training;
    document.body.classList.toggle("training-view", training);
    this.viewer.$("graph-panel").hidden = training;
    this.viewer.$("details").hidden = training;
    this.panel.hidden = !training;
    this.viewer.$("tab-graph").setAttribute("aria-selected", String(!training));
    this.viewer.$("tab-training").setAttribute("aria-selected", String(training));
    if (training && !this.built) this.build();
    if (!training && this.viewer.current) this.viewer.panZoom.relabel();
  }

  // "step N" links on the findings that have a step; "charts" links on those that only
  // name a module or parameters the history has.
  linkFindings() {
    const parameters = Object.keys(this.history.parameters || {});
    for (const item of this.viewer.$("findings-list").children) {
      if (item.dataset.finding === undefined) continue;
      const index = Number(item.dataset.finding);
      const finding = this.viewer.data.findings[index];
      const open = (event) => {
        event.stopPropagation();
        this.focusFinding(index);
      };
      let link = null;
      if (finding.step !== null && finding.step !== undefined) {
        link = linkButton(`step ${formatCount(finding.step)}`, open,
          `show step ${finding.step} (backward call ${finding.step + 1}) on the Training charts`);
      } else if (this.concerns(finding, parameters)) {
        link = linkButton("training charts", open, "show what this finding concerns on the Training charts");
      }
      if (link) item.append(el("span", { className: "finding-links" }, link));
    }
  }

  concerns(finding, parameters) {
    return this.activationOf(finding) !== null || parametersOfFinding(finding, parameters).length > 0;
  }

  // The activation row a finding concerns: the one it names (`details.activation`, as the
  // activation findings do), else its module's; null when the history has neither.
  activationOf(finding) {
    const activations = this.history.activations || {};
    const named = (finding.details || {}).activation;
    if (typeof named === "string" && Object.prototype.hasOwnProperty.call(activations, named)) return named;
    const module = finding.module;
    return typeof module === "string" && Object.prototype.hasOwnProperty.call(activations, module) ? module : null;
  }

  // Whether opening finding `index` belongs in this view (it has a step, or names something
  // drawn here) rather than in the graph.
  owns(index) {
    const finding = this.viewer.data.findings[index];
    return Boolean(this.history) && ((finding.step !== null && finding.step !== undefined)
      || this.concerns(finding, Object.keys(this.history.parameters || {})));
  }

  // -- following a finding, a step, a parameter ---------------------------------------
  focusFinding(index) {
    const finding = this.viewer.data.findings[index];
    this.activeFinding = index;
    for (const item of this.viewer.$("findings-list").children) {
      item.classList.toggle("active", item.dataset.finding === String(index));
    }
    this.show(true);
    const step = finding.step === undefined ? null : finding.step;
    this.pick(new Set(parametersOfFinding(finding, Object.keys(this.history.parameters || {}))),
      this.activationOf(finding));
    this.setMarker(step);
    this.renderFocus();
    const row = this.module === null ? null : this.panel.querySelector(".activation-row.highlighted");
    if (step !== null || (!row && !this.picked.size)) this.panel.scrollTop = 0;
    else if (row) row.scrollIntoView({ block: "nearest" });
    else this.viewer.$("training-gradients").scrollIntoView({ block: "start" });
  }

  // Whether this view has charts with step `step` on them (a link to it leads somewhere).
  hasStep(step) {
    return Boolean(this.history) && !historyIsEmpty(this.history) && Number.isInteger(step)
      && step >= 0 && step < (this.history.steps_seen || 0);
  }

  // Another step of finding `index` (a later effect its box names): the finding, with the
  // marker at that step.
  focusStep(step, index) {
    this.focusFinding(index);
    this.setMarker(step);
    this.renderFocus();
    this.panel.scrollTop = 0;
  }

  focusParameter(name) {
    this.show(true);
    this.activeFinding = null;
    this.pick(this.picked.size === 1 && this.picked.has(name) ? new Set() : new Set([name]), null);
    this.renderFocus();
  }

  setMarker(step) {
    this.marker = step;
    for (const chart of this.charts) chart.setMarker(step);
  }

  pick(parameters, module) {
    this.picked = parameters;
    this.module = module;
    for (const chart of this.parameterCharts) chart.emphasise(this.picked);
    for (const row of this.panel.querySelectorAll(".activation-row")) {
      row.classList.toggle("highlighted", module !== null && row.dataset.module === module);
    }
    const select = this.panel.querySelector("#distribution-select");
    const first = [...parameters][0];
    if (select && first !== undefined && select.value !== first && this.history.parameters[first]) {
      select.value = first;
      this.drawDistributions(first);
    }
  }

  clearFocus() {
    this.activeFinding = null;
    this.pick(new Set(), null);
    this.setMarker(null);
    this.renderFocus();
    for (const item of this.viewer.$("findings-list").children) item.classList.remove("active");
  }

  // The bar at the top: the finding or step being shown, and what the charts say there.
  renderFocus() {
    const bar = this.panel.querySelector("#training-focus");
    if (!bar) return;
    const parts = [];
    if (this.activeFinding !== null) {
      const finding = this.viewer.data.findings[this.activeFinding];
      parts.push(el("span", { className: `badge ${finding.severity}` }, finding.severity),
        el("strong", null, finding.title));
      const graph = this.viewer.graphs[finding.graph];
      if (graph && finding.node !== null && finding.node < graph.node_count) {
        parts.push(" ", linkButton("show in the graph", () => {
          this.show(false);
          this.viewer.jumpToNode(finding.graph, finding.node, this.activeFinding);
        }));
      }
    }
    if (this.marker !== null) parts.push(el("span", { className: "focus-step" }, this.stepText(this.marker)));
    if (this.module !== null) parts.push(el("span", { className: "focus-step" }, `activations of ${this.module}`));
    if (this.picked.size) {
      parts.push(el("span", { className: "focus-step" }, [...this.picked].slice(0, 4).join(", ")
        + (this.picked.size > 4 ? ` and ${formatCount(this.picked.size - 4)} more` : "")));
    }
    if (parts.length) {
      parts.push(" ", linkButton("clear", () => this.clearFocus(), "remove the marker and the highlight"));
    }
    bar.replaceChildren(...parts);
    bar.hidden = !parts.length;
  }

  // "step 40: loss NaN" (the loss reading there, or the summary bin holding it).
  stepText(step) {
    const loss = readSeries(this.history.loss);
    const point = loss.points.find((item) => item.step === step);
    let text = `step ${formatCount(step)}`;
    if (point) return `${text}: loss ${formatReading(point.value)}`;
    const bin = loss.bins.find((item) => item.first <= step && step <= item.last);
    if (bin) {
      text += `: loss in steps ${bin.first} to ${bin.last} from ${formatReading(bin.min)} to ${formatReading(bin.max)}`;
    }
    return text;
  }

  // -- building the view ----------------------------------------------------------------
  build() {
    this.built = true;
    const history = this.history;
    const steps = history.steps_seen || 0;
    const header = el("div", { className: "training-header" },
      el("h2", null, "Training"),
      el("span", { className: "training-summary" }, `${counted(steps, "backward call")} seen`),
      el("div", { id: "training-focus", className: "training-focus", hidden: true }));
    if (historyIsEmpty(history)) {
      this.panel.replaceChildren(header, el("p", { className: "no-graph", id: "training-empty" },
        `Nothing was recorded over the run's steps (${counted(steps, "backward call")}): no loss, `
        + "gradient norm, update or activation reading to draw."));
      this.panel.dataset.ready = "true";
      return;
    }
    const sections = [this.lossSection(), this.gradientSection(), this.updateSection(),
      this.learningRateSection(), this.distributionSection(), this.activationSection()];
    this.panel.replaceChildren(header, ...sections.filter(Boolean)); // (null: a section with nothing to draw)
    this.setMarker(this.marker);
    this.pick(this.picked, this.module);
    this.renderFocus();
    this.panel.dataset.ready = "true";
  }

  chart(options, parameters = false) {
    const steps = this.history.steps_seen;
    const chart = new StepChart(steps > 0 ? { steps: [0, steps - 1], ...options } : options);
    this.charts.push(chart);
    if (parameters) this.parameterCharts.push(chart);
    return chart;
  }

  section(id, title, ...children) {
    return el("section", { className: "training-section", id }, el("h3", null, title), ...children);
  }

  lossSection() {
    const loss = readSeries(this.history.loss);
    if (!seriesHasReadings(loss)) {
      return this.section("training-loss", "Loss", note("No loss was recorded: no backward started from a scalar."));
    }
    const chart = this.chart({ title: "Loss per step", yLabel: "loss",
      description: "the scalar each backward started from; older steps as min–max bands with their mean" })
      .line("loss", loss, { label: "loss" });
    const parts = [chart.element()];
    if (chart.allPositive()) {
      parts.unshift(el("label", { className: "control chart-option" },
        el("input", { type: "checkbox", id: "loss-log", onchange: (event) => chart.setLog(event.target.checked) }),
        " log scale"));
    }
    if (loss.bins.length) {
      parts.push(note(`Steps ${loss.bins[0].first} to ${loss.bins[loss.bins.length - 1].last} are summarised `
        + `in ${counted(loss.bins.length, "bin")} (shaded: min to max, line: mean).`));
    }
    return this.section("training-loss", "Loss", ...parts);
  }

  parameterSeries(key) {
    return Object.entries(this.history.parameters || {})
      .map(([name, parameter]) => [name, readSeries(parameter[key])])
      .filter(([, read]) => seriesHasReadings(read));
  }

  parameterChart(options, series) {
    const chart = this.chart({ ...options, log: true, legend: true,
      onPick: (name) => this.focusParameter(name) }, true);
    for (const [name, read] of series) chart.line(name, read);
    return chart;
  }

  gradientSection() {
    const series = this.parameterSeries("grad_norm");
    if (!series.length) {
      return this.section("training-gradients", "Gradient norms", note("No parameter received a gradient."));
    }
    const chart = this.parameterChart({ title: "Gradient norm per parameter", yLabel: "‖grad‖₂",
      description: "the L2 norm of each parameter's gradient at each step" }, series);
    return this.section("training-gradients", "Gradient norms", chart.element(),
      note("Gaps: steps where the parameter got no gradient. Zero norms sit on the bottom edge of the log axis."));
  }

  updateSection() {
    const optimizers = this.history.optimizers || [];
    const series = this.parameterSeries("update_ratio");
    if (!series.length) {
      return this.section("training-updates", "Update ratios", note(optimizers.length
        ? "No update was measured: the optimizers never stepped on a sampled step."
        : "No optimizer was seen in this run, so there are no updates to measure."));
    }
    const chart = this.parameterChart({ title: "Update ratio per parameter", yLabel: "|Δw| / |w|",
      description: "the norm of each optimizer step's change to a parameter over the parameter's norm, "
        + "at sampled steps" },
    series);
    return this.section("training-updates", "Update ratios", chart.element(),
      note("|Δw|/|w| of an optimizer step, measured at sampled steps; around 1e-3 is typical for a healthy run."));
  }

  learningRateSection() {
    const lines = [];
    for (const optimizer of this.history.optimizers || []) {
      (optimizer.groups || []).forEach((group, index) => {
        const read = readSeries(group.lr);
        if (seriesHasReadings(read)) {
          const name = `${optimizer.name}${(optimizer.groups.length > 1) ? ` group ${index}` : ""}`;
          lines.push([name, read, optimizer.made_at]);
        }
      });
    }
    if (!lines.length) return null;
    const chart = this.chart({ title: "Learning rate", yLabel: "learning rate",
      description: "the learning rate of each optimizer's parameter groups" });
    for (const [name, read, madeAt] of lines) chart.line(name, read, { label: madeAt ? `${name} (${madeAt})` : name });
    return this.section("training-lr", "Learning rate", chart.element());
  }

  distributionSection() {
    const names = Object.entries(this.history.parameters || {})
      .filter(([, parameter]) => (parameter.grad || []).length || (parameter.weight || []).length)
      .map(([name]) => name);
    if (!names.length) {
      return this.section("training-distributions", "Distributions",
        note("No gradient or weight distribution was sampled."));
    }
    const select = el("select", { id: "distribution-select", "aria-label": "parameter",
      onchange: (event) => this.drawDistributions(event.target.value) },
    names.map((name) => el("option", { value: name }, name)));
    this.distributionBox = el("div", { className: "chart-row", id: "distribution-charts" });
    this.distributionCounts = note("");
    const section = this.section("training-distributions", "Distributions over time",
      el("label", { className: "control chart-option" }, "parameter ", select), this.distributionBox,
      this.distributionCounts, note("Shaded bands between percentile pairs (min–max, 7–93%, 16–84%, 31–69%), "
        + "line: the median; at sampled steps."));
    this.drawDistributions(names[0]);
    return section;
  }

  drawDistributions(name) {
    const parameter = this.history.parameters[name];
    const old = new Set(this.distributionCharts || []);
    this.charts = this.charts.filter((chart) => !old.has(chart));
    this.distributionCharts = [];
    const figures = [];
    const counts = [];
    for (const [key, what, color] of [["grad", "gradient", CHART_COLORS[0]], ["weight", "weight", CHART_COLORS[2]]]) {
      const samples = readSamples(parameter[key]);
      if (!samples.length) {
        figures.push(el("div", { className: "chart-missing" }, `No ${what} distribution of ${name} was sampled.`));
        continue;
      }
      counts.push(`${what}: ${counted(samples.length, "sample")}, steps ${formatCount(samples[0].step)} to `
        + formatCount(samples[samples.length - 1].step));
      const chart = this.chart({ title: `${name}: ${what} values`, yLabel: `${what} value`, width: 480, height: 220,
        description: `the distribution of ${name}'s ${what} entries over steps` }).distribution(samples, color);
      chart.marker = this.marker;
      this.distributionCharts.push(chart);
      figures.push(chart.element());
    }
    this.distributionBox.replaceChildren(...figures);
    this.distributionCounts.textContent = counts.length ? `Sampled ${counts.join("; ")}.` : "";
  }

  activationSection() {
    const modules = Object.entries(this.history.activations || {});
    if (!modules.length) {
      return this.section("training-activations", "Activations", note("No module's output was measured."));
    }
    const list = el("div", { className: "activation-list" });
    const rowOf = ([name, module]) => this.activationRow(name, module);
    list.append(...modules.slice(0, ACTIVATION_ROWS).map(rowOf));
    if (modules.length > ACTIVATION_ROWS) {
      const more = linkButton(`show all ${formatCount(modules.length)} modules`, () => {
        more.remove();
        list.append(...modules.slice(ACTIVATION_ROWS).map(rowOf));
        this.setMarker(this.marker);
        this.pick(this.picked, this.module);
      });
      list.append(more);
    }
    return this.section("training-activations", "Activations per module", list,
      note("Each module's output at sampled steps: mean ± standard deviation; the fractions of exact zeros, "
        + "dead units (zero for every example of the batch) and saturated outputs; the distribution of its values."));
  }

  activationRow(name, module) {
    const mean = readSeries(module.mean);
    const charts = [];
    if (seriesHasReadings(mean)) {
      charts.push(this.chart({ title: `${name}: mean ± std`, yLabel: "output value", width: 480, height: 200,
        description: `the mean of ${name}'s output, with a band of one standard deviation` })
        .line("mean", mean, { label: "mean", spread: readSeries(module.std) }));
    }
    const fractions = this.chart({ title: `${name}: zeros, dead, saturated`, yLabel: "fraction of outputs",
      width: 480, height: 200, percent: true, legend: true,
      description: `fractions of ${name}'s outputs that are zero, dead or saturated` });
    ACTIVATION_FRACTIONS.forEach(([key, label], index) => {
      const read = readSeries(module[key]);
      if (seriesHasReadings(read)) fractions.line(key, read, { label, color: CHART_COLORS[[3, 7, 1][index]] });
    });
    if (fractions.hasData()) charts.push(fractions);
    else this.charts.splice(this.charts.indexOf(fractions), 1);
    const samples = readSamples(module.values);
    if (samples.length) {
      charts.push(this.chart({ title: `${name}: output values`, yLabel: "output value", width: 480, height: 200,
        description: `the distribution of ${name}'s output values over steps` })
        .distribution(samples, CHART_COLORS[4]));
    }
    const kind = module.kind && module.kind !== "other" ? module.kind : null;
    return el("div", { className: "activation-row", dataset: { module: name } },
      el("div", { className: "activation-name" }, name, kind ? el("span", { className: "badge kind" }, kind) : null),
      charts.length ? el("div", { className: "chart-row" }, charts.map((chart) => chart.element()))
        : note("no reading recorded"));
  }
}

function note(text) {
  return el("p", { className: "chart-note" }, text);
}

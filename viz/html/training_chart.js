// One chart of the Training view, drawn as inline SVG: values over steps (backward calls).
// A series is a line through its recent readings and, for older steps summarised in bins,
// a min–max band with the bins' mean line; a distribution is TensorBoard's shaded bands
// between percentile pairs with the median line. Readings that are NaN or ±Inf are marked
// (a red triangle at the step, a strip over a run of them) and said in the hover text,
// never dropped; a null reading is a gap. A marker (a vertical line) shows one chosen step.
const CHART_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
  "#7f7f7f", "#bcbd22", "#17becf"];
const TIP_ROWS = 12;         // series listed in a hover text before "… N more"
const HOVER_REACH = 24;      // px: how far from a reading the pointer may be to show it
let chartCount = 0;          // for the ids of clip paths and titles

class StepChart {
  // options: { title, yLabel, description, log, percent, width, height, legend, onPick, steps }
  // (`steps`: [first, last] the x axis spans at least, so the charts of one run line up)
  constructor(options) {
    this.options = { width: 720, height: 230, ...options };
    this.log = Boolean(options.log);
    this.series = [];
    this.samples = null;       // distribution samples, when this chart draws one
    this.marker = null;
    this.emphasised = null;    // a Set of series names, or null
    this.id = `chart-${chartCount += 1}`;
    this.figure = null;
  }

  // A line (and summary band) named `name`; `spread`: a read series of standard deviations
  // drawn as a band of ± one of them around the line's recent readings.
  line(name, read, { label = name, color = null, spread = null } = {}) {
    this.series.push({ name, label, read, spread, steps: read.points.map((point) => point.step),
      color: color || CHART_COLORS[this.series.length % CHART_COLORS.length] });
    return this;
  }

  distribution(samples, color = CHART_COLORS[0]) {
    this.samples = samples;
    this.distributionColor = color;
    return this;
  }

  // Whether there is a reading to draw or mark.
  hasData() {
    return this.series.some((series) => seriesHasReadings(series.read))
      || Boolean(this.samples && this.samples.length);
  }

  // Whether every finite value is above zero (a log scale can show them all).
  allPositive() {
    const values = this.finiteValues();
    return values.length > 0 && values.every((value) => value > 0);
  }

  element() {
    if (this.figure) return this.figure;
    this.svg = svgEl("svg", { class: "chart-svg", viewBox: `0 0 ${this.options.width} ${this.options.height}`,
      role: "img", "aria-labelledby": `${this.id}-title ${this.id}-desc` });
    this.tip = el("div", { className: "chart-tip", hidden: true, role: "status" });
    this.figure = el("figure", { className: "chart", dataset: { chart: this.options.title } },
      el("figcaption", { className: "chart-title" }, this.options.title), this.svg, this.tip,
      this.series.length > 1 || this.options.legend ? this.legend() : null);
    this.draw();
    return this.figure;
  }

  setLog(log) {
    this.log = log;
    if (this.figure) this.draw();
  }

  setMarker(step) {
    this.marker = step;
    if (this.figure) this.drawMarker();
  }

  emphasise(names) {
    this.emphasised = names && names.size ? names : null;
    if (this.figure) this.applyEmphasis(this.emphasised);
  }

  // -- drawing ---------------------------------------------------------------------
  draw() {
    const { width, height } = this.options;
    this.box = { left: 66, right: width - 14, top: 12, bottom: height - 38 };
    this.domains();
    const svg = this.svg;
    svg.replaceChildren(
      svgEl("title", { id: `${this.id}-title` }, this.options.title),
      svgEl("desc", { id: `${this.id}-desc` }, this.description()),
      svgEl("defs", null, svgEl("clipPath", { id: `${this.id}-clip` },
        svgEl("rect", { x: this.box.left, y: this.box.top - 1, width: this.box.right - this.box.left,
          height: this.box.bottom - this.box.top + 2 }))));
    svg.append(this.axes());
    const plot = svgEl("g", { class: "plot", "clip-path": `url(#${this.id}-clip)` });
    if (this.samples) plot.append(this.distributionGroup());
    for (const series of this.series) plot.append(this.seriesGroup(series));
    svg.append(plot, this.nonFiniteMarks());
    this.markerGroup = svgEl("g", { class: "step-marker", hidden: true });
    this.guide = svgEl("line", { class: "hover-guide", y1: this.box.top, y2: this.box.bottom, visibility: "hidden" });
    const zone = svgEl("rect", { class: "hover-zone", x: this.box.left, y: this.box.top,
      width: this.box.right - this.box.left, height: this.box.bottom - this.box.top });
    zone.addEventListener("mousemove", (event) => this.hover(event));
    zone.addEventListener("mouseleave", () => this.unhover());
    svg.append(this.markerGroup, this.guide, zone);
    this.drawMarker();
    this.applyEmphasis(this.emphasised);
  }

  description() {
    const scale = this.logUsed ? "log scale" : "linear scale";
    return `${this.options.description || this.options.title}; x: step (backward call), y: `
      + `${this.options.yLabel} (${scale}). Red marks: NaN or infinite readings.`;
  }

  finiteValues() {
    const values = [];
    const push = (value) => { if (value !== null && Number.isFinite(value)) values.push(value); };
    for (const series of this.series) {
      const spread = series.spread ? new Map(series.spread.points.map((point) => [point.step, point.value])) : null;
      for (const point of series.read.points) {
        push(point.value);
        const deviation = spread ? spread.get(point.step) : null;
        if (Number.isFinite(deviation) && Number.isFinite(point.value)) {
          push(point.value - deviation);
          push(point.value + deviation);
        }
      }
      for (const bin of series.read.bins) { push(bin.min); push(bin.max); }
    }
    for (const sample of this.samples || []) {
      if (sample.percentiles) { push(sample.percentiles[0]); push(sample.percentiles[8]); }
    }
    return values;
  }

  domains() {
    const steps = [];
    for (const series of this.series) {
      for (const point of series.read.points) steps.push(point.step);
      for (const bin of series.read.bins) steps.push(bin.first, bin.last);
    }
    for (const sample of this.samples || []) steps.push(sample.step);
    if (this.options.steps) steps.push(...this.options.steps);
    let x0 = steps.length ? lowest(steps) : 0;
    let x1 = steps.length ? highest(steps) : 1;
    if (x1 === x0) { x0 -= 1; x1 += 1; }
    this.x0 = x0;
    this.x1 = x1;
    let values = this.finiteValues();
    if (this.options.percent) values = values.concat([0, 1]);
    const positive = values.filter((value) => value > 0);
    this.logUsed = this.log && positive.length > 0;
    if (this.logUsed) {  // a little room above and below, so no line runs along the frame
      const low = Math.log10(lowest(positive));
      const high = Math.log10(highest(positive));
      const pad = Math.max(0.15, (high - low) * 0.05);
      this.y0 = low - pad;
      this.y1 = high + pad;
      this.yTicks = logTicks(this.y0, this.y1);
    } else {
      let low = values.length ? lowest(values) : 0;
      let high = values.length ? highest(values) : 1;
      if (high === low) {
        const pad = Math.abs(low) * 0.1 || 1;
        low -= pad;
        high += pad;
      }
      const step = niceStep((high - low) / 5);
      this.y0 = Math.floor(low / step) * step;
      this.y1 = Math.ceil(high / step) * step;
      this.yTicks = ticksBetween(this.y0, this.y1, step);
    }
  }

  x(step) {
    return this.box.left + (step - this.x0) / (this.x1 - this.x0) * (this.box.right - this.box.left);
  }

  // Off-scale values (zero or below on a log axis) sit on the bottom edge.
  y(value) {
    let position = value;
    if (this.logUsed) position = value > 0 ? Math.log10(value) : this.y0;
    const fraction = (position - this.y0) / (this.y1 - this.y0);
    return this.box.bottom - Math.max(0, Math.min(1, fraction)) * (this.box.bottom - this.box.top);
  }

  stepAt(px) {
    return this.x0 + (px - this.box.left) / (this.box.right - this.box.left) * (this.x1 - this.x0);
  }

  axes() {
    const { left, right, top, bottom } = this.box;
    const group = svgEl("g", { class: "axes" });
    for (const tick of this.yTicks) {
      const y = this.y(tick);
      group.append(svgEl("line", { class: "grid", x1: left, x2: right, y1: y, y2: y }),
        svgEl("text", { class: "tick y-tick", x: left - 5, y: y + 3.5 },
          this.options.percent ? `${tickText(100 * tick)}%` : tickText(tick)));
    }
    const step = Math.max(1, niceStep((this.x1 - this.x0) / 6));
    for (const tick of ticksBetween(Math.ceil(this.x0 / step) * step, this.x1, step)) {
      const x = this.x(tick);
      group.append(svgEl("line", { class: "tick-mark", x1: x, x2: x, y1: bottom, y2: bottom + 4 }),
        svgEl("text", { class: "tick x-tick", x, y: bottom + 15 }, formatCount(tick)));
    }
    group.append(svgEl("rect", { class: "frame", x: left, y: top, width: right - left, height: bottom - top }),
      svgEl("text", { class: "axis-label x-label", x: (left + right) / 2, y: bottom + 32 }, "step (backward call)"),
      svgEl("text", { class: "axis-label y-label", x: 0, y: 0,
        transform: `translate(13 ${(top + bottom) / 2}) rotate(-90)` },
      this.options.yLabel + (this.logUsed ? " (log)" : "")));
    return group;
  }

  seriesGroup(series) {
    const group = svgEl("g", { class: "series", dataset: { series: series.name } });
    group.append(svgEl("title", null, series.label));
    const bins = series.read.bins;
    const minWidth = 1.5;
    // the summary: a min-max band per run of bins with finite values, and their mean line
    for (const run of runsOf(bins, (bin) => bin.min !== null && bin.max !== null)) {
      const top = run.flatMap((bin) => [[this.x(bin.first), this.y(bin.max)],
        [Math.max(this.x(bin.last), this.x(bin.first) + minWidth), this.y(bin.max)]]);
      const under = run.slice().reverse().flatMap((bin) => [
        [Math.max(this.x(bin.last), this.x(bin.first) + minWidth), this.y(bin.min)],
        [this.x(bin.first), this.y(bin.min)]]);
      group.append(svgEl("path", { class: "summary-band", fill: series.color, d: pathOf(top.concat(under)) + "Z" }));
    }
    for (const run of runsOf(bins, (bin) => bin.mean !== null && Number.isFinite(bin.mean))) {
      const points = run.map((bin) => [this.x((bin.first + bin.last) / 2), this.y(bin.mean)]);
      group.append(this.pathOrDot(points, "summary-mean", series.color));
    }
    const finite = (point) => point.value !== null && Number.isFinite(point.value);
    if (series.spread) {
      const deviations = new Map(series.spread.points.map((point) => [point.step, point.value]));
      const has = (point) => finite(point) && Number.isFinite(deviations.get(point.step));
      for (const run of runsOf(series.read.points, has)) {
        const upper = run.map((point) => [this.x(point.step), this.y(point.value + deviations.get(point.step))]);
        const lower = run.slice().reverse()
          .map((point) => [this.x(point.step), this.y(point.value - deviations.get(point.step))]);
        group.append(svgEl("path", { class: "spread-band", fill: series.color, d: pathOf(upper.concat(lower)) + "Z" }));
      }
    }
    for (const run of runsOf(series.read.points, finite)) {
      group.append(this.pathOrDot(run.map((point) => [this.x(point.step), this.y(point.value)]), "line", series.color));
    }
    return group;
  }

  pathOrDot(points, className, color) {
    if (points.length === 1) {
      return svgEl("circle", { class: `${className} dot`, cx: points[0][0].toFixed(1), cy: points[0][1].toFixed(1),
        r: 2.2, fill: color });
    }
    return svgEl("path", { class: className, stroke: color, d: pathOf(points) });
  }

  // TensorBoard's distribution: bands between percentile pairs (outermost lightest) and the
  // median; a sample with no finite value breaks the bands (and is marked).
  distributionGroup() {
    const group = svgEl("g", { class: "distribution" });
    const color = this.distributionColor;
    const pairs = [[0, 8], [1, 7], [2, 6], [3, 5]];
    for (const run of runsOf(this.samples, (sample) => sample.percentiles !== null)) {
      const widen = run.length === 1 ? 3 : 0;  // a lone sample is drawn as a narrow bar
      pairs.forEach(([low, high], depth) => {
        const upper = run.map((sample) => [this.x(sample.step), this.y(sample.percentiles[high])]);
        const lower = run.slice().reverse().map((sample) => [this.x(sample.step), this.y(sample.percentiles[low])]);
        if (widen) {
          upper.splice(0, 1, [upper[0][0] - widen, upper[0][1]], [upper[0][0] + widen, upper[0][1]]);
          lower.splice(0, 1, [lower[0][0] + widen, lower[0][1]], [lower[0][0] - widen, lower[0][1]]);
        }
        group.append(svgEl("path", { class: `percentile-band band-${depth}`, fill: color,
          d: pathOf(upper.concat(lower)) + "Z" }));
      });
      const median = run.map((sample) => [this.x(sample.step), this.y(sample.percentiles[4])]);
      group.append(this.pathOrDot(median, "median", color));
    }
    return group;
  }

  // Red marks for non-finite readings: a triangle (top: NaN or +Inf, bottom: -Inf) and a thin
  // line at a lone one, a strip over a run of them, a strip over a summary bin that held any.
  nonFiniteMarks() {
    const group = svgEl("g", { class: "non-finite-marks" });
    const { top, bottom } = this.box;
    const mark = (first, last, value, text) => {
      const x = this.x(first);
      const low = value === -Infinity;
      const tip = low ? bottom : top;
      const item = svgEl("g", { class: "non-finite", dataset: { step: String(first), value: formatReading(value) } },
        svgEl("title", null, text));
      if (last > first) {
        item.append(svgEl("rect", { class: "non-finite-strip", x, y: low ? bottom - 5 : top,
          width: Math.max(2, this.x(last) - x), height: 5 }));
      } else {
        item.append(svgEl("line", { class: "non-finite-line", x1: x, x2: x, y1: top, y2: bottom }));
      }
      const direction = low ? -1 : 1;
      item.append(svgEl("path", { class: "non-finite-mark",
        d: `M${x.toFixed(1)},${(tip + direction * 7).toFixed(1)}l-5,${-direction * 7}h10Z` }));
      group.append(item);
    };
    const name = (value) => formatReading(value);
    for (const series of this.series) {
      const isBad = (point) => point.value !== null && !Number.isFinite(point.value);
      for (const run of runsOf(series.read.points, isBad)) {
        const first = run[0].step;
        const last = run[run.length - 1].step;
        const kinds = [...new Set(run.map((point) => name(point.value)))].join(", ");
        mark(first, last, run[0].value, run.length === 1 ? `${series.label}: ${kinds} at step ${first}`
          : `${series.label}: ${kinds} at ${run.length} readings, steps ${first} to ${last}`);
      }
      for (const bin of series.read.bins) {
        if (bin.nonFinite > 0) {
          mark(bin.first, bin.last, NaN, `${series.label}: ${counted(bin.nonFinite, "NaN/Inf reading")} of `
            + `${formatCount(bin.readings)} in steps ${bin.first} to ${bin.last}`);
        }
      }
    }
    for (const sample of this.samples || []) {
      if (sample.nonFinite > 0 || sample.percentiles === null) {
        const share = `${formatCount(sample.nonFinite)} of ${formatCount(sample.count)}`;
        mark(sample.step, sample.step, NaN, sample.percentiles === null
          ? `step ${sample.step}: no finite value (${share} NaN/Inf)`
          : `step ${sample.step}: ${share} values NaN/Inf`);
      }
    }
    return group;
  }

  drawMarker() {
    const group = this.markerGroup;
    const step = this.marker;
    if (step === null || step === undefined) {
      group.setAttribute("hidden", "");
      return;
    }
    const inside = step >= this.x0 && step <= this.x1;
    const x = this.x(Math.max(this.x0, Math.min(this.x1, step)));
    const label = inside ? `step ${formatCount(step)}`
      : (step < this.x0 ? `← step ${formatCount(step)} (before these readings)`
        : `step ${formatCount(step)} (after these readings) →`);
    const right = x > (this.box.left + this.box.right) / 2;
    group.replaceChildren(svgEl("line", { class: "marker-line", x1: x, x2: x, y1: this.box.top, y2: this.box.bottom }),
      svgEl("text", { class: `marker-label${right ? " left" : ""}`, x: right ? x - 4 : x + 4, y: this.box.top + 11 },
        label));
    group.removeAttribute("hidden");
    group.setAttribute("class", `step-marker${inside ? "" : " outside"}`);
    group.dataset.step = String(step);
  }

  applyEmphasis(names) {
    for (const group of this.svg.querySelectorAll("g.series")) {
      const name = group.dataset.series;
      group.classList.toggle("dim", Boolean(names) && !names.has(name));
      group.classList.toggle("emph", Boolean(names) && names.has(name));
    }
    if (!this.legendList) return;
    for (const item of this.legendList.children) {
      item.classList.toggle("emph", Boolean(names) && names.has(item.dataset.series));
    }
  }

  legend() {
    this.legendList = el("ul", { className: "legend" }, this.series.map((series) => el("li", {
      dataset: { series: series.name }, tabindex: 0,
      title: this.options.onPick ? `${series.label}: click to pick it out in every chart` : series.label,
      onmouseenter: () => this.applyEmphasis(new Set([series.name])),
      onmouseleave: () => this.applyEmphasis(this.emphasised),
      onclick: () => { if (this.options.onPick) this.options.onPick(series.name); },
      onkeydown: (event) => { if (event.key === "Enter" && this.options.onPick) this.options.onPick(series.name); },
    }, swatch(series.color), series.label)));
    return this.legendList;
  }

  // -- hover -----------------------------------------------------------------------
  hover(event) {
    const frame = this.svg.getBoundingClientRect();
    const scale = this.options.width / frame.width;
    const px = (event.clientX - frame.left) * scale;
    const reading = this.readingNear(px, HOVER_REACH * scale);
    if (!reading) {
      this.unhover();
      return;
    }
    const x = this.x(reading.step);
    this.guide.setAttribute("x1", x);
    this.guide.setAttribute("x2", x);
    this.guide.setAttribute("visibility", "visible");
    this.tip.replaceChildren(el("div", { className: "tip-step" }, reading.heading), ...reading.rows);
    this.tip.hidden = false;
    const figure = this.figure.getBoundingClientRect();
    const left = frame.left - figure.left + x / scale;
    const flip = left > figure.width / 2;
    this.tip.style.left = flip ? "" : `${left + 12}px`;
    this.tip.style.right = flip ? `${figure.width - left + 12}px` : "";
    this.tip.style.top = `${frame.top - figure.top + 8}px`;
  }

  unhover() {
    this.guide.setAttribute("visibility", "hidden");
    this.tip.hidden = true;
  }

  // The readings at the recorded step nearest the pointer (within `reach` px), or the
  // summary bins under it; null when there is none.
  readingNear(px, reach) {
    const wanted = this.stepAt(px);
    if (this.samples) {
      const sample = nearestBy(this.samples, (item) => item.step, wanted);
      if (!sample || Math.abs(this.x(sample.step) - px) > reach) return null;
      return { step: sample.step, heading: `step ${formatCount(sample.step)}`, rows: sampleRows(sample) };
    }
    let best = null;
    for (const series of this.series) {
      const point = nearestBy(series.read.points, (item) => item.step, wanted);
      if (point && (best === null || Math.abs(point.step - wanted) < Math.abs(best - wanted))) best = point.step;
    }
    if (best !== null && Math.abs(this.x(best) - px) <= reach) {
      const rows = [];
      for (const series of this.series) {
        const index = binarySearch(series.steps, best);
        if (index < 0) continue;
        const value = series.read.points[index].value;
        let text = this.options.percent ? formatPercent(value) : formatReading(value);
        if (series.spread) {
          const deviation = series.spread.points.find((point) => point.step === best);
          if (deviation) text += ` ± ${formatReading(deviation.value)}`;
        }
        rows.push({ series, value, text });
      }
      return { step: best, heading: `step ${formatCount(best)}`, rows: this.tipRows(rows) };
    }
    const rows = [];
    let within = null;
    for (const series of this.series) {
      const bin = series.read.bins.find((item) => item.first <= wanted + 0.5 && wanted - 0.5 <= item.last);
      if (!bin) continue;
      within = within || bin;
      const format = this.options.percent ? formatPercent : formatReading;
      const bad = bin.nonFinite ? `, ${formatCount(bin.nonFinite)} NaN/Inf` : "";
      rows.push({ series, value: bin.mean,
        text: `mean ${format(bin.mean)}, min ${format(bin.min)}, max ${format(bin.max)}${bad}` });
    }
    if (!within) return null;
    return { step: Math.round((within.first + within.last) / 2),
      heading: `steps ${formatCount(within.first)} to ${formatCount(within.last)} `
        + `(summary of ${counted(within.readings, "reading")})`,
      rows: this.tipRows(rows) };
  }

  // Hover rows, the picked-out series first, then by value (largest first).
  tipRows(rows) {
    const picked = (row) => (this.emphasised && this.emphasised.has(row.series.name) ? 0 : 1);
    const size = (row) => (row.value !== null && Number.isFinite(row.value) ? -row.value : -Infinity);
    rows.sort((a, b) => picked(a) - picked(b) || size(a) - size(b));
    const shown = rows.slice(0, TIP_ROWS).map((row) => el("div", {
      className: `tip-row${row.value !== null && !Number.isFinite(row.value) ? " bad" : ""}` },
    swatch(row.series.color), this.series.length > 1 ? `${row.series.label}: ` : "", row.text));
    if (rows.length > TIP_ROWS) {
      shown.push(el("div", { className: "tip-row" }, `… ${formatCount(rows.length - TIP_ROWS)} more`));
    }
    return shown;
  }
}

function sampleRows(sample) {
  const rows = [el("div", { className: "tip-row" }, counted(sample.count, "value"))];
  if (sample.percentiles) {
    const names = ["max", "93%", "84%", "69%", "median", "31%", "16%", "7%", "min"];
    names.forEach((name, index) => rows.push(el("div", { className: "tip-row" },
      `${name}: ${formatReading(sample.percentiles[8 - index])}`)));
  }
  if (sample.nonFinite) {
    rows.push(el("div", { className: "tip-row bad" }, `${formatCount(sample.nonFinite)} NaN/Inf`
      + (sample.percentiles ? "" : ": no finite value")));
  }
  return rows;
}

function swatch(color) {
  const mark = el("span", { className: "swatch" });
  mark.style.background = color;
  return mark;
}

// Runs of consecutive items that pass `keep`.
function runsOf(items, keep) {
  const runs = [];
  let run = [];
  for (const item of items) {
    if (keep(item)) run.push(item);
    else if (run.length) { runs.push(run); run = []; }
  }
  if (run.length) runs.push(run);
  return runs;
}

function pathOf(points) {
  return points.map(([x, y], index) => `${index ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)}`).join("");
}

function binarySearch(sorted, value) {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (sorted[middle] === value) return middle;
    if (sorted[middle] < value) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

// The item of `items` (sorted by key) whose key is nearest `value`.
function nearestBy(items, key, value) {
  if (!items.length) return null;
  let low = 0;
  let high = items.length - 1;
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if (key(items[middle]) < value) low = middle;
    else high = middle;
  }
  return Math.abs(key(items[low]) - value) <= Math.abs(key(items[high]) - value) ? items[low] : items[high];
}

// 1, 2 or 5 times a power of ten, at least `rough`.
function niceStep(rough) {
  if (!(rough > 0) || !Number.isFinite(rough)) return 1;
  const power = 10 ** Math.floor(Math.log10(rough));
  const fraction = rough / power;
  return (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * power;
}

function ticksBetween(low, high, step) {
  const ticks = [];
  for (let index = 0; low + index * step <= high + step * 1e-9 && index < 100; index += 1) {
    ticks.push(Number((low + index * step).toPrecision(12)));
  }
  return ticks;
}

// The values to label on a log axis from 10^low to 10^high: powers of ten (at most ~7), or
// 1, 2 and 5 times them where the axis spans less than two decades.
function logTicks(low, high) {
  const every = Math.max(1, Math.ceil((high - low) / 6));
  const ticks = [];
  for (let exponent = Math.ceil(low); exponent <= high; exponent += every) ticks.push(10 ** exponent);
  if (ticks.length >= 2) return ticks;
  const finer = [];
  for (let exponent = Math.floor(low); exponent <= Math.ceil(high); exponent += 1) {
    for (const mantissa of [1, 2, 5]) {
      const value = mantissa * 10 ** exponent;
      if (Math.log10(value) >= low && Math.log10(value) <= high) finer.push(value);
    }
  }
  return finer.length >= 2 ? finer : [10 ** low, 10 ** high];
}

function tickText(value) {
  if (value === 0) return "0";
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-3 && magnitude < 1e4) return String(Number(value.toPrecision(3)));
  const [mantissa, exponent] = value.toExponential().split("e");
  return `${Number(Number(mantissa).toPrecision(3))}e${Number(exponent)}`;
}

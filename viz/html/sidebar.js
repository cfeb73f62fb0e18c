// The left column: how the run went, the findings (most severe first) and the parameters
// with their gradient-norm histories.
const BAD_STATUS = new Set(["no gradient", "zero gradient", "exploding", "vanishing", "nan",
  "never trains"]);
// Not a problem, said apart from "ok": no gradient reached it and none was expected to.
const NOT_TRAINED = "not trained";
const NOT_TRAINED_TITLE = "no gradient reached it, and none was expected to: it is in no optimizer "
  + "that stepped (or, where none stepped, in no module whose forward ran with grad enabled)";
// Not a problem either: a bias the loss cannot depend on (its gradient cancels exactly).
const NO_EFFECT = "no effect on the loss";
// Nor one trained on gradients the script computed itself (Reptile's meta-update).
const SET_BY_HAND = "gradient set by hand";
const INFO_TITLES = {
  [NOT_TRAINED]: NOT_TRAINED_TITLE,
  [NO_EFFECT]: "its gradient was exactly zero while its module's weight learned: what flows back "
    + "into the module cancels over this bias, so the loss cannot depend on it (not a finding)",
  [SET_BY_HAND]: "no backward call reached it, but its optimizer stepped with a .grad the script "
    + "set (as Reptile's meta-update does): not a finding",
};
const PARAMETER_ROWS = 200;  // drawn at once; the rest on request

function renderRun(data, container) {
  const run = data.run;
  if (run.script === null) {
    const graph = data.graphs[0];
    container.replaceChildren(kvTable([
      ["Graph", `${counted(graph.ops, "op")}, ${counted(graph.node_count, "node")}`],
      ["Recorded steps", graph.steps.length ? formatCount(graph.steps.length) : null]]));
    return;
  }
  const meta = Object.entries(run.meta || {})
    .filter(([, value]) => value === null || typeof value !== "object")
    .map(([key, value]) => [key.replace(/_/g, " "), String(value)]);
  const parts = [kvTable([
    ["Script", [run.script, ...(run.args || [])].join(" ")],
    ["Exit code", String(run.exit_code)],
    ["Duration", `${Number(run.duration_s).toFixed(2)} s`],
    ["Backward", `${formatCount(run.steps_recorded)} recorded of ${formatCount(run.steps_seen)}`],
    ["Graphs", formatCount(data.graphs.length)],
    ...meta,
  ])];
  if (run.script_error) {
    parts.push(el("details", { open: true }, el("summary", null, "the script raised"),
      el("pre", null, run.script_error)));
  }
  container.replaceChildren(...parts);
}

function renderFindings(viewer, list, counter) {
  const findings = viewer.data.findings;
  counter.textContent = `(${formatCount(findings.length)})`;
  if (!findings.length) {
    list.replaceChildren(el("li", { className: "empty none" }, nothingFound(viewer.data.run)));
    return;
  }
  list.replaceChildren(...findings.map((finding, index) => el("li", {
    dataset: { finding: String(index) }, tabindex: 0, title: finding.message || finding.title,
    onclick: () => viewer.openFinding(index),
    onkeydown: (event) => { if (event.key === "Enter") viewer.openFinding(index); },
  }, el("span", { className: `badge ${finding.severity}` }, finding.severity),
  el("span", { className: "finding-title" }, finding.title),
  el("span", { className: "finding-where" },
    [finding.op, finding.module, finding.source].filter(Boolean).join(" · ")))));
}

// What an empty findings list means, in the console's words (trace_report.what_was_checked):
// nothing checked when the capture was lost or no backward call was seen, saying why (the
// script stopped at a torch API genesis does not serve, it raised, or its graphs were PyTorch's
// own: with the --torch hint); only what was captured when the run did not finish.
function nothingFound(run) {
  if (run.script === null) return "nothing found";
  const meta = run.meta || {};
  if (meta.lost) {
    return "nothing checked: what the script's process captured was lost with it (it ended "
      + "before sending it, and without a writable output folder it kept no journal to read it "
      + "from); give --out a writable folder to keep it";
  }
  if (!run.steps_seen) {
    const unsupported = meta.unsupported_torch;
    if (unsupported) {
      const where = unsupported.where ? ` at ${unsupported.where}` : "";
      return `nothing checked: the script stopped${where}, before its first backward call, `
        + `at ${unsupported.name}, which genesis does not serve yet`;
    }
    if (run.script_error) {
      return "nothing checked: the script raised before its first backward call "
        + "(its traceback is under Run)";
    }
    if (meta.real_torch) {
      return "nothing checked: the script built its graphs with PyTorch itself (it imported torch), "
        + `so genesis saw no backward call. Run it on genesis with \`genesis trace --torch ${run.script}\`.`;
    }
    if (meta.finished === false) {
      return "nothing checked: the script made no backward call before it ended";
    }
    return "nothing checked: the script made no backward call";
  }
  if (meta.finished === false) {
    return "nothing found in what was captured; the run did not finish, so the gradient checks did not run";
  }
  return "nothing found";
}

// Parameters with a problem (no gradient, exploding, ...) first, those not trained last,
// otherwise in the trace's order.
function renderParameters(viewer, table, counter) {
  const rank = (row) => (BAD_STATUS.has(row.status) ? 0 : Object.hasOwn(INFO_TITLES, row.status) ? 2 : 1);
  const rows = viewer.data.parameters.map((row, index) => [rank(row), index, row])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , row]) => row);
  counter.textContent = `(${formatCount(rows.length)})`;
  if (!rows.length) {
    table.replaceChildren(el("tr", null, el("td", { className: "empty" }, "no parameters recorded")));
    return;
  }
  const rowOf = (row) => el("tr", {
    dataset: { parameter: row.name }, title: "show in the graph",
    onclick: () => viewer.jumpToLeaf(row.name),
  }, el("td", null,
    el("div", { className: "param-name" }, row.name),
    el("div", {
      className: "param-status" + (BAD_STATUS.has(row.status) ? " bad" : Object.hasOwn(INFO_TITLES, row.status) ? " info" : ""),
      title: INFO_TITLES[row.status] || null,
    }, [row.shape ? formatShape(row.shape) : null, row.status].filter(Boolean).join(" · "))),
  el("td", null, sparkline(row.history, row.steps)),
  el("td", { className: "num", title: stepTitle(row) }, formatNumber(row.grad_norm),
    stepOf(row) === null ? null : el("div", { className: "param-status" }, `step ${stepOf(row)}`)));
  table.replaceChildren(...rows.slice(0, PARAMETER_ROWS).map(rowOf));
  if (rows.length > PARAMETER_ROWS) {
    const showAll = () => {
      more.remove();
      table.append(...rows.slice(PARAMETER_ROWS).map(rowOf));
    };
    const more = el("tr", null, el("td", { colspan: 3 }, linkButton(`show all ${formatCount(rows.length)}`, showAll)));
    table.append(more);
  }
}

// The step (backward call, from 0) a row's latest gradient norm is from; null when it has none.
// Rows from before steps were numbered count their history from 0.
function stepOf(row) {
  if (row.grad_norm === null || row.grad_norm === undefined) return null;
  if (row.grad_norm_step !== undefined) return row.grad_norm_step;
  const steps = row.steps || row.history.map((_, index) => index);
  for (let index = row.history.length - 1; index >= 0; index -= 1) {
    if (row.history[index] !== null) return steps[index];
  }
  return null;
}

function stepTitle(row) {
  const step = stepOf(row);
  return step === null ? "no gradient at any recorded step"
    : `gradient norm at step ${step} (backward call ${step + 1}), the latest that reached it`;
}

// `steps[i]`: the step (backward call, from 0) of `history[i]`; counted from 0 when not given.
function historyBlock(history, steps) {
  const numbers = steps || history.map((_, index) => index);
  const known = history.filter((value) => typeof value === "number");
  const last = history.length - 1;
  return el("div", null, sparkline(history, numbers, 300, 48),
    el("div", { className: "finding-where" }, counted(history.length, "step") + (known.length
      ? `; min ${formatNumber(lowest(known))}, max ${formatNumber(highest(known))}, `
        + `at step ${numbers[last]}: ${formatNumber(history[last])}`
      : "; never received a gradient")));
}

// A gradient-norm history as a tiny line (log scale when it spans orders of magnitude);
// gaps where a step had no gradient.
function sparkline(history, steps, width = 90, height = 22) {
  const values = (history || []).map((value) => (Number.isFinite(value) ? value : null));
  const known = values.filter((value) => value !== null);
  const svg = svgEl("svg", { class: "sparkline", width, height, viewBox: `0 0 ${width} ${height}`,
    role: "img" });
  if (!known.length) {
    svg.append(svgEl("title", null, "no gradient at any recorded step"));
    return svg;
  }
  const low = lowest(known);
  const high = highest(known);
  const log = low > 0 && high / low > 50;
  const scale = (value) => (log ? Math.log10(value) : value);
  const span = scale(high) - scale(low) || 1;
  const pad = 3;
  const innerWidth = width - 2 * pad;
  const innerHeight = height - 2 * pad;
  const x = (index) => pad + (values.length === 1 ? innerWidth / 2 : index * innerWidth / (values.length - 1));
  const y = (value) => (high === low ? height / 2 : height - pad - (scale(value) - scale(low)) / span * innerHeight);
  let run = [];
  const flush = () => {
    if (run.length > 1) svg.append(svgEl("polyline", { points: run.join(" ") }));
    run = [];
  };
  values.forEach((value, index) => {
    if (value === null) flush();
    else run.push(`${x(index).toFixed(1)},${y(value).toFixed(1)}`);
  });
  flush();
  const last = values.length - 1;
  if (values[last] !== null) {
    svg.append(svgEl("circle", { cx: x(last).toFixed(1), cy: y(values[last]).toFixed(1), r: 2 }));
  }
  const numbers = steps || values.map((_, index) => index);
  svg.append(svgEl("title", null, `gradient norm over ${counted(values.length, "step")} (${numbers[0]} to `
    + `${numbers[last]}): min ${formatNumber(low)}, max ${formatNumber(high)}`
    + (log ? " (log scale)" : "")));
  return svg;
}

function lowest(values) {
  return values.reduce((a, b) => (b < a ? b : a));
}

function highest(values) {
  return values.reduce((a, b) => (b > a ? b : a));
}

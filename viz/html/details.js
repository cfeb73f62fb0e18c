// The side panel: everything captured for the selected node, folded item or finding.
const LIST_LIMIT = 60;   // rows of inputs / consumers / members shown before "… N more"
const VALUE_STATS = [["min", "min"], ["max", "max"], ["mean", "mean"], ["abs_mean", "mean |x|"],
  ["nan", "NaN"], ["inf", "Inf"]];
const GRAD_STATS = [["norm", "norm"], ["max_abs", "max |g|"], ["nan", "NaN"], ["inf", "Inf"],
  ["zero_fraction", "zeros"]];
const GROUP_KINDS = { module: "folded module", repeat: "repeated blocks", chain: "compressed run of ops" };

class Details {
  constructor(viewer, panel, body, closeButton) {
    this.viewer = viewer;
    this.panel = panel;
    this.body = body;
    this.closeButton = closeButton;
    closeButton.addEventListener("click", () => viewer.clearSelection());
  }

  show(parts) {
    this.closeButton.hidden = false;
    this.body.replaceChildren(...parts.filter(Boolean));
    this.panel.scrollTop = 0;
  }

  // Nothing selected: say how to use the page.
  help() {
    this.closeButton.hidden = true;
    this.body.replaceChildren(el("h3", { id: "details-title" }, "Nothing selected"),
      el("p", { className: "empty" }, "Click a node to see its op, module, source line, shapes, value and "
        + "gradient statistics and findings; click a finding or a parameter to find it in the graph."),
      el("h4", null, "Keys"),
      kvTable([["drag, wheel", "pan, zoom"], ["+  -", "zoom in, out"], ["0  f", "fit to screen"],
        ["arrows", "pan"], ["/", "search"], ["Esc", "clear search and selection"]]));
  }

  // -- one graph node --------------------------------------------------------------
  node(graphIndex, id, activeFinding) {
    const graph = this.viewer.graphs[graphIndex];
    const data = this.viewer.graphData(graphIndex);
    const node = data.nodes[id];
    const links = data.linksOf();
    const source = data.sourceOf(node);
    const origin = node.user_defined ? "user-defined" : "built-in";
    const parts = [
      el("h3", { id: "details-title" }, node.name),
      el("div", null, el("span", { className: "badge kind" }, node.kind),
        node.user_defined ? el("span", { className: "badge user" }, "user-defined Function") : null),
      kvTable([
        ["Function", node.function ? `${node.function} (${origin})` : null],
        ["Module", moduleText(graph, node.module)],
        ["Source", source ? sourceText(source) + (source.function ? ` in ${source.function}` : "") : null],
        ["Device", data.deviceOf(node)],
        ["Node", `#${node.id} of graph ${graphIndex + 1}`],
      ]),
      source && source.code ? el("pre", { className: "code" }, source.code) : null,
      ...this.findingsOf(graphIndex, [id], activeFinding),
      node.findings && node.findings.length ? kvTable([["Tags", node.findings.join(", ")]]) : null,
      ...outputTables(node, data.outputsOf(node)),
    ];
    const incoming = links.incoming.get(id) || [];
    const inputs = incoming.filter((edge) => data.nodes[edge.src].kind !== "saved");
    const saved = incoming.filter((edge) => data.nodes[edge.src].kind === "saved");
    const consumers = links.outgoing.get(id) || [];
    if (inputs.length) {
      parts.push(el("h4", null, "Inputs"),
        this.edgeTable(graphIndex, inputs, (edge) => edge.src, (edge) => `input ${edge.index}`));
    }
    if (saved.length) {
      const rows = saved.map((edge) => {
        const info = data.nodes[edge.src].outputs[0];
        return el("tr", null, el("th", null, `saved ${edge.index}`),
          el("td", null, info ? `${formatShape(info[0])} ${info[1]}` : "?"));
      });
      parts.push(el("h4", null, "Saved for backward"), el("table", { className: "entries" }, rows));
    }
    if (consumers.length) {
      parts.push(el("h4", null, node.kind === "saved" ? "Saved by" : "Used by"),
        this.edgeTable(graphIndex, consumers, (edge) => edge.dst, (edge) => `as input ${edge.index}`));
    }
    // the run's parameter table follows every step; the graph only the steps with its structure
    const row = this.viewer.parameterRows.get(node.name);
    const history = row ? row.history : graph.grad_norms[node.name];
    if ((node.kind === "param" || node.kind === "input") && history && history.length) {
      parts.push(el("h4", null, "Gradient norm per step"), historyBlock(history, row ? row.steps : graph.steps));
    }
    this.show(parts);
  }

  // Rows "slot | the node at the other end (a link) | shape and dtype of the tensor on the edge".
  edgeTable(graphIndex, edges, otherEnd, slot) {
    const nodes = this.viewer.graphData(graphIndex).nodes;
    const rows = edges.slice(0, LIST_LIMIT).map((edge) => {
      const id = otherEnd(edge);
      const produced = nodes[edge.src].outputs[edge.outputNr];
      const tensor = `${formatShape(edge.shape)} ${produced ? produced[1] : ""}`.trim();
      return el("tr", null, el("th", null, slot(edge)),
        el("td", null, linkButton(nodes[id].name, () => this.viewer.jumpToNode(graphIndex, id),
          `go to node #${id}`)),
        el("td", { className: "shape" }, tensor));
    });
    if (edges.length > LIST_LIMIT) {
      rows.push(el("tr", null, el("td", { colspan: 3, className: "empty" },
        `… ${formatCount(edges.length - LIST_LIMIT)} more`)));
    }
    return el("table", { className: "entries" }, rows);
  }

  // -- a folded module, repeated blocks or a compressed run ---------------------
  group(graphIndex, key, group) {
    const graph = this.viewer.graphs[graphIndex];
    const nodes = this.viewer.graphData(graphIndex).nodes;
    const members = group.members.map((id) => nodes[id]);
    const count = (kind) => members.filter((node) => node.kind === kind).length;
    const countText = (kind) => (count(kind) ? formatCount(count(kind)) : null);
    const chain = group.kind === "chain";
    const list = members.slice(0, LIST_LIMIT).map((node) => el("li", null,
      linkButton(node.name, () => this.viewer.jumpToNode(graphIndex, node.id), "show this node"),
      " ", el("span", { className: "finding-where" }, node.kind)));
    if (members.length > LIST_LIMIT) {
      list.push(el("li", { className: "empty" },
        `… ${formatCount(members.length - LIST_LIMIT)} more (search finds them)`));
    }
    this.show([
      el("h3", { id: "details-title" }, chain ? `run of ${counted(count("op"), "op")}` : group.title),
      el("div", null, el("span", { className: "badge kind" }, GROUP_KINDS[group.kind] || group.kind)),
      kvTable([
        ["Module", chain ? null : moduleText(graph, group.title.split(" … ")[0])],
        ["Ops", formatCount(count("op"))],
        ["Parameters", countText("param")],
        ["Inputs", countText("input")],
        ["Saved tensors", countText("saved")],
      ]),
      el("div", null, linkButton("expand: show these nodes one by one",
        () => this.viewer.expand(graphIndex, group), "switch to a drawing that folds less")),
      ...this.findingsOf(graphIndex, group.members, null),
      el("h4", null, `Nodes inside (${formatCount(members.length)})`),
      el("ul", { className: "member-list" }, list),
    ]);
  }

  // -- findings ------------------------------------------------------------------
  findingsOf(graphIndex, ids, activeFinding) {
    const wanted = new Set(ids);
    const boxes = [];
    this.viewer.data.findings.forEach((finding, index) => {
      if (finding.graph === graphIndex && wanted.has(finding.node)) {
        boxes.push(findingBox(this.viewer, finding, index, index === activeFinding));
      }
    });
    return boxes.length ? [el("h4", null, "Findings"), ...boxes] : [];
  }

  finding(index) {
    const finding = this.viewer.data.findings[index];
    this.show([el("h3", { id: "details-title" }, finding.title), findingBox(this.viewer, finding, index, true)]);
  }
}

// "encoder.0 (Linear)"; the top module is "(top module)"; null for nodes outside modules.
function moduleText(graph, path) {
  if (path === undefined || path === null) return null;
  const className = graph.modules[path];
  return (path === "" ? "(top module)" : path) + (className ? ` (${className})` : "");
}

// Finding `index` of the run. Its knock-on effects (`details.knock_on`, also the tail of its
// message, for the console) are shown once, as a list with links, not in the message above it:
// a list reads better than indented lines in a monospace block, and only the list can link.
function findingBox(viewer, finding, index, active) {
  const where = [finding.op,
    finding.function && finding.function !== finding.op ? `Function ${finding.function}` : null,
    finding.module ? `module ${finding.module}` : null, finding.source].filter(Boolean).join(" · ");
  const details = finding.details || {};
  const knockOn = knockOnLines(details);
  const message = knockOn.length ? withoutKnockOn(finding.message || "", knockOn) : finding.message;
  return el("div", { className: `finding-box ${finding.severity}${active ? " active" : ""}` },
    el("div", null, el("span", { className: `badge ${finding.severity}` }, finding.severity),
      el("strong", null, finding.title)),
    message ? el(message.includes("\n") ? "pre" : "p", { className: "message" }, message) : null,
    knockOn.length ? knockOnBlock(viewer, index, knockOn, details.starved) : null,
    where ? el("div", { className: "finding-where" }, where) : null,
    finding.code ? el("pre", { className: "code" }, finding.code) : null,
    detailsBlock(details, knockOn.length ? ["knock_on", "starved"] : []));
}

// Kind-specific details (but the keys in `shown`, drawn elsewhere): lists of records (e.g. a
// gradient check's worst entries) as tables, everything else as key/value rows.
function detailsBlock(details, shown = []) {
  const rows = [];
  const tables = [];
  for (const [key, value] of Object.entries(details)) {
    if (shown.includes(key)) continue;
    const title = key.replace(/_/g, " ");
    const isRecordList = Array.isArray(value) && value.length > 0
      && value.every((item) => item !== null && typeof item === "object" && !Array.isArray(item));
    if (isRecordList) tables.push(el("h4", null, title), recordTable(value));
    else rows.push([title, formatPrecise(value)]);
  }
  return el("div", { className: "finding-details" }, rows.length ? kvTable(rows) : null, tables);
}

// -- what followed from a finding (genesis.debug.findings.add_knock_on) ----------------
const KNOCK_ON_HEADING = "\nWhat followed from it (not reported separately):";

function knockOnLines(details) {
  return Array.isArray(details.knock_on) ? details.knock_on.filter((line) => typeof line === "string") : [];
}

// The message without the heading and lines add_knock_on appended to it (the last of each).
function withoutKnockOn(message, lines) {
  let text = removeLast(message, KNOCK_ON_HEADING);
  for (const line of lines) text = removeLast(text, `\n  ${line}`);
  return text;
}

function removeLast(text, part) {
  const at = text.lastIndexOf(part);
  return at < 0 ? text : text.slice(0, at) + text.slice(at + part.length);
}

// One item a line. The parameters the finding starved (`details.starved`, from
// genesis.debug.starved_params) are links that show them, as their rows under Parameters do;
// "at step N" is a link to that step on the Training charts where the run has them. Anything
// else, and every line of a trace from before `starved`, is text.
function knockOnBlock(viewer, index, lines, starved) {
  const names = Array.isArray(starved) ? starved.filter((name) => typeof name === "string" && name) : [];
  const pattern = knockOnPattern(names);
  return el("div", { className: "knock-on" },
    el("h4", null, "What followed from it ", el("span", { className: "finding-where" }, "(not reported separately)")),
    el("ul", { className: "knock-on-list" }, lines.map((line) => el("li", null, linkedLine(viewer, index, line, pattern)))));
}

// A name where it stands alone (not part of a longer name: "0.weight" is not in "10.weight"
// nor in "0.weight_g"), longest first; or "at step N".
function knockOnPattern(names) {
  const escape = (name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const alternatives = [...new Set(names)].sort((a, b) => b.length - a.length).map(escape);
  const name = alternatives.length ? `(?<![\\w.])(?<name>${alternatives.join("|")})(?!\\w|\\.\\w)|` : "";
  return new RegExp(`${name}\\bat (?<stepText>step (?<step>\\d+))\\b`, "g");
}

function linkedLine(viewer, index, line, pattern) {
  const parts = [];
  let at = 0;
  for (const match of line.matchAll(pattern)) {
    const { name, stepText } = match.groups;
    const step = Number(match.groups.step);
    let link = null;
    if (name !== undefined) {
      link = linkButton(name, () => viewer.jumpToLeaf(name), "show this parameter (as its row under Parameters does)");
    } else if (viewer.training.hasStep(step)) {
      link = linkButton(stepText, () => viewer.training.focusStep(step, index),
        `show step ${step} (backward call ${step + 1}) on the Training charts`);
    }
    if (!link) continue;
    const end = match.index + match[0].length;
    parts.push(line.slice(at, end - link.textContent.length), link);
    at = end;
  }
  parts.push(line.slice(at));
  return parts;
}

function recordTable(records) {
  const columns = [...new Set(records.flatMap((record) => Object.keys(record)))];
  const cell = (value) => el("td", { className: typeof value === "number" ? "num" : null }, formatPrecise(value));
  return el("table", { className: "entries" },
    el("tr", null, columns.map((key) => el("th", null, key.replace(/_/g, " ")))),
    records.map((record) => el("tr", null, columns.map((key) => cell(record[key])))));
}

// Each output's shape and dtype, then tables of value and gradient statistics.
function outputTables(node, outputs) {
  if (!outputs.length) return [];
  const several = outputs.length > 1;
  const label = (output) => (several || node.kind === "op" ? `output ${output.index}` : "tensor");
  const parts = [el("h4", null, node.kind === "op" ? "Outputs" : "Tensor"),
    el("table", { className: "entries" }, outputs.map((output) => el("tr", null, el("th", null, label(output)),
      el("td", { className: "shape" }, `${formatShape(output.shape)} ${output.dtype}`))))];
  for (const [title, field, columns] of [["Values", "stats", VALUE_STATS], ["Gradient", "grad", GRAD_STATS]]) {
    const rows = outputs.filter((output) => output[field]);
    parts.push(el("h4", null, title));
    if (!rows.length) {
      parts.push(el("div", { className: "empty" }, field === "grad" ? "no gradient recorded" : "not recorded"));
      continue;
    }
    const bad = (key, value) => (key === "nan" || key === "inf") && value > 0;
    const cell = (key, value) => el("td", { className: bad(key, value) ? "num bad" : "num" }, statText(key, value));
    parts.push(el("table", { className: "entries" },
      el("tr", null, several ? el("th") : null, columns.map(([, name]) => el("th", { className: "num" }, name))),
      rows.map((output) => el("tr", null, several ? el("th", null, label(output)) : null,
        columns.map(([key]) => cell(key, output[field][key]))))));
  }
  return parts;
}

function statText(key, value) {
  if (key === "zero_fraction" && typeof value === "number") {
    return `${(100 * value).toFixed(value > 0 && value < 0.01 ? 2 : 0)}%`;
  }
  return key === "nan" || key === "inf" ? String(value) : formatNumber(value);
}

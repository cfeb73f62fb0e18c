// The viewer: reads the page's JSON data, shows one drawing at a time, and ties the
// drawing, the side panel, the findings, the parameters and the search together.
// `graphs[i]` is what the page opens with (counts, modules, views); the nodes and edges
// are read from the page when first needed (`graphData(i)`).
// When the first drawing is on screen, <body data-viewer="ready" data-ready-ms="...">.
const READABLE_SCALE = 0.4;  // below this, a fitted drawing's labels are too small to read

class Viewer {
  constructor(data) {
    this.data = data;
    this.graphs = data.graphs;
    this.drawings = this.graphs.map((graph, graphIndex) =>
      graph.views.map((view, viewIndex) => new Drawing(graphIndex, viewIndex, view)));
    this.viewIndex = this.graphs.map((graph) => graph.default_view);
    this.graphIndex = 0;
    this.saved = false;
    this.current = null;
    this.selection = null;     // { graph, node } or { graph, key }
    this.highlighted = [];
    this.loaded = new Map();   // graph index -> GraphData, parsed on first use
    this.parameterRows = new Map(data.parameters.map((row) => [row.name, row]));
    this.$ = (id) => document.getElementById(id);
    this.canvas = this.$("canvas");
    this.panZoom = new PanZoom(this.canvas, (target) => this.tap(target));
    this.details = new Details(this, this.$("details"), this.$("details-body"), this.$("details-close"));
    this.search = new Search(this, this.$("search-input"), this.$("search-results"));
    this.training = new TrainingView(this);
  }

  start() {
    document.title = this.data.title;
    this.$("page-title").textContent = this.data.title;
    renderRun(this.data, this.$("run-summary"));
    renderFindings(this, this.$("findings-list"), this.$("findings-count"));
    renderParameters(this, this.$("parameters-table"), this.$("parameters-count"));
    this.wireControls();
    this.details.help();
    this.training.start();
    if (this.graphs.length) {
      this.showGraph(0);
    } else {
      for (const id of ["view-select", "saved-toggle", "search-input", "zoom-in", "zoom-out", "zoom-fit"]) {
        this.$(id).disabled = true;
      }
      this.canvas.replaceChildren(el("p", { className: "no-graph" }, "No graph was recorded: the script made "
        + "no backward call that genesis could capture (see Run and Findings)."));
      this.$("status").textContent = "";
    }
  }

  wireControls() {
    const graphSelect = this.$("graph-select");
    if (this.graphs.length > 1) {
      this.$("graph-control").hidden = false;
      graphSelect.replaceChildren(...this.graphs.map((graph, index) => {
        const steps = graph.steps.length ? `, ${counted(graph.steps.length, "recorded step")}` : "";
        return el("option", { value: index },
          `${index + 1} of ${this.graphs.length}: ${counted(graph.ops, "op")}${steps}`);
      }));
      graphSelect.addEventListener("change", () => {
        this.clearSelection();
        this.showGraph(Number(graphSelect.value));
      });
    }
    this.$("view-select").addEventListener("change", (event) => this.showView(Number(event.target.value)));
    this.$("saved-toggle").addEventListener("change", (event) => this.setSaved(event.target.checked));
    this.$("zoom-in").addEventListener("click", () => this.panZoom.zoomBy(1.25));
    this.$("zoom-out").addEventListener("click", () => this.panZoom.zoomBy(0.8));
    this.$("zoom-fit").addEventListener("click", () => this.panZoom.fit());
    document.addEventListener("keydown", (event) => this.key(event));
    window.addEventListener("resize", () => this.panZoom.relabel());
  }

  key(event) {
    const typing = event.target.closest && event.target.closest("input, select, textarea");
    if (event.key === "Escape") {
      this.search.clear();
      this.clearSelection();
      if (this.training.active) this.training.clearFocus();
      if (typing) event.target.blur();
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || event.altKey || this.training.active) return;
    const pan = 80;
    const actions = {
      "+": () => this.panZoom.zoomBy(1.25), "=": () => this.panZoom.zoomBy(1.25),
      "-": () => this.panZoom.zoomBy(0.8), "_": () => this.panZoom.zoomBy(0.8),
      "0": () => this.panZoom.fit(), "f": () => this.panZoom.fit(), "F": () => this.panZoom.fit(),
      "/": () => this.search.focus(),
      "ArrowLeft": () => this.panZoom.panBy(pan, 0), "ArrowRight": () => this.panZoom.panBy(-pan, 0),
      "ArrowUp": () => this.panZoom.panBy(0, pan), "ArrowDown": () => this.panZoom.panBy(0, -pan),
    };
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  }

  // -- graphs and drawings -----------------------------------------------------------
  showGraph(graphIndex) {
    this.graphIndex = graphIndex;
    this.$("graph-select").value = String(graphIndex);
    const hasSaved = this.graphs[graphIndex].views.some((view) => view.saved);
    const toggle = this.$("saved-toggle");
    toggle.disabled = !hasSaved;
    toggle.title = hasSaved ? "draw the tensors ops saved for backward" : "this graph has no saved tensors";
    if (!hasSaved) this.saved = false;
    toggle.checked = this.saved;
    this.search.close();
    this.showView(this.viewIndex[graphIndex]);
  }

  showView(viewIndex) {
    const graph = this.graphs[this.graphIndex];
    if (this.current) this.current.transform = this.panZoom.transform;
    const drawing = this.drawings[this.graphIndex][viewIndex];
    this.viewIndex[this.graphIndex] = viewIndex;
    this.saved = drawing.view.saved;
    this.$("saved-toggle").checked = this.saved;
    const select = this.$("view-select");
    const options = graph.views.map((view, index) => (view.saved === this.saved
      ? el("option", { value: index }, `${view.label} (${formatCount(view.items)} drawn)`) : null));
    select.replaceChildren(...options.filter(Boolean));
    select.value = String(viewIndex);
    this.clearHighlight();
    const svg = drawing.load();
    this.canvas.replaceChildren(svg);
    this.current = drawing;
    this.panZoom.attach(svg, drawing.labels, drawing.transform);
    if (!drawing.transform && this.panZoom.k < READABLE_SCALE) this.startAtOutput(graph, drawing);
    this.panZoom.relabel();
    this.$("view-notes").textContent = drawing.view.notes.join(" · ");
    this.$("status").textContent = counted(drawing.view.items, "drawn item");
    if (this.selection && this.selection.graph === this.graphIndex && this.selection.node !== undefined) {
      this.highlight(drawing.keysOfNode(this.selection.node));
    }
  }

  // A drawing too big to read when fitted opens at a readable zoom on the (first) output,
  // where a backward starts; "fit" still shows all of it.
  startAtOutput(graph, drawing) {
    const keys = graph.outputs.length ? drawing.keysOfNode(graph.outputs[0]) : [];
    const element = keys.length ? drawing.elementsOf(keys[0])[0] : null;
    if (element) this.panZoom.centerOn(element, READABLE_SCALE * 2, false, 0.8);
  }

  setSaved(saved) {
    const graph = this.graphs[this.graphIndex];
    const depth = graph.views[this.viewIndex[this.graphIndex]].depth;
    const candidates = graph.views.map((view, index) => [view, index])
      .filter(([view]) => view.saved === saved);
    if (!candidates.length) return;
    const same = candidates.find(([view]) => view.depth === depth);
    this.showView((same || candidates[candidates.length - 1])[1]);
  }

  // The drawing to show node `id` in: the current one if it draws it as its own item, else the
  // smallest drawing that does (with saved tensors only when the current one has them or the
  // node is one), else the current one (which then shows the folded item holding it).
  drawingFor(graphIndex, id) {
    const drawings = this.drawings[graphIndex];
    const current = drawings[this.viewIndex[graphIndex]];
    if (current.drawsAlone(id)) return current;
    const saved = this.saved || this.graphData(graphIndex).nodes[id].kind === "saved";
    const showing = drawings.filter((drawing) => drawing.view.saved === saved && drawing.drawsAlone(id));
    if (!showing.length) return current;
    return showing.reduce((best, drawing) => (drawing.view.items < best.view.items ? drawing : best));
  }

  // -- selection -------------------------------------------------------------------
  tap(target) {
    const item = target.closest ? target.closest("g.node") : null;
    if (!item || !this.canvas.contains(item)) {
      this.clearSelection();  // a click on the background
      return;
    }
    const key = item.getAttribute("data-key");
    const ids = this.current.idsOfKey(key);
    if (!ids.length) return;  // the legend
    const group = this.current.view.groups[key];
    if (group) {
      this.selection = { graph: this.graphIndex, key };
      this.highlight([key]);
      this.details.group(this.graphIndex, key, group);
    } else {
      this.selection = { graph: this.graphIndex, node: ids[0] };
      this.highlight(this.current.keysOfNode(ids[0]));
      this.details.node(this.graphIndex, ids[0], null);
    }
  }

  jumpToNode(graphIndex, id, activeFinding = null) {
    this.training.show(false);
    if (graphIndex !== this.graphIndex) this.showGraph(graphIndex);
    const drawing = this.drawingFor(graphIndex, id);
    if (drawing !== this.current) this.showView(drawing.index);
    this.selection = { graph: graphIndex, node: id };
    const keys = this.current.keysOfNode(id);
    this.highlight(keys);
    const first = keys.length ? this.current.elementsOf(keys[0])[0] : null;
    if (first) {
      this.panZoom.centerOn(first);
      first.classList.remove("flash");
      first.getBoundingClientRect();  // restart the animation
      first.classList.add("flash");
    }
    this.details.node(graphIndex, id, activeFinding);
  }

  // Show the nodes a folded item stands for, each as its own item, and highlight them.
  expand(graphIndex, group) {
    const nodes = this.graphData(graphIndex).nodes;
    const anchor = group.members.find((id) => nodes[id].kind === "op") ?? group.members[0];
    const drawing = this.drawingFor(graphIndex, anchor);
    if (drawing !== this.current) this.showView(drawing.index);
    const keys = [...new Set(group.members.flatMap((id) => this.current.keysOfNode(id)))];
    this.selection = { graph: graphIndex, node: anchor };
    this.highlight(keys);
    const first = this.current.elementsOf(this.current.keysOfNode(anchor)[0])[0];
    if (first) this.panZoom.centerOn(first);
    this.details.node(graphIndex, anchor, null);
  }

  jumpToLeaf(name) {
    if (this.training.active) {
      this.training.focusParameter(name);
      return;
    }
    for (const graphIndex of [this.graphIndex, ...this.graphs.keys()]) {
      const node = this.graphData(graphIndex).nodes.find((candidate) => candidate.name === name
        && (candidate.kind === "param" || candidate.kind === "input"));
      if (node) {
        this.jumpToNode(graphIndex, node.id);
        return;
      }
    }
  }

  openFinding(index) {
    if (this.training.active && this.training.owns(index)) {
      this.training.focusFinding(index);
      return;
    }
    this.training.show(false);
    const finding = this.data.findings[index];
    for (const item of this.$("findings-list").children) {
      item.classList.toggle("active", item.dataset.finding === String(index));
    }
    const graph = this.graphs[finding.graph];
    if (graph && finding.node !== null && finding.node < graph.node_count) {
      this.jumpToNode(finding.graph, finding.node, index);
    } else {
      this.clearHighlight();
      this.details.finding(index);
    }
  }

  highlight(keys) {
    this.clearHighlight();
    const marked = [];
    for (const key of keys) {
      for (const element of this.current.elementsOf(key)) {
        element.classList.add("selected");
        marked.push(element);
      }
      for (const { edge, other } of this.current.linksOf(key)) {
        edge.classList.add("linked");
        marked.push(edge);
        for (const element of this.current.elementsOf(other)) {
          element.classList.add("neighbour");
          marked.push(element);
        }
      }
    }
    this.highlighted = marked;
  }

  clearHighlight() {
    for (const element of this.highlighted) {
      element.classList.remove("selected", "neighbour", "linked", "flash");
    }
    this.highlighted = [];
  }

  clearSelection() {
    this.selection = null;
    this.clearHighlight();
    this.details.help();
    for (const item of this.$("findings-list").children) item.classList.remove("active");
  }

  // The nodes, edges and source lines of graph `graphIndex`, parsed on first use.
  graphData(graphIndex) {
    let data = this.loaded.get(graphIndex);
    if (!data) {
      data = new GraphData(`graph-${graphIndex}`);
      this.loaded.set(graphIndex, data);
    }
    return data;
  }
}

function startViewer() {
  const status = document.getElementById("status");
  try {
    const data = JSON.parse(document.getElementById("genesis-data").textContent);
    const viewer = new Viewer(data);
    viewer.start();
    requestAnimationFrame(() => requestAnimationFrame(() => {
      document.body.dataset.readyMs = String(Math.round(performance.now()));
      document.body.dataset.viewer = "ready";
    }));
  } catch (error) {
    status.textContent = `the viewer failed: ${error.message}`;
    throw error;
  }
}

startViewer();

// The search box: nodes of the current graph by op or Function name, parameter name,
// module path or source file:line. Every word typed must appear; exact names rank first.
const SEARCH_LIMIT = 50;

class Search {
  constructor(viewer, input, list) {
    this.viewer = viewer;
    this.input = input;
    this.list = list;
    this.indexes = new Map();  // graph index -> [{ id, name, text }]
    this.hits = [];
    this.active = 0;
    input.addEventListener("input", () => this.run());
    input.addEventListener("focus", () => { if (input.value.trim()) this.run(); });
    input.addEventListener("keydown", (event) => this.key(event));
    input.addEventListener("blur", () => setTimeout(() => { list.hidden = true; }, 150));
  }

  index(graphIndex) {
    let entries = this.indexes.get(graphIndex);
    if (!entries) {
      const data = this.viewer.graphData(graphIndex);
      entries = data.nodes.map((node) => {
        const source = data.sourceOf(node);
        const fields = [node.name, node.function, node.module, node.kind];
        if (source) {
          fields.push(`${source.file}:${source.line}`, `${basename(source.file)}:${source.line}`, source.function);
        }
        const text = fields.filter(Boolean).join("\n").toLowerCase();
        return { id: node.id, name: node.name.toLowerCase(), text };
      });
      this.indexes.set(graphIndex, entries);
    }
    return entries;
  }

  run() {
    const words = this.input.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) {
      this.close();
      return;
    }
    const graphIndex = this.viewer.graphIndex;
    const query = words.join(" ");
    const scored = [];
    for (const entry of this.index(graphIndex)) {
      if (!words.every((word) => entry.text.includes(word))) continue;
      scored.push([rankOf(entry.name, query), entry.id]);
    }
    scored.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    this.hits = scored.map(([, id]) => id);
    this.active = 0;
    this.render(graphIndex);
  }

  render(graphIndex) {
    const data = this.viewer.graphData(graphIndex);
    const shown = this.hits.slice(0, SEARCH_LIMIT);
    const items = shown.map((id, position) => {
      const node = data.nodes[id];
      const source = data.sourceOf(node);
      const line = source ? `${basename(source.file)}:${source.line}` : null;
      const where = [node.kind, node.module, line].filter(Boolean).join(" · ");
      return el("li", {
        className: position === this.active ? "active" : null, dataset: { node: String(id) },
        onmousedown: (event) => { event.preventDefault(); this.choose(position); },
      }, el("strong", null, node.name), " ", el("span", { className: "finding-where" }, where));
    });
    const total = this.hits.length;
    const summary = total === 0 ? "no node matches"
      : `${formatCount(total)} match${total === 1 ? "" : "es"}`
        + (total > SEARCH_LIMIT ? `, first ${SEARCH_LIMIT} shown` : "") + " — Enter jumps";
    items.unshift(el("li", { className: "summary" }, summary));
    this.list.replaceChildren(...items);
    this.list.hidden = false;
  }

  key(event) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const count = Math.min(this.hits.length, SEARCH_LIMIT);
      if (!count) return;
      this.active = (this.active + (event.key === "ArrowDown" ? 1 : count - 1)) % count;
      this.render(this.viewer.graphIndex);
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (this.hits.length) this.choose(this.active);
    }
  }

  choose(position) {
    const id = this.hits[position];
    this.active = position;
    this.list.hidden = true;
    this.viewer.jumpToNode(this.viewer.graphIndex, id);
  }

  focus() {
    this.input.focus();
    this.input.select();
  }

  close() {
    this.hits = [];
    this.list.hidden = true;
    this.list.replaceChildren();
  }

  clear() {
    this.input.value = "";
    this.close();
  }
}

// Exact name first, then names starting with the query, then names containing it, then the rest.
function rankOf(name, query) {
  if (name === query) return 0;
  if (name.startsWith(query)) return 1;
  return name.includes(query) ? 2 : 3;
}

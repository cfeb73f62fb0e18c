// One pre-rendered drawing of a graph: its SVG (parsed on first use from its JSON block)
// and the maps between drawn items (data-key) and graph node ids.
const PLAIN_KEY = /^n(\d+)(?:u\d+)?$/;
const UNSAFE_SVG = "script, foreignObject, a, image, use, iframe, style, animate, set";

class Drawing {
  constructor(graphIndex, viewIndex, view) {
    this.blockId = `svg-${graphIndex}-${viewIndex}`;
    this.index = viewIndex;
    this.view = view;
    this.plainIds = null;   // ids drawn as their own item, and id -> key of the folded item
    this.groupOf = null;    // holding it: built on first use (a run may hold 100,000 ids)
    this.svg = null;
    this.labels = null;
    this.links = null;
    this.transform = null;
  }

  load() {
    if (this.svg) return this.svg;
    const text = JSON.parse(document.getElementById(this.blockId).textContent);
    const parsed = new DOMParser().parseFromString(text, "image/svg+xml");
    const root = parsed.documentElement;
    if (root.namespaceURI !== SVG_NS || root.localName !== "svg" || parsed.querySelector("parsererror")) {
      throw new Error(`drawing ${this.blockId} is not valid SVG`);
    }
    for (const unsafe of root.querySelectorAll(UNSAFE_SVG)) unsafe.remove();  // svg_clean whitelisted already
    this.svg = document.adoptNode(root);
    this.labels = this.view.items >= LAZY_LABEL_ITEMS ? new LazyLabels(this.svg) : null;
    this.elements = new Map();   // key -> [g.node]; a shared leaf has one element per use
    this.plainKeys = new Map();  // node id -> its keys
    for (const node of this.svg.querySelectorAll("g.node")) {
      const key = node.getAttribute("data-key");
      const list = this.elements.get(key);
      if (list) list.push(node);
      else this.elements.set(key, [node]);
      const match = PLAIN_KEY.exec(key);
      if (match) {
        const id = Number(match[1]);
        const keys = this.plainKeys.get(id);
        if (keys) keys.push(key);
        else this.plainKeys.set(id, [key]);
      }
    }
    return this.svg;
  }

  // Whether node `id` is drawn as an item of its own.
  drawsAlone(id) {
    this.indexMembers();
    return this.plainIds.has(id);
  }

  // Keys of the items that show node `id`: its own (one per use of a shared leaf), or the
  // folded item holding it; empty when this drawing leaves it out.
  keysOfNode(id) {
    if (this.drawsAlone(id)) return this.plainKeys.get(id) || [];
    const group = this.groupOf.get(id);
    return group ? [group] : [];
  }

  indexMembers() {
    if (this.plainIds) return;
    this.plainIds = new Set(this.view.plain);
    this.groupOf = new Map();
    for (const [key, group] of Object.entries(this.view.groups)) {
      for (const id of group.members) this.groupOf.set(id, key);
    }
  }

  // The graph node ids a drawn item stands for (none for the legend).
  idsOfKey(key) {
    const match = PLAIN_KEY.exec(key);
    if (match) return [Number(match[1])];
    const group = this.view.groups[key];
    return group ? group.members : [];
  }

  // Edges touching an item, built once per drawing on the first selection.
  linksOf(key) {
    if (!this.links) {
      this.links = new Map();
      for (const edge of this.svg.querySelectorAll("g.edge")) {
        const [src, dst] = (edge.getAttribute("data-edge") || "").split("->");
        for (const [from, to] of [[src, dst], [dst, src]]) {
          const list = this.links.get(from);
          if (list) list.push({ edge, other: to });
          else this.links.set(from, [{ edge, other: to }]);
        }
      }
    }
    return this.links.get(key) || [];
  }

  elementsOf(key) {
    return this.elements.get(key) || [];
  }
}

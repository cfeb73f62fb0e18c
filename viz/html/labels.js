// Labels of a big drawing are laid out only near the screen: Chromium lays out every SVG
// <text> in the document, visible or not, and on a few thousand nodes that is most of
// the cost of opening the page. Text stays hidden until the view settles; then one pass
// over the items' positions (numbers read once, no layout) shows the labels in and around
// the visible area and hides those that left it.
const LAZY_LABEL_ITEMS = 300;  // drawings with at least this many items get lazy labels
const LABEL_MARGIN = 0.5;      // also label this fraction of a screen beyond each edge

class LazyLabels {
  constructor(svg) {
    this.svg = svg;
    this.shown = new Set();
    const graph = svg.querySelector("g.graph");
    const shift = /translate\(\s*([-\d.e]+)[\s,]+([-\d.e]+)\s*\)/.exec(graph.getAttribute("transform") || "");
    const dx = shift ? Number(shift[1]) : 0;
    const dy = shift ? Number(shift[2]) : 0;
    this.items = [];  // [group, x, y]: the group's first label position in drawing units
    for (const group of graph.querySelectorAll("g.node, g.edge")) {
      const text = group.querySelector("text");
      if (text) {
        this.items.push([group, Number(text.getAttribute("x")) + dx, Number(text.getAttribute("y")) + dy]);
      }
    }
    svg.classList.add("lazy-labels");
  }

  // Show the labels within the visible area (plus a margin) for transform (x, y, k) on a
  // canvas of `width` x `height`; none when zoomed out too far to read them.
  update(x, y, k, width, height, readable) {
    const visible = new Set();
    if (readable) {
      const left = (-x - LABEL_MARGIN * width) / k;
      const right = (width - x + LABEL_MARGIN * width) / k;
      const top = (-y - LABEL_MARGIN * height) / k;
      const bottom = (height - y + LABEL_MARGIN * height) / k;
      for (const [group, gx, gy] of this.items) {
        if (gx >= left && gx <= right && gy >= top && gy <= bottom) visible.add(group);
      }
    }
    for (const group of this.shown) if (!visible.has(group)) group.classList.remove("labelled");
    for (const group of visible) if (!this.shown.has(group)) group.classList.add("labelled");
    this.shown = visible;
  }
}

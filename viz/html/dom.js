// Building the page: every string that comes from the data goes in as a text node
// (never as markup), and attributes are only ever set to text.
const SVG_NS = "http://www.w3.org/2000/svg";

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  setProps(node, props);
  append(node, children);
  return node;
}

function svgEl(tag, attributes, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setProps(node, attributes);
  append(node, children);
  return node;
}

function setProps(node, props) {
  for (const [name, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "className") node.setAttribute("class", value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
}

function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child instanceof Node ? child : String(child));
  }
}

// Compact numbers, as in the drawing: 3 significant digits, scientific outside [1e-3, 1e4).
function formatNumber(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value !== "number") return String(value);
  if (value === 0) return "0";
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-3 && magnitude < 1e4) {
    return value.toFixed(Math.max(0, 2 - Math.floor(Math.log10(magnitude))));
  }
  return value.toExponential(2);
}

// Full precision for values a user compares (gradient-check entries).
function formatPrecise(value) {
  if (typeof value === "number") return String(Number(value.toPrecision(6)));  // 6 digits, no padding zeros
  if (value === null || value === undefined) return "–";
  if (Array.isArray(value)) {
    return value.every((item) => typeof item === "number") ? formatShape(value) : value.map(formatPrecise).join(", ");
  }
  if (typeof value === "object") {
    return Object.entries(value).map(([key, item]) => `${key} ${formatPrecise(item)}`).join(", ");
  }
  return String(value);
}

function formatShape(shape) {
  if (shape === null || shape === undefined) return "?";
  return "(" + shape.join(", ") + (shape.length === 1 ? "," : "") + ")";
}

function formatCount(count) {
  return count.toLocaleString("en-US");
}

// A count with its noun, singular for one: "1 op", "1,346 nodes", "2 leaves".
function counted(count, noun, plural) {
  return `${formatCount(count)} ${count === 1 ? noun : plural || `${noun}s`}`;
}

function basename(path) {
  return String(path).split(/[\\/]/).pop();
}

function sourceText(source) {
  return source ? `${source.file}:${source.line}` : "";
}

function kvTable(rows) {
  return el("table", { className: "kv" },
    rows.filter((row) => row && row[1] !== null && row[1] !== undefined && row[1] !== "")
      .map(([key, value]) => el("tr", null, el("th", null, key), el("td", null, value))));
}

function linkButton(text, onclick, title) {
  return el("button", { type: "button", className: "link", title: title || null, onclick }, text);
}

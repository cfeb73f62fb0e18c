// A graph's nodes, edges and source lines: the compact JSON form of trace.json
// (genesis.debug.graph), parsed from its block only when first needed (a click, a search,
// a jump to a node), so a page of 100,000 ops opens without reading them.
const VALUE_KEYS = ["min", "max", "mean", "abs_mean", "nan", "inf"];
const GRAD_KEYS = ["norm", "max_abs", "nan", "inf", "zero_fraction"];

class GraphData {
  constructor(blockId) {
    const data = JSON.parse(document.getElementById(blockId).textContent);
    this.nodes = data.nodes;
    this.edgeLists = data.edges;
    this.sources = data.sources.map(([file, line, name, code]) => ({ file, line, function: name, code }));
    this.links = null;
  }

  // { file, line, function, code } of the line that called the node's forward, or null.
  sourceOf(node) {
    return node.source === undefined ? null : this.sources[node.source];
  }

  deviceOf(node) {
    return node.device || "cpu";
  }

  // The node's outputs as { index, shape, dtype, stats, grad } (statistics as objects, or
  // null), leaving out the outputs an op didn't make.
  outputsOf(node) {
    const outputs = [];
    node.outputs.forEach((info, index) => {
      if (info) {
        outputs.push({ index, shape: info[0], dtype: info[1], stats: figures(info[2], VALUE_KEYS),
          grad: figures(info[3], GRAD_KEYS) });
      }
    });
    return outputs;
  }

  // { incoming, outgoing }: node id -> its edges { src, dst, index, outputNr, shape }, inputs
  // in slot order; built on first use.
  linksOf() {
    if (!this.links) {
      const incoming = new Map();
      const outgoing = new Map();
      for (const entry of this.edgeLists) {
        const [src, dst, index] = entry;
        const outputNr = entry.length > 3 ? entry[3] : 0;
        const produced = this.nodes[src].outputs[outputNr];
        const shape = entry.length > 4 ? entry[4] : (produced ? produced[0] : null);
        const edge = { src, dst, index, outputNr, shape };
        if (!incoming.has(dst)) incoming.set(dst, []);
        if (!outgoing.has(src)) outgoing.set(src, []);
        incoming.get(dst).push(edge);
        outgoing.get(src).push(edge);
      }
      for (const list of incoming.values()) list.sort((a, b) => a.index - b.index);
      this.links = { incoming, outgoing };
    }
    return this.links;
  }
}

// Statistics written as a list in the order of `keys` (or as an object) -> an object.
function figures(value, keys) {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) return value;
  return Object.fromEntries(keys.map((key, index) => [key, value[index]]));
}

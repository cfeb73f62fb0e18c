// Pan and zoom: the whole drawing moves by one transform on its g.viewport, written at
// most once per animation frame, so the cost of a frame does not grow with the graph.
// Lazy labels (labels.js) are brought up to date once the view has been still a moment.
const FAR_SCALE = 0.3;        // below this zoom, a big drawing's labels are not shown
const MAX_SCALE = 8;
const SETTLE_MS = 120;

class PanZoom {
  constructor(canvas, onTap) {
    this.canvas = canvas;
    this.onTap = onTap;
    this.svg = null;
    this.viewport = null;
    this.x = 0;
    this.y = 0;
    this.k = 1;
    this.minK = 0.01;
    this.frame = 0;
    this.animation = 0;
    this.drag = null;
    this.labels = null;
    this.settle = 0;
    canvas.addEventListener("wheel", (event) => this.wheel(event), { passive: false });
    canvas.addEventListener("pointerdown", (event) => this.down(event));
    canvas.addEventListener("pointermove", (event) => this.move(event));
    canvas.addEventListener("pointerup", (event) => this.up(event));
    canvas.addEventListener("pointercancel", () => this.endDrag());
  }

  // Show `svg` (with its LazyLabels or null) at `transform`, or fitted to the canvas.
  attach(svg, labels, transform) {
    this.stop();
    this.svg = svg;
    this.labels = labels;
    this.viewport = svg.querySelector("g.viewport");
    this.width = Number(svg.dataset.width) || 1;
    this.height = Number(svg.dataset.height) || 1;
    this.minK = Math.min(this.fitTransform().k / 2, 0.5);
    if (transform) this.set(transform.x, transform.y, transform.k);
    else this.fit(false);
  }

  get transform() {
    return { x: this.x, y: this.y, k: this.k };
  }

  // -- moving -------------------------------------------------------------------
  set(x, y, k) {
    this.x = x;
    this.y = y;
    this.k = Math.min(MAX_SCALE, Math.max(this.minK, k));
    this.schedule();
  }

  schedule() {
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.apply(); });
  }

  apply() {
    if (!this.viewport) return;
    const { x, y, k } = this;
    this.viewport.setAttribute("transform", `translate(${x.toFixed(2)},${y.toFixed(2)}) scale(${k.toFixed(5)})`);
    if (this.labels) {
      clearTimeout(this.settle);
      this.settle = setTimeout(() => this.relabel(), SETTLE_MS);
    }
  }

  relabel() {
    if (!this.labels) return;
    const { width, height } = this.size();
    this.labels.update(this.x, this.y, this.k, width, height, this.k >= FAR_SCALE);
  }

  flush() {
    if (this.frame) {
      cancelAnimationFrame(this.frame);
      this.frame = 0;
    }
    this.apply();
  }

  size() {
    return { width: this.canvas.clientWidth || 1, height: this.canvas.clientHeight || 1 };
  }

  fitTransform() {
    const { width, height } = this.size();
    const pad = 16;
    const k = Math.min((width - 2 * pad) / this.width, (height - 2 * pad) / this.height, 1.5);
    const scale = Math.max(k, 0.001);
    return { x: (width - this.width * scale) / 2, y: (height - this.height * scale) / 2, k: scale };
  }

  fit(animate = true) {
    if (!this.svg) return;
    const target = this.fitTransform();
    this.minK = Math.min(target.k / 2, 0.5);
    if (animate) this.animateTo(target.x, target.y, target.k);
    else this.set(target.x, target.y, target.k);
  }

  zoomBy(factor, animate = true) {
    const { width, height } = this.size();
    this.zoomAt(factor, width / 2, height / 2, animate);
  }

  zoomAt(factor, px, py, animate = false) {
    const base = this.animation ? this.target : this.transform;
    this.stop();
    const k = Math.min(MAX_SCALE, Math.max(this.minK, base.k * factor));
    const x = px - (px - base.x) * (k / base.k);
    const y = py - (py - base.y) * (k / base.k);
    if (animate) this.animateTo(x, y, k, 180);
    else this.set(x, y, k);
  }

  panBy(dx, dy) {
    this.stop();
    this.set(this.x + dx, this.y + dy, this.k);
  }

  // Bring an element (a drawn node) to the middle of the canvas, or `fy` of the way down,
  // zooming in to at least `minScale` so it is readable.
  centerOn(element, minScale = 0.9, animate = true, fy = 0.5) {
    this.stop();
    this.flush();
    const box = element.getBoundingClientRect();
    const frame = this.canvas.getBoundingClientRect();
    const gx = (box.left + box.width / 2 - frame.left - this.x) / this.k;
    const gy = (box.top + box.height / 2 - frame.top - this.y) / this.k;
    const k = Math.min(MAX_SCALE, Math.max(this.k, minScale));
    const { width, height } = this.size();
    if (animate) this.animateTo(width / 2 - gx * k, height * fy - gy * k, k);
    else this.set(width / 2 - gx * k, height * fy - gy * k, k);
  }

  animateTo(x, y, k, duration = 320) {
    this.stop();
    const start = performance.now();
    const from = this.transform;
    this.target = { x, y, k };
    this.canvas.dataset.moving = "true";
    const step = (now) => {
      const t = Math.min(1, (now - start) / duration);
      const ease = t < 0.5 ? 2 * t * t : 1 - Math.pow(-2 * t + 2, 2) / 2;
      this.x = from.x + (x - from.x) * ease;
      this.y = from.y + (y - from.y) * ease;
      this.k = from.k * Math.pow(k / from.k, ease);
      this.apply();
      if (t < 1) this.animation = requestAnimationFrame(step);
      else this.stop();
    };
    this.animation = requestAnimationFrame(step);
  }

  stop() {
    if (this.animation) cancelAnimationFrame(this.animation);
    this.animation = 0;
    delete this.canvas.dataset.moving;
  }

  // -- pointer ----------------------------------------------------------------------
  wheel(event) {
    if (!this.svg) return;
    event.preventDefault();
    const frame = this.canvas.getBoundingClientRect();
    const unit = event.deltaMode === 1 ? 40 : event.deltaMode === 2 ? 400 : 1;
    const factor = Math.exp(-event.deltaY * unit * 0.0015);
    this.zoomAt(factor, event.clientX - frame.left, event.clientY - frame.top);
  }

  down(event) {
    if (event.button !== 0 || !this.svg) return;
    this.stop();
    this.drag = { id: event.pointerId, sx: event.clientX, sy: event.clientY, x: this.x, y: this.y,
      target: event.target, moved: false };
    this.canvas.setPointerCapture(event.pointerId);
  }

  move(event) {
    const drag = this.drag;
    if (!drag || drag.id !== event.pointerId) return;
    const dx = event.clientX - drag.sx;
    const dy = event.clientY - drag.sy;
    if (!drag.moved && Math.hypot(dx, dy) > 4) {
      drag.moved = true;
      this.canvas.classList.add("dragging");
    }
    if (drag.moved) this.set(drag.x + dx, drag.y + dy, this.k);
  }

  up(event) {
    const drag = this.drag;
    if (!drag || drag.id !== event.pointerId) return;
    this.endDrag();
    if (!drag.moved) this.onTap(drag.target);
  }

  endDrag() {
    const drag = this.drag;
    if (drag && this.canvas.hasPointerCapture(drag.id)) this.canvas.releasePointerCapture(drag.id);
    this.drag = null;
    this.canvas.classList.remove("dragging");
  }
}

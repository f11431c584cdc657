// Draws a graph document as SVG: laid out by ELK's layered algorithm (elkjs),
// with pan (drag), zoom (wheel, about the cursor), fit, selection, search
// highlights and a per-node time overlay. Constants are not drawn as nodes:
// a node's weights are listed in its panel, as in the graph viewers people use.
const SVG = 'http://www.w3.org/2000/svg';

export const CATEGORIES = [
  { name: 'convolution / linear', fill: '#dbe7ff', stroke: '#5b8def', test: (op, c) => c === 'conv' || /conv|linear|matmul|addmm|^mm$|bmm/.test(op) },
  { name: 'activation', fill: '#ffe4d6', stroke: '#e8743b', test: (op, c) => ['relu', 'sigmoid', 'tanh', 'clip', 'softmax', 'log_softmax', 'hardswish', 'silu', 'gelu', 'leaky_relu', 'elu'].includes(c) || /relu|sigmoid|tanh|hardtanh|clamp|softmax|hardswish|gelu|silu|elu/.test(op) },
  { name: 'normalization', fill: '#efe3ff', stroke: '#8e5bd8', test: (op) => /norm/.test(op) },
  { name: 'pooling / resize', fill: '#dcf3e3', stroke: '#34a853', test: (op) => /pool|upsample|interpolate|resize/.test(op) },
  { name: 'elementwise', fill: '#fff3c4', stroke: '#c9a227', test: (op) => /^(add|sub|mul|div|rsub|pow|neg|exp|log|sqrt|abs|maximum|minimum)$/.test(op) },
  { name: 'shape / layout', fill: '#eceff3', stroke: '#9aa3b2', test: () => true },
];
const INPUT = { fill: '#d1fae5', stroke: '#059669' };
const OUTPUT = { fill: '#fde7b0', stroke: '#b45309' };

const shortOp = (op) => op.replace(/^(aten|prim)::/, '');
const shapeText = (s) => (s ? s.join('×') : '');
const textWidth = (s, px) => s.length * px * 0.6;

export class GraphView {
  constructor(svg, { onSelect } = {}) {
    this.svg = svg;
    this.viewport = svg.querySelector('#viewport');
    this.onSelect = onSelect ?? (() => {});
    this.t = { x: 0, y: 0, k: 1 };
    this.elements = new Map();  // node id -> <g>
    this.matches = [];
    this.matchIndex = -1;
    this.installPanZoom();
  }

  // Lays out and draws `doc`; resolves to { nodes, edges, layoutMs, drawMs }.
  async show(doc, canonical) {
    const t0 = performance.now();
    const values = doc.graph.values;
    const producer = new Map();  // value file id -> element key
    const elkNodes = [];
    const edges = [];
    const info = new Map();
    const addNode = (key, label, sub, kind, extra) => {
      const w = Math.max(86, textWidth(label, 12.5) + 24, textWidth(sub, 10.5) + 24);
      elkNodes.push({ id: key, width: Math.round(w), height: sub ? 40 : 30 });
      info.set(key, { label, sub, kind, ...extra });
    };
    doc.graph.inputs.forEach((vid) => {
      const key = `in:${vid}`;
      addNode(key, values[vid].name, shapeText(values[vid].shape), 'input', { value: vid });
      producer.set(vid, key);
    });
    doc.graph.nodes.forEach((n, i) => {
      const key = `n:${n.id}`;
      const fused = n.attributes.fused_activation?.value;
      const out = values[n.outputs[0]];
      addNode(key, shortOp(n.op) + (fused ? ` + ${fused}` : ''), shapeText(out?.shape), 'op', { node: n, canonical: canonical?.[i] });
      n.outputs.forEach((v) => producer.set(v, key));
    });
    doc.graph.outputs.forEach((vid, i) => {
      const key = `out:${i}`;
      addNode(key, `output ${i}: ${values[vid].name}`, shapeText(values[vid].shape), 'output', { value: vid });
      if (producer.has(vid)) edges.push([producer.get(vid), key]);
    });
    doc.graph.nodes.forEach((n) => {
      const seen = new Set();
      for (const vid of n.inputs) {
        const from = producer.get(vid);
        if (from && !seen.has(from)) {
          seen.add(from);
          edges.push([from, `n:${n.id}`]);
        }
      }
    });
    const elk = new globalThis.ELK();
    const layout = await elk.layout({
      id: 'root',
      layoutOptions: {
        'elk.algorithm': 'layered',
        'elk.direction': 'DOWN',
        'elk.layered.spacing.nodeNodeBetweenLayers': '26',
        'elk.spacing.nodeNode': '20',
        'elk.spacing.edgeNode': '12',
        'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
        'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
        'elk.edgeRouting': 'POLYLINE',
      },
      children: elkNodes,
      edges: edges.map(([s, t], i) => ({ id: `e${i}`, sources: [s], targets: [t] })),
    });
    const t1 = performance.now();
    this.draw(layout, info);
    this.info = info;
    this.layout = layout;
    this.boxes = new Map(layout.children.map((c) => [c.id, c]));
    this.initialView();
    return { nodes: elkNodes.length, edges: edges.length, layoutMs: t1 - t0, drawMs: performance.now() - t1 };
  }

  draw(layout, info) {
    const vp = this.viewport;
    vp.replaceChildren();
    this.elements.clear();
    const defs = document.createElementNS(SVG, 'defs');
    defs.innerHTML = '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#9aa3b2"/></marker>';
    vp.appendChild(defs);
    const edgeLayer = document.createElementNS(SVG, 'g');
    const nodeLayer = document.createElementNS(SVG, 'g');
    vp.append(edgeLayer, nodeLayer);
    const parts = [];
    for (const e of layout.edges ?? []) {
      for (const s of e.sections ?? []) {
        const pts = [s.startPoint, ...(s.bendPoints ?? []), s.endPoint];
        parts.push(`<path class="edge" data-from="${e.sources[0]}" data-to="${e.targets[0]}" marker-end="url(#arrow)" d="M${pts.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' L')}"/>`);
      }
    }
    edgeLayer.innerHTML = parts.join('');
    const frag = document.createDocumentFragment();
    for (const n of layout.children) {
      const meta = info.get(n.id);
      const colors = meta.kind === 'input' ? INPUT : meta.kind === 'output' ? OUTPUT
        : CATEGORIES.find((c) => c.test(shortOp(meta.node.op), meta.canonical));
      const g = document.createElementNS(SVG, 'g');
      g.setAttribute('class', `node${meta.kind === 'op' ? '' : ' io'}`);
      g.setAttribute('transform', `translate(${n.x},${n.y})`);
      g.dataset.key = n.id;
      if (meta.node) {
        g.dataset.name = meta.node.name;
        g.dataset.op = meta.node.op;
      }
      const title = meta.node ? `${meta.node.name} (${meta.node.op})` : meta.label;
      g.innerHTML = `<title>${escapeXml(title)}</title><rect width="${n.width}" height="${n.height}" fill="${colors.fill}" stroke="${colors.stroke}"/>` +
        `<text x="${n.width / 2}" y="${meta.sub ? 17 : 19}" text-anchor="middle">${escapeXml(meta.label)}</text>` +
        (meta.sub ? `<text class="sub" x="${n.width / 2}" y="32" text-anchor="middle">${escapeXml(meta.sub)}</text>` : '');
      g.addEventListener('click', (ev) => {
        ev.stopPropagation();
        this.select(n.id);
      });
      frag.appendChild(g);
      this.elements.set(n.id, g);
    }
    nodeLayer.appendChild(frag);
  }

  select(key, { center = false } = {}) {
    for (const g of this.viewport.querySelectorAll('.node.selected')) g.classList.remove('selected');
    for (const p of this.viewport.querySelectorAll('.edge.hot')) p.classList.remove('hot');
    const g = this.elements.get(key);
    if (!g) return;
    g.classList.add('selected');
    for (const p of this.viewport.querySelectorAll(`.edge[data-from="${key}"], .edge[data-to="${key}"]`)) p.classList.add('hot');
    if (center) this.centerOn(key);
    this.onSelect(this.info.get(key), key);
  }

  // Highlights nodes whose name or op contains `text`; returns how many.
  search(text) {
    const q = text.trim().toLowerCase();
    this.matches = [];
    this.matchIndex = -1;
    for (const [key, g] of this.elements) {
      const meta = this.info.get(key);
      const hay = meta.node ? `${meta.node.name} ${meta.node.op}`.toLowerCase() : meta.label.toLowerCase();
      const hit = q && hay.includes(q);
      g.classList.toggle('match', !!hit);
      g.classList.toggle('dim', !!q && !hit);
      if (hit) this.matches.push(key);
    }
    return this.matches.length;
  }

  nextMatch() {
    if (!this.matches.length) return;
    this.matchIndex = (this.matchIndex + 1) % this.matches.length;
    this.select(this.matches[this.matchIndex], { center: true });
  }

  // Per-node times ({ node, ms }[]): a red tint and the time under each node.
  overlayTimes(times) {
    for (const el of this.viewport.querySelectorAll('.time')) el.remove();
    if (!times) return;
    const byName = new Map(times.map((t) => [t.node, t]));
    const max = Math.max(1e-9, ...times.map((t) => t.ms));
    for (const [key, g] of this.elements) {
      const meta = this.info.get(key);
      if (!meta.node || !byName.has(meta.node.name)) continue;
      const { ms, engine, gflops, winograd } = byName.get(meta.node.name);
      const n = this.boxes.get(key);
      const t = document.createElementNS(SVG, 'text');
      // Which engine ran it: XNNPACK's operators, our Winograd transforms around our GEMM or XNNPACK's (its form in the
      // tooltip), or the portable kernels of ours.
      t.setAttribute('class', `time ${engine ?? ''}`);
      t.dataset.engine = engine ?? 'none';
      t.setAttribute('x', n.width + 4);
      t.setAttribute('y', 12);
      t.textContent = `${ms.toFixed(ms < 1 ? 2 : 1)} ms${gflops ? ` · ${gflops.toFixed(1)} GFLOP/s` : ''}${{ portable: ' · portable', xnnpack: ' · XNNPACK', winograd: ' · Winograd' }[engine] ?? ''}`;
      if (winograd) {
        const tip = document.createElementNS(SVG, 'title');
        tip.textContent = `Winograd ${winograd}`;
        t.appendChild(tip);
      }
      g.appendChild(t);
      const rect = g.querySelector('rect');
      const a = Math.min(1, ms / max);
      rect.setAttribute('fill', `rgb(${255},${Math.round(245 - 170 * a)},${Math.round(240 - 180 * a)})`);
    }
  }

  apply() { this.viewport.setAttribute('transform', `translate(${this.t.x},${this.t.y}) scale(${this.t.k})`); }

  fit() {
    if (!this.layout) return;
    const r = this.svg.getBoundingClientRect();
    const w = this.layout.width || 1;
    const h = this.layout.height || 1;
    const k = Math.min(1.2, Math.max(0.02, Math.min((r.width - 40) / w, (r.height - 40) / h)));
    this.t = { k, x: (r.width - w * k) / 2, y: Math.max(20, (r.height - h * k) / 2) };
    this.apply();
  }

  // Fit when the whole graph stays readable; a long chain (mobilenet) starts
  // at its top at a readable zoom instead of shrinking to a thin line.
  initialView() {
    this.fit();
    if (this.t.k >= 0.45) return;
    const r = this.svg.getBoundingClientRect();
    const k = Math.min(1, Math.max(0.45, (r.width - 40) / (this.layout.width || 1)));
    this.t = { k, x: (r.width - this.layout.width * k) / 2, y: 20 };
    this.apply();
  }

  centerOn(key) {
    const n = this.boxes.get(key);
    if (!n) return;
    const r = this.svg.getBoundingClientRect();
    const k = Math.max(this.t.k, 0.8);
    this.t = { k, x: r.width / 2 - (n.x + n.width / 2) * k, y: r.height / 2 - (n.y + n.height / 2) * k };
    this.apply();
  }

  installPanZoom() {
    let drag = null;
    this.svg.addEventListener('pointerdown', (e) => {
      if (e.target.closest('.node')) return;
      drag = { x: e.clientX, y: e.clientY, tx: this.t.x, ty: this.t.y };
      this.svg.setPointerCapture(e.pointerId);
      this.svg.classList.add('panning');
    });
    this.svg.addEventListener('pointermove', (e) => {
      if (!drag) return;
      this.t.x = drag.tx + e.clientX - drag.x;
      this.t.y = drag.ty + e.clientY - drag.y;
      this.apply();
    });
    const end = () => { drag = null; this.svg.classList.remove('panning'); };
    this.svg.addEventListener('pointerup', end);
    this.svg.addEventListener('pointercancel', end);
    this.svg.addEventListener('wheel', (e) => {
      e.preventDefault();
      const r = this.svg.getBoundingClientRect();
      const px = e.clientX - r.left;
      const py = e.clientY - r.top;
      const k = Math.min(4, Math.max(0.02, this.t.k * Math.exp(-e.deltaY * 0.0015)));
      this.t.x = px - ((px - this.t.x) * k) / this.t.k;
      this.t.y = py - ((py - this.t.y) * k) / this.t.k;
      this.t.k = k;
      this.apply();
    }, { passive: false });
  }
}

export function escapeXml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

// Draws a graph document as SVG, folded by its module hierarchy
// (hierarchy.mjs): closed groups are boxes with their node count, FLOPs,
// parameters and repeats, open ones frames around their contents; a click
// unfolds or folds one. Laid out by ELK's layered algorithm (elkjs) in its
// own worker, only what the folding shows; with pan (drag), zoom (wheel,
// about the cursor), fit, selection, search that opens the groups around a
// hit, and colour overlays (FLOPs, parameters, output size, run time).
// Constants are not drawn as nodes: a node's weights are listed in its panel,
// as in the graph viewers people use.
import { shortOp } from './diff.mjs';
import { Hierarchy } from './hierarchy.mjs';
import { human } from './model_stats.mjs';

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
const GROUP = { fill: '#f4f6fb', stroke: '#55607a' };
const NONE_FILL = '#eef0f3';

const shapeText = (s) => (s ? s.join('×') : '');
const textWidth = (s, px) => s.length * px * 0.6;

// The colour overlays: a number per drawn box, on a log scale from light to
// dark, with its legend. FLOPs and parameters are the core's (node_flops per
// node, the module tree per group); output size is a node's first output's
// elements; run time a profiled run's milliseconds (a group: its nodes' sum).
export const OVERLAYS = {
  op: { label: 'op kind' },
  flops: { label: 'FLOPs', unit: 'FLOP' },
  params: { label: 'parameters', unit: '' },
  size: { label: 'output size', unit: ' elements' },
  time: { label: 'run time', unit: ' ms' },
  error: { label: 'max relative error vs the reference' },
};
const RAMP = [[255, 247, 237], [234, 88, 12]];
export function rampColor(t) {
  const c = RAMP[0].map((a, i) => Math.round(a + (RAMP[1][i] - a) * t));
  return `rgb(${c.join(',')})`;
}
// Errors on their own scale, log10 from 1e-8 to 1 (float32's rounding,
// 1e-7, and a real difference, 1e-2, look apart), in two ramps that meet at
// the tolerance: greens within it, orange to red past it.
const ERROR_FLOOR = 1e-8;
const WITHIN = [[240, 249, 242], [134, 199, 150]];
const PAST = [[253, 208, 162], [229, 57, 53]];
export function errorColor(e, tolerance) {
  const at = (x) => (Math.log10(Math.max(x, ERROR_FLOOR)) - Math.log10(ERROR_FLOOR)) / -Math.log10(ERROR_FLOOR);
  const [ramp, t] = !(e > tolerance) ? [WITHIN, at(e) / Math.max(at(tolerance), 1e-9)] : [PAST, (at(e) - at(tolerance)) / Math.max(1 - at(tolerance), 1e-9)];
  const f = Math.min(1, Math.max(0, Number.isNaN(t) ? 1 : t));
  return `rgb(${ramp[0].map((a, i) => Math.round(a + (ramp[1][i] - a) * f)).join(',')})`;
}
const numel = (shape) => (shape && shape.every((d) => typeof d === 'number') ? shape.reduce((a, b) => a * b, 1) : null);
const LAYOUT_WORKER = '/vendor/elkjs/lib/elk-worker.min.js';

export class GraphView {
  // onSelect(meta, key): a box was selected; onLocate(chain): the groups
  // around the selection changed (the breadcrumb), [group index...] below the
  // root; onOverlay(kind, legendHtml): the overlay or its scale changed.
  constructor(svg, { onSelect, onLocate, onOverlay, onLayout } = {}) {
    this.svg = svg;
    this.viewport = svg.querySelector('.viewport');
    this.onSelect = onSelect ?? (() => {});
    this.onLocate = onLocate ?? (() => {});
    this.onOverlay = onOverlay ?? (() => {});
    this.onLayout = onLayout ?? (() => {});  // after each layout: what is drawn changed
    this.t = { x: 0, y: 0, k: 1 };
    this.elements = new Map();  // drawn key -> <g>
    this.matches = [];          // keys of the items that match the search ("n:ID", "in:V", "out:I"), drawn or folded away
    this.matchIndex = -1;
    this.query = '';
    this.selected = null;
    this.overlay = 'op';
    this.times = null;
    // ELK in its own worker: the page stays responsive while a graph is laid out.
    this.elk = new globalThis.ELK({ workerUrl: LAYOUT_WORKER, workerFactory: (url) => new Worker(url) });
    // Warmed up while the page starts: the first model's layout pays no start-up.
    this.elk.layout({ id: 'warm', children: [{ id: 'a', width: 10, height: 10 }, { id: 'b', width: 10, height: 10 }],
      edges: [{ id: 'e', sources: ['a'], targets: ['b'] }] }).catch(() => {});
    this.pending = Promise.resolve();
    this.installPanZoom();
  }

  // Lays out and draws `doc` folded as its module tree says, fitted to the
  // view; resolves to { nodes, edges, groups, layoutMs, drawMs } of what is drawn.
  // `flops`: the core's FLOPs per node (null: not counted); `tree`: moduleTree().
  async show(doc, canonical, { flops = null, tree = null } = {}) {
    const values = doc.graph.values;
    const producer = new Map();  // value id -> node id
    doc.graph.nodes.forEach((n) => n.outputs.forEach((v) => producer.set(v, n.id)));
    const index = new Map(doc.graph.nodes.map((n, i) => [n.id, i]));
    this.model = { doc, values, canonical, flops, producer, index };
    this.hierarchy = new Hierarchy(doc, tree);
    this.selected = null;
    this.matches = [];
    this.matchIndex = -1;
    this.query = '';
    this.times = null;
    this.errors = null;
    this.diff = null;
    const drawn = await this.relayout();
    this.fit();
    this.onLocate([]);
    this.setOverlay(this.overlay === 'time' || this.overlay === 'error' ? 'op' : this.overlay);
    return drawn;
  }

  // Opens a closed group or closes an open one, lays the graph out again and
  // keeps the group where it was on the screen.
  toggle(group) {
    const h = this.hierarchy;
    const before = this.screenBox(h.open.has(group) ? `c:${group}` : `g:${group}`);
    if (h.open.has(group)) h.close(group);
    else h.open.add(group);
    return this.relayout({ keep: { before, key: h.open.has(group) ? `c:${group}` : `g:${group}` } });
  }

  // Layouts run one at a time, in order.
  relayout(options) {
    const run = this.pending.then(() => this.layoutAndDraw(options));
    this.pending = run.catch(() => {});
    return run;
  }

  async layoutAndDraw({ keep = null } = {}) {
    const t0 = performance.now();
    const { root, info, edgeCount, leaves, groups } = this.visibleGraph();
    const layout = await this.elk.layout(root);
    const t1 = performance.now();
    this.info = info;
    this.layout = layout;
    this.boxes = new Map();
    const collect = (n) => { for (const c of n.children ?? []) { this.boxes.set(c.id, c); collect(c); } };
    collect(layout);
    this.draw(layout, info);
    if (this.query) this.search(this.query, { keepIndex: true });
    if (this.overlay === 'op') this.recolor();
    else this.setOverlay(this.overlay);  // the scale is the drawn boxes' largest
    if (this.selected && this.elements.has(this.selected)) this.mark(this.selected);
    if (keep?.before && this.boxes.has(keep.key)) {
      const n = this.boxes.get(keep.key);
      this.t.x = keep.before.x - n.x * this.t.k;
      this.t.y = keep.before.y - n.y * this.t.k;
      this.apply();
      this.bringIntoView(keep.key);
    }
    this.onLayout();
    return { nodes: leaves, edges: edgeCount, groups, layoutMs: t1 - t0, drawMs: performance.now() - t1 };
  }

  // The graph at the current folding, as ELK's JSON: closed groups are
  // leaves, open ones (but the root) compound nodes around their contents;
  // edges between boxes, one per pair, none within a closed group.
  visibleGraph() {
    const { doc, values, canonical, flops, producer } = this.model;
    const h = this.hierarchy;
    const info = new Map();
    const root = {
      id: 'root',
      layoutOptions: {
        'elk.algorithm': 'layered',
        'elk.direction': 'DOWN',
        'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
        'elk.json.shapeCoords': 'ROOT',
        'elk.json.edgeCoords': 'ROOT',
        'elk.layered.spacing.nodeNodeBetweenLayers': '26',
        'elk.spacing.nodeNode': '20',
        'elk.spacing.edgeNode': '12',
        'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
        'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
        'elk.edgeRouting': 'POLYLINE',
      },
      children: [],
      edges: [],
    };
    let leaves = 0;
    const addLeaf = (parent, key, meta) => {
      const lines = [meta.label, meta.sub, meta.more].filter(Boolean);
      const w = Math.max(86, textWidth(meta.label, 12.5) + 24, textWidth(meta.sub ?? '', 10.5) + 24, textWidth(meta.more ?? '', 10.5) + 24);
      parent.children.push({ id: key, width: Math.round(w), height: 16 + 14 * lines.length });
      info.set(key, meta);
      ++leaves;
    };
    const frames = new Map([[0, root]]);
    const frameOf = (g) => {
      if (frames.has(g)) return frames.get(g);
      const parent = frameOf(h.groups[g].parent);
      const label = this.groupTitle(g);
      // As wide as its title line at least.
      const wide = Math.round(textWidth(`▾ ${label}`, 12.5) + textWidth(this.groupNumbers(g), 10.5) + 40);
      const frame = { id: `c:${g}`, children: [], layoutOptions: { 'elk.padding': '[top=30,left=12,bottom=12,right=12]',
        'elk.nodeSize.constraints': '[MINIMUM_SIZE]', 'elk.nodeSize.minimum': `(${wide},40)` } };
      parent.children.push(frame);
      frames.set(g, frame);
      info.set(frame.id, { kind: 'frame', group: g, label });
      return frame;
    };
    // The closed group each group is folded into (null: drawn open), computed once per group.
    const ownerMemo = new Map();
    const owner = (g) => {
      if (!ownerMemo.has(g)) {
        const p = h.groups[g].parent;
        const above = p === null ? null : owner(p);
        ownerMemo.set(g, above !== null ? above : h.open.has(g) ? null : g);
      }
      return ownerMemo.get(g);
    };
    // A module of one node and no submodules (a leaf module of one op: an
    // nn.Conv2d, an nn.ReLU in a torch.export program) is drawn, open, as that
    // node in its parent's frame, named under it: a frame around each op made
    // such graphs several times taller (ELK gives every frame its own layers).
    const single = (g) => g !== 0 && h.groups[g].nodeCount === 1 && !h.groups[g].children.length;
    const keyOf = (id) => {
      const o = owner(h.groupOf.get(id));
      return o === null ? `n:${id}` : `g:${o}`;
    };
    this.keyOf = keyOf;
    doc.graph.inputs.forEach((vid) => addLeaf(root, `in:${vid}`, { kind: 'input', value: vid, label: values[vid].name, sub: shapeText(values[vid].shape) }));
    let groups = 0;
    doc.graph.nodes.forEach((n, i) => {
      const key = keyOf(n.id);
      if (info.has(key)) return;
      if (key.startsWith('g:')) {
        const g = Number(key.slice(2));
        const group = h.groups[g];
        addLeaf(frameOf(group.parent), key, { kind: 'group', group: g, label: this.groupTitle(g), sub: this.groupNumbers(g), more: h.repeatText(g) });
        ++groups;
        return;
      }
      const fused = n.attributes.fused_activation?.value;
      const out = values[n.outputs[0]];
      const g = h.groupOf.get(n.id);
      addLeaf(frameOf(single(g) ? h.groups[g].parent : g), key, { kind: 'op', node: n, canonical: canonical?.[i], flops: flops?.[i] ?? null,
        label: shortOp(n.op) + (fused ? ` + ${fused}` : ''), sub: shapeText(out?.shape), more: single(g) ? this.groupTitle(g) : undefined });
    });
    doc.graph.outputs.forEach((vid, i) => addLeaf(root, `out:${i}`, { kind: 'output', value: vid, label: `output ${i}: ${values[vid].name}`, sub: shapeText(values[vid].shape) }));
    const seen = new Set();
    const edge = (from, to) => {
      const id = `${from}>${to}`;
      if (from === to || seen.has(id)) return;
      seen.add(id);
      root.edges.push({ id, sources: [from], targets: [to] });
    };
    const inputs = new Set(doc.graph.inputs);
    doc.graph.nodes.forEach((n) => {
      const to = keyOf(n.id);
      for (const vid of n.inputs) {
        if (producer.has(vid)) edge(keyOf(producer.get(vid)), to);
        else if (inputs.has(vid)) edge(`in:${vid}`, to);
      }
    });
    doc.graph.outputs.forEach((vid, i) => {
      if (producer.has(vid)) edge(keyOf(producer.get(vid)), `out:${i}`);
      else if (inputs.has(vid)) edge(`in:${vid}`, `out:${i}`);
    });
    return { root, info, edgeCount: root.edges.length, leaves, groups };
  }

  groupTitle(g) {
    const group = this.hierarchy.groups[g];
    return `${this.hierarchy.label(g)}${group.type ? ` · ${group.type}` : ''}`;
  }

  groupNumbers(g) {
    const group = this.hierarchy.groups[g];
    const parts = [`${group.nodeCount.toLocaleString('en-US')} node${group.nodeCount === 1 ? '' : 's'}`];
    if (group.flops) parts.push(human(group.flops, 'FLOP'));
    if (group.parameters) parts.push(`${human(group.parameters)} params`);
    return parts.join(' · ');
  }

  draw(layout, info) {
    const vp = this.viewport;
    vp.replaceChildren();
    this.elements.clear();
    const defs = document.createElementNS(SVG, 'defs');
    defs.innerHTML = '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#9aa3b2"/></marker>';
    vp.appendChild(defs);
    const frameLayer = document.createElementNS(SVG, 'g');
    const edgeLayer = document.createElementNS(SVG, 'g');
    const nodeLayer = document.createElementNS(SVG, 'g');
    vp.append(frameLayer, edgeLayer, nodeLayer);
    const parts = [];
    for (const e of layout.edges ?? []) {
      for (const s of e.sections ?? []) {
        const pts = [s.startPoint, ...(s.bendPoints ?? []), s.endPoint];
        parts.push(`<path class="edge" data-from="${e.sources[0]}" data-to="${e.targets[0]}" marker-end="url(#arrow)" d="M${pts.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' L')}"/>`);
      }
    }
    edgeLayer.innerHTML = parts.join('');
    const frames = document.createDocumentFragment();
    const boxes = document.createDocumentFragment();
    for (const [key, n] of this.boxes) {
      const meta = info.get(key);
      const g = document.createElementNS(SVG, 'g');
      g.setAttribute('transform', `translate(${n.x},${n.y})`);
      g.dataset.key = key;
      if (meta.kind === 'frame') {
        const group = this.hierarchy.groups[meta.group];
        g.setAttribute('class', 'frame');
        g.dataset.group = meta.group;
        g.dataset.path = group.path;
        g.innerHTML = `<rect class="frame-body" width="${n.width}" height="${n.height}"/>` +
          `<g class="frame-head"><title>${escapeXml(`${group.path} (${group.type}): click to fold`)}</title><rect width="${n.width}" height="24"/>` +
          `<text x="10" y="16">▾ ${escapeXml(meta.label)}<tspan class="sub" dx="8">${escapeXml(this.groupNumbers(meta.group))}</tspan></text></g>`;
        g.querySelector('.frame-head').addEventListener('click', (ev) => {
          ev.stopPropagation();
          this.toggle(meta.group);
        });
        frames.appendChild(g);
        this.elements.set(key, g);
        continue;
      }
      const lines = [meta.sub, meta.more].filter(Boolean);
      const colors = meta.kind === 'input' ? INPUT : meta.kind === 'output' ? OUTPUT : meta.kind === 'group' ? GROUP
        : CATEGORIES.find((c) => c.test(shortOp(meta.node.op), meta.canonical));
      g.setAttribute('class', `node${meta.kind === 'op' ? '' : meta.kind === 'group' ? ' group' : ' io'}`);
      if (meta.node) {
        g.dataset.name = meta.node.name;
        g.dataset.op = meta.node.op;
      }
      let title = meta.label;
      if (meta.node) title = `${meta.node.name} (${meta.node.op})`;
      if (meta.kind === 'group') {
        const group = this.hierarchy.groups[meta.group];
        g.dataset.group = meta.group;
        g.dataset.path = group.path;
        title = `${group.path} (${group.type}): click to unfold`;
      }
      g.innerHTML = `<title>${escapeXml(title)}</title>` +
        (meta.kind === 'group' ? `<rect class="stack" x="4" y="4" width="${n.width}" height="${n.height}"/>` : '') +
        `<rect class="box" width="${n.width}" height="${n.height}" fill="${colors.fill}" stroke="${colors.stroke}"/>` +
        `<text x="${n.width / 2}" y="${lines.length ? 17 : 19}" text-anchor="middle">${escapeXml(meta.label)}</text>` +
        lines.map((l, i) => `<text class="sub" x="${n.width / 2}" y="${31 + 14 * i}" text-anchor="middle">${escapeXml(l)}</text>`).join('');
      g.addEventListener('click', (ev) => {
        ev.stopPropagation();
        this.select(key);
        if (meta.kind === 'group') this.toggle(meta.group);
      });
      boxes.appendChild(g);
      this.elements.set(key, g);
    }
    frameLayer.appendChild(frames);
    nodeLayer.appendChild(boxes);
  }

  // The groups around a drawn key, from the root's first child.
  chainOf(key) {
    const meta = this.info?.get(key);
    if (!meta) return [];
    const h = this.hierarchy;
    if (meta.kind === 'group' || meta.kind === 'frame') return h.chain(meta.group).slice(1);
    if (meta.kind === 'op') return h.chain(h.groupOf.get(meta.node.id)).slice(1);
    return [];
  }

  mark(key) {
    for (const g of this.viewport.querySelectorAll('.node.selected')) g.classList.remove('selected');
    for (const p of this.viewport.querySelectorAll('.edge.hot')) p.classList.remove('hot');
    const g = this.elements.get(key);
    if (!g) return;
    g.classList.add('selected');
    for (const p of this.viewport.querySelectorAll(`.edge[data-from="${key}"], .edge[data-to="${key}"]`)) p.classList.add('hot');
  }

  // `quiet`: no onSelect (a selection that follows another view's).
  select(key, { center = false, quiet = false } = {}) {
    if (!this.elements.has(key)) return;
    this.selected = key;
    this.mark(key);
    if (center) this.centerOn(key);
    if (!quiet) this.onSelect(this.info.get(key), key);
    this.onLocate(this.chainOf(key));
  }

  // What the search looks at: a node's name, op and module path; an input's or output's label.
  hayOf(key) {
    if (key.startsWith('n:')) {
      const n = this.model.doc.graph.nodes[this.model.index.get(Number(key.slice(2)))];
      return `${n.name} ${n.op} ${this.hierarchy.groups[this.hierarchy.groupOf.get(n.id)].path}`.toLowerCase();
    }
    return this.info.get(key)?.label.toLowerCase() ?? '';
  }

  // The drawn box an item is in: its own, or the closed group's it is folded into.
  drawnKey(key) { return key.startsWith('n:') ? this.keyOf(Number(key.slice(2))) : key; }

  // Finds the nodes (folded away or not) whose name, op or module contains
  // `text`, and the inputs and outputs whose label does; highlights the boxes
  // that hold them and returns how many there are.
  search(text, { keepIndex = false } = {}) {
    const q = text.trim().toLowerCase();
    this.query = q;
    if (!keepIndex) {
      this.matches = [];
      this.matchIndex = -1;
      if (q && this.model) {
        const { doc } = this.model;
        for (const vid of doc.graph.inputs) if (this.hayOf(`in:${vid}`).includes(q)) this.matches.push(`in:${vid}`);
        for (const n of doc.graph.nodes) if (this.hayOf(`n:${n.id}`).includes(q)) this.matches.push(`n:${n.id}`);
        doc.graph.outputs.forEach((_, i) => { if (this.hayOf(`out:${i}`).includes(q)) this.matches.push(`out:${i}`); });
      }
    }
    const lit = new Set(this.matches.map((k) => this.drawnKey(k)));
    for (const [key, g] of this.elements) {
      if (!g.classList.contains('node')) continue;
      g.classList.toggle('match', lit.has(key));
      g.classList.toggle('dim', !!q && !lit.has(key));
    }
    return this.matches.length;
  }

  // Goes to the next match: opens the groups around it, lays out again when
  // that changed what is drawn, selects it and centres on it.
  async nextMatch() {
    if (!this.matches.length) return;
    this.matchIndex = (this.matchIndex + 1) % this.matches.length;
    const key = this.matches[this.matchIndex];
    if (key.startsWith('n:') && this.hierarchy.reveal(Number(key.slice(2)))) await this.relayout();
    this.select(key, { center: true });
  }

  // Opens the groups around a node (by name) and selects it.
  async reveal(name, options = {}) {
    const n = this.model.doc.graph.nodes.find((x) => x.name === name);
    if (!n) return false;
    if (this.hierarchy.reveal(n.id)) await this.relayout();
    this.select(`n:${n.id}`, { center: true, ...options });
    return true;
  }

  // Per-node times ({ node, ms, engine, gflops, winograd }[]) of a profiled
  // run: the time under each node drawn, and the run-time overlay.
  overlayTimes(times) {
    this.times = times ?? null;
    this.setOverlay(times ? 'time' : this.overlay === 'time' ? 'op' : this.overlay);
  }

  // The overlay's number for a drawn box; null where it has none.
  overlayValue(kind, meta) {
    const h = this.hierarchy;
    const { values } = this.model;
    if (meta.kind === 'op') {
      const n = meta.node;
      if (kind === 'flops') return meta.flops;
      if (kind === 'params') return n.inputs.reduce((a, v) => a + (values[v].constant ? numel(values[v].shape) ?? 0 : 0), 0);
      if (kind === 'size') return numel(values[n.outputs[0]]?.shape);
      if (kind === 'time') return this.timeByName?.get(n.name)?.ms ?? null;
      if (kind === 'error') return this.errors?.get(n.name)?.rel ?? null;
    } else if (meta.kind === 'group') {
      const group = h.groups[meta.group];
      if (kind === 'flops') return group.flops;
      if (kind === 'params') return group.parameters;
      if (kind === 'size' || kind === 'time' || kind === 'error') return this.groupSums?.get(meta.group) ?? null;
    }
    return null;
  }

  setOverlay(kind) {
    this.overlay = kind;
    this.timeByName = this.times ? new Map(this.times.map((t) => [t.node, t])) : null;
    this.groupSums = null;
    if (kind === 'size' || kind === 'time' || kind === 'error') {
      // A closed group's output size or time: its nodes' sum; its error: their largest.
      const h = this.hierarchy;
      const join = kind === 'error' ? Math.max : (a, b) => a + b;
      this.groupSums = new Map();
      for (const n of this.model.doc.graph.nodes) {
        const v = this.overlayValue(kind, { kind: 'op', node: n });
        if (v === null) continue;
        for (const g of h.chain(h.groupOf.get(n.id))) this.groupSums.set(g, this.groupSums.has(g) ? join(this.groupSums.get(g), v) : v);
      }
    }
    this.recolor();
    this.onOverlay(kind, this.legend());
  }

  // Colours every box for the overlay (op kinds: the categories' colours),
  // and writes the run's times under the nodes.
  recolor() {
    for (const el of this.viewport.querySelectorAll('.time')) el.remove();
    const kind = this.overlay;
    const numbers = new Map();
    if (kind !== 'op') {
      for (const [key, meta] of this.info) {
        const v = this.overlayValue(kind, meta);
        if (v !== null && v !== undefined && Number.isFinite(v)) numbers.set(key, v);
      }
    }
    this.scaleMax = Math.max(0, ...numbers.values());
    const top = Math.log1p(this.scaleMax) || 1;
    for (const [key, g] of this.elements) {
      const meta = this.info.get(key);
      const rect = g.querySelector('rect.box');
      if (!rect) continue;
      g.dataset.value = numbers.has(key) ? String(numbers.get(key)) : '';
      if (kind === 'op') {
        const colors = meta.kind === 'input' ? INPUT : meta.kind === 'output' ? OUTPUT : meta.kind === 'group' ? GROUP
          : CATEGORIES.find((c) => c.test(shortOp(meta.node.op), meta.canonical));
        rect.setAttribute('fill', colors.fill);
      } else if (meta.kind === 'op' || meta.kind === 'group') {
        const color = kind === 'error' ? (v) => errorColor(v, this.tolerance) : (v) => rampColor(Math.log1p(v) / top);
        rect.setAttribute('fill', numbers.has(key) ? color(numbers.get(key)) : NONE_FILL);
      }
      g.classList.toggle('past', kind === 'error' && numbers.get(key) > this.tolerance);
    }
    this.markDiff();
    if (!this.timeByName) return;
    for (const [key, g] of this.elements) {
      const meta = this.info.get(key);
      if (!meta.node || !this.timeByName.has(meta.node.name)) continue;
      const { ms, engine, gflops, winograd } = this.timeByName.get(meta.node.name);
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
    }
  }

  // Each node's error against a reference run (Map: node name -> { abs, rel }),
  // and the tolerance past which a node is marked; shown as the error overlay.
  setErrors(errors, tolerance) {
    this.errors = errors;
    this.tolerance = tolerance;
    this.setOverlay(errors ? 'error' : this.overlay === 'error' ? 'op' : this.overlay);
  }

  // The side-by-side view's marks: Map(node id -> 'same' | 'changed' |
  // 'removed' | 'added'), or null. A closed group is marked changed when
  // anything inside it is not the same, and says how much.
  setDiff(statusById) {
    this.diff = statusById;
    this.markDiff();
  }

  markDiff() {
    for (const el of this.viewport.querySelectorAll('.diff-count')) el.remove();
    const inGroup = new Map();  // group -> { added, removed, changed }
    if (this.diff) {
      const h = this.hierarchy;
      for (const [id, status] of this.diff) {
        if (status === 'same') continue;
        for (const g of h.chain(h.groupOf.get(id) ?? 0)) {
          if (!inGroup.has(g)) inGroup.set(g, { added: 0, removed: 0, changed: 0 });
          ++inGroup.get(g)[status];
        }
      }
    }
    for (const [key, g] of this.elements) {
      const meta = this.info.get(key);
      let status = null;
      if (this.diff && meta.kind === 'op') status = this.diff.get(meta.node.id) ?? null;
      if (this.diff && meta.kind === 'group' && inGroup.has(meta.group)) status = 'changed';
      for (const s of ['same', 'changed', 'removed', 'added']) g.classList.toggle(`diff-${s}`, status === s);
      g.dataset.diff = status ?? '';
      if (meta.kind === 'group' && inGroup.has(meta.group)) {
        const c = inGroup.get(meta.group);
        const t = document.createElementNS(SVG, 'text');
        t.setAttribute('class', 'diff-count');
        t.setAttribute('x', this.boxes.get(key).width + 6);
        t.setAttribute('y', 14);
        t.textContent = [c.added && `+${c.added}`, c.removed && `−${c.removed}`, c.changed && `~${c.changed}`].filter(Boolean).join(' ');
        g.appendChild(t);
      }
    }
  }

  // The legend's HTML for the overlay: the op kinds, or the colour ramp with its largest number.
  legend() {
    if (this.overlay === 'error') {
      const tol = this.tolerance;
      const tolText = escapeXml(Number(tol).toExponential());
      const within = `linear-gradient(90deg, ${errorColor(0, tol)}, ${errorColor(tol, tol)})`;
      const past = `linear-gradient(90deg, ${errorColor(tol * 1.0001, tol)}, ${errorColor(1, tol)})`;
      return `<span id="legend-overlay"><b>${OVERLAYS.error.label}</b> ≤1e-8 <i class="ramp" style="background:${within}"></i> ${tolText} ` +
        `<i class="ramp" style="background:${past}"></i> 1 (log scale)</span>` +
        `<span><i class="past-swatch"></i>past the tolerance ${tolText}</span>` +
        `<span><i style="background:${NONE_FILL};border:1px solid #9aa3b2"></i>not compared</span>`;
    }
    if (this.overlay === 'op') {
      return [...CATEGORIES, { name: 'module (click to unfold)', ...GROUP }]
        .map((c) => `<span><i style="background:${c.fill};border:1px solid ${c.stroke}"></i>${c.name}</span>`).join('');
    }
    const o = OVERLAYS[this.overlay];
    const ramp = `linear-gradient(90deg, ${rampColor(0)}, ${rampColor(0.5)}, ${rampColor(1)})`;
    return `<span id="legend-overlay"><b>${o.label}</b> 0 <i class="ramp" style="background:${ramp}"></i> ${escapeXml(human(this.scaleMax, o.unit))} (log scale)</span>` +
      `<span><i style="background:${NONE_FILL};border:1px solid #9aa3b2"></i>not counted</span>`;
  }

  apply() { this.viewport.setAttribute('transform', `translate(${this.t.x},${this.t.y}) scale(${this.t.k})`); }

  // The whole graph in view, as large as fits (at most 1.2×).
  fit() {
    if (!this.layout) return;
    const r = this.svg.getBoundingClientRect();
    const w = this.layout.width || 1;
    const h = this.layout.height || 1;
    const k = Math.min(1.2, Math.max(0.005, Math.min((r.width - 40) / w, (r.height - 40) / h)));
    this.t = { k, x: (r.width - w * k) / 2, y: (r.height - h * k) / 2 };
    this.apply();
  }

  // A drawn box's top left corner on the screen (null: not drawn).
  screenBox(key) {
    const n = this.boxes?.get(key);
    return n ? { x: this.t.x + n.x * this.t.k, y: this.t.y + n.y * this.t.k } : null;
  }

  // A box (an opened group's frame) wholly on the screen: moved, and zoomed
  // out where it is larger than the screen.
  bringIntoView(key) {
    const n = this.boxes.get(key);
    const r = this.svg.getBoundingClientRect();
    const m = 20;
    let { k, x, y } = this.t;
    k = Math.min(k, (r.width - 2 * m) / n.width, (r.height - 2 * m) / n.height);
    if (k !== this.t.k) {  // zoomed out: about the box's top centre as it was
      const cx = x + (n.x + n.width / 2) * this.t.k;
      x = cx - (n.x + n.width / 2) * k;
      y += n.y * (this.t.k - k);
    }
    const left = x + n.x * k;
    const top = y + n.y * k;
    x += Math.max(0, m - left) - Math.max(0, left + n.width * k - (r.width - m));
    y += Math.max(0, m - top) - Math.max(0, top + n.height * k - (r.height - m));
    this.t = { k, x, y };
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

  // Centres on a group: its frame when open, its box when closed, else the box it is folded into.
  centerOnGroup(g) {
    for (const key of [`c:${g}`, `g:${g}`]) if (this.boxes.has(key)) return this.centerOn(key);
    const owner = this.hierarchy.closedOwner(g);
    if (owner !== null) this.centerOn(`g:${owner}`);
  }

  installPanZoom() {

    let drag = null;
    this.svg.addEventListener('pointerdown', (e) => {
      if (e.target.closest('.node, .frame-head')) return;  // a click there, not a pan (a pan's pointer capture takes the click)
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

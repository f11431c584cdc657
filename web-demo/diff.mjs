// Two graphs matched node by node, for the page's side-by-side view: the
// graph before and after optimize(), a .ts and the .pt2 of one model, or two
// versions of a model. Plain data in and out (no DOM), so Node tests it.
//
// Nodes are matched within their module (the innermost module's path: a
// model's structure, which both files of one model share), by op, in order:
// the longest common subsequence of the two op sequences (Myers' diff, so a
// 10,000-node module with a few edits costs little). A matched pair whose
// shapes (outputs', weights') or attributes differ (sameNode) is changed;
// between two matched pairs, the nodes left on both sides are paired in
// order as changed (an op swapped for another: relu for gelu), and what is
// left over is removed (only in the first graph) or added (only in the
// second). Ops are compared by their canonical name where the op table
// knows it (so TorchScript's aten::_convolution meets torch.export's
// aten.conv2d.default as "conv"), else by their name without namespace and
// overload.

// "aten::add" and torch.export's "aten.add.Tensor" alike: "add".
export const shortOp = (op) => op.replace(/^(aten|prim)::/, '').replace(/^(aten|prim)\.([^.]+)(\..*)?$/, '$2');

// A graph's nodes as the matching reads them, from a described graph
// (the exported format's document and the canonical op of each node):
// [{ id, name, module, op, shapes, attributes }] in execution order; `shapes`
// the outputs' and then the weights' shapes (null where the file does not
// say: a TorchScript file read without input shapes), each as a string.
export function diffNodes(doc, canonical = []) {
  const { values, nodes, modules = [] } = doc.graph;
  return nodes.map((n, i) => {
    const outputs = n.outputs.map((v) => values[v]?.shape ?? null);
    const weights = n.inputs.filter((v) => values[v]?.constant).map((v) => values[v].shape ?? null);
    // arg_names says how the inputs were passed (a reader's spelling), not what the node computes.
    const attributes = Object.fromEntries(Object.entries(n.attributes ?? {}).filter(([k]) => k !== 'arg_names')
      .map(([k, a]) => [k, JSON.stringify(a?.value ?? a)]));
    return {
      id: n.id,
      name: n.name,
      module: n.module === undefined || n.module === null ? '' : modules[n.module]?.path ?? '',
      op: canonical[i] ?? shortOp(n.op),
      shapes: [...outputs, null, ...weights].map((sh) => (sh ? JSON.stringify(sh) : null)),
      attributes,
    };
  });
}

// Whether two matched nodes compute the same: the same shapes where both
// files know them, and the same
// value for each attribute both name (a TorchScript file spells out
// arguments, cudnn_enabled, that a torch.export program leaves to the
// schema's defaults; an attribute one side alone has, fused_activation
// after Optimize, makes them differ).
export function sameNode(x, y) {
  // As many outputs and weights, each of the same shape where both files know it.
  if (x.shapes.length !== y.shapes.length || x.shapes.some((sh, i) => sh && y.shapes[i] && sh !== y.shapes[i])) return false;
  const fused = (n) => n.attributes.fused_activation ?? null;
  if (fused(x) !== fused(y)) return false;
  for (const [k, v] of Object.entries(x.attributes)) if (k in y.attributes && y.attributes[k] !== v) return false;
  return true;
}

// The longest common subsequence of a and b under `same`, as pairs of
// indexes [i, j] in order: Myers' greedy diff, O((N + M) D), traced back
// through the furthest reach kept per edit count. The trace grows with
// (N + M) D: past TRACE_LIMIT entries (two big modules with little in
// common) it gives up and returns null.
const TRACE_LIMIT = 3e7;
export function commonSubsequence(a, b, same = (x, y) => x === y) {
  const n = a.length;
  const m = b.length;
  const off = n + m + 1;
  const v = new Int32Array(2 * (n + m) + 3);
  const trace = [];
  search: for (let d = 0; d <= n + m; ++d) {
    if ((d + 1) * v.length > TRACE_LIMIT) return null;
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && same(a[x], b[y])) { ++x; ++y; }
      v[off + k] = x;
      if (x >= n && y >= m) break search;
    }
  }
  const pairs = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; --d) {
    const reach = trace[d];
    const k = x - y;
    const pk = k === -d || (k !== d && reach[off + k - 1] < reach[off + k + 1]) ? k + 1 : k - 1;
    const px = reach[off + pk];
    const py = px - pk;
    while (x > px && y > py) { --x; --y; pairs.push([x, y]); }  // the run of matches after the edit
    x = px;
    y = py;
  }
  return pairs.reverse();
}

// Matches graph `a`'s nodes with graph `b`'s (diffNodes' records). Returns
// { a: Map(id -> status), b: Map(id -> status), pairs: [[idA, idB]], counts },
// status one of 'same', 'changed', 'removed' (a only), 'added' (b only), and
// counts { same, changed, removed, added } in nodes (a changed pair counts once).
export function diffGraphs(a, b) {
  const byModule = (nodes) => {
    const out = new Map();
    for (const n of nodes) {
      if (!out.has(n.module)) out.set(n.module, []);
      out.get(n.module).push(n);
    }
    return out;
  };
  const ma = byModule(a);
  const mb = byModule(b);
  const statusA = new Map();
  const statusB = new Map();
  const pairs = [];
  const counts = { same: 0, changed: 0, removed: 0, added: 0 };
  const pair = (x, y, status) => {
    statusA.set(x.id, status);
    statusB.set(y.id, status);
    pairs.push([x.id, y.id]);
    ++counts[status];
  };
  // The nodes left between two matched pairs: paired in order as changed, the rest removed or added.
  const gap = (xs, ys) => {
    const k = Math.min(xs.length, ys.length);
    for (let i = 0; i < k; ++i) pair(xs[i], ys[i], 'changed');
    for (const x of xs.slice(k)) { statusA.set(x.id, 'removed'); ++counts.removed; }
    for (const y of ys.slice(k)) { statusB.set(y.id, 'added'); ++counts.added; }
  };
  for (const module of new Set([...ma.keys(), ...mb.keys()])) {
    const xs = ma.get(module) ?? [];
    const ys = mb.get(module) ?? [];
    let i = 0;
    let j = 0;
    // Too different to align (commonSubsequence gave up): paired in order.
    for (const [pi, pj] of commonSubsequence(xs, ys, (x, y) => x.op === y.op) ?? []) {
      gap(xs.slice(i, pi), ys.slice(j, pj));
      pair(xs[pi], ys[pj], sameNode(xs[pi], ys[pj]) ? 'same' : 'changed');
      i = pi + 1;
      j = pj + 1;
    }
    gap(xs.slice(i), ys.slice(j));
  }
  return { a: statusA, b: statusB, pairs, counts };
}

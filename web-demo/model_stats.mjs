// What a node costs, from the exported document alone: FLOPs (two per
// multiply-add) and parameters (the elements of its constant inputs).
const numel = (shape) => (shape ? shape.reduce((a, b) => a * (typeof b === 'number' ? b : NaN), 1) : NaN);

export function nodeCost(doc, node) {
  const values = doc.graph.values;
  const inputs = node.inputs.map((i) => values[i]);
  const out = values[node.outputs[0]];
  const attr = (k) => node.attributes?.[k]?.value;
  let params = 0;
  for (const v of inputs) if (v.constant && v.shape) params += numel(v.shape);
  const op = node.op.replace(/^aten::/, '').replace(/_$/, '');
  const outN = numel(out?.shape);
  let flops = 0;
  const transposed = /conv_transpose/.test(op) || (op === '_convolution' && attr('transposed'));
  if (/^(_convolution|conv[123]d|conv_transpose[123]d|convolution)$/.test(op) && inputs[1]?.shape) {
    const w = inputs[1].shape;
    flops = transposed ? 2 * numel(inputs[0].shape) * numel(w.slice(1)) : 2 * outN * numel(w.slice(1));
  } else if ((op === 'linear' || op === 'addmm') && inputs[1]?.shape) {
    const w = inputs[op === 'addmm' ? 2 : 1].shape;
    flops = 2 * outN * w[op === 'addmm' ? 0 : 1];
  } else if (/pool/.test(op)) {
    const k = attr('kernel_size');
    flops = outN * (Array.isArray(k) ? numel(k) : 1);
  } else if (op === 'batch_norm') {
    flops = 2 * outN;
  } else if (/^(relu|sigmoid|tanh|hardtanh|clamp|add|sub|mul|div|softmax|log_softmax|hardswish|gelu|silu|leaky_relu|elu)$/.test(op)) {
    flops = outN;
  }
  return { flops: Number.isFinite(flops) ? flops : 0, params };
}

export function modelCost(doc) {
  let flops = 0;
  for (const n of doc.graph.nodes) flops += nodeCost(doc, n).flops;
  let params = 0;
  for (const v of doc.graph.values) if (v.constant && v.shape) params += numel(v.shape);
  return { flops, params };
}

export function human(n, unit = '') {
  if (!Number.isFinite(n)) return '?';
  const steps = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  for (const [v, s] of steps) if (Math.abs(n) >= v) return `${(n / v).toFixed(n / v >= 100 ? 0 : n / v >= 10 ? 1 : 2)} ${s}${unit}`;
  return `${n} ${unit}`.trim();
}

// What a model holds, from the exported document alone: parameters (the
// elements of its constants). FLOPs are the core's (node_flops, and the
// module tree's sums), never counted here.
export const numel = (shape) => (shape ? shape.reduce((a, b) => a * (typeof b === 'number' ? b : NaN), 1) : NaN);

// The elements of a node's constant inputs.
export function nodeParameters(doc, node) {
  let params = 0;
  for (const i of node.inputs) {
    const v = doc.graph.values[i];
    if (v.constant && v.shape) params += numel(v.shape);
  }
  return params;
}

// The elements of every constant: weights, biases, and buffers such as a batch norm's running statistics.
export function modelParameters(doc) {
  let params = 0;
  for (const v of doc.graph.values) if (v.constant && v.shape) params += numel(v.shape);
  return params;
}

export function human(n, unit = '') {
  if (!Number.isFinite(n)) return '?';
  const steps = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  for (const [v, s] of steps) if (Math.abs(n) >= v) return `${(n / v).toFixed(n / v >= 100 ? 0 : n / v >= 10 ? 1 : 2)} ${s}${unit}`;
  return `${n} ${unit}`.trim();
}

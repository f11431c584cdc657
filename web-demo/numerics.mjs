// Each node's output against a reference run's (a dump that `tracegraph run
// --dump-nodes` writes: the inputs and outputs as "@input.N" / "@output.N",
// every node's value by its node name, "NAME:K" for a node's output K), for
// the numerics overlay. Plain data in and out.

// Errors of one tensor against the reference's: the largest absolute
// difference, and that over the reference's largest magnitude (the Run
// panel's "max rel. error", so a layer of large values is not flagged for
// float32's rounding). NaN where the shapes differ.
export function tensorError(got, want) {
  if (got.shape.length !== want.shape.length || got.shape.some((d, i) => d !== want.shape[i])) return { abs: NaN, rel: NaN };
  let abs = 0;
  let scale = 1e-12;
  for (let i = 0; i < want.data.length; ++i) {
    const w = Number(want.data[i]);
    const d = Math.abs(Number(got.data[i]) - w);
    if (!(d <= abs)) abs = d;  // a NaN difference wins
    scale = Math.max(scale, Math.abs(w));
  }
  return { abs, rel: abs / scale };
}

// Map(node name -> { abs, rel, compared }) over the values a run kept
// (keepNodeOutputs()'s [{ key, node, index }] and the run's outputs) that the
// reference holds: a node's error is its outputs' largest.
export function nodeErrors(reference, kept, outputs) {
  const out = new Map();
  for (const { key, node, index } of kept) {
    const want = reference[key];
    if (!want || !outputs[index]) continue;
    const e = tensorError(outputs[index], want);
    const had = out.get(node);
    if (!had) out.set(node, { ...e, compared: 1 });
    else out.set(node, { abs: worse(had.abs, e.abs), rel: worse(had.rel, e.rel), compared: had.compared + 1 });
  }
  return out;
}

const worse = (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b));

// The first node in execution order whose error is past `tolerance` (or
// NaN: the shapes differ), or null.
export function firstPast(nodes, errors, tolerance) {
  for (const n of nodes) {
    const e = errors.get(n.name);
    if (e && !(e.rel <= tolerance)) return n;
  }
  return null;
}

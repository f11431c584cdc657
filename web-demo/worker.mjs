// The page's wasm side, off the main thread: holds the TracedGraph, loads,
// optimizes and runs it, so the page never freezes. Messages are
// { id, type, ...args } and answers { id, ok, result | error }.
import { loadGraph } from '/js/tracegraph.mjs';

let graph = null;
let finalizedWith = null;  // the { threads, profile } of the last finalize

function describe() {
  return {
    document: graph.document,
    canonical: graph.nodes.map((n) => n.canonical),
    activation: graph.outputActivation(),
    moduleGraph: graph.moduleGraph(),
    weightStats: graph.weightStats(),
  };
}

const handlers = {
  async load({ json, weights, jsonName, weightsName }) {
    const next = await loadGraph(json, weights, { jsonName, weightsName });
    if (graph) graph.dispose();  // only once the new one loaded: a bad file keeps the old
    graph = next;
    finalizedWith = null;
    return describe();
  },
  optimize() {
    const report = graph.optimize();
    finalizedWith = null;
    return { report, ...describe() };
  },
  run({ inputs, warm, threads, profile }) {
    const wanted = JSON.stringify({ threads, profile });
    let finalizeMs = 0;
    if (finalizedWith !== wanted) {
      const t = performance.now();
      graph.finalize({ threads, profile });
      finalizeMs = performance.now() - t;
      finalizedWith = wanted;
    }
    let t = performance.now();
    const outputs = graph.run(inputs);
    const firstMs = performance.now() - t;
    const times = [];
    for (let i = 0; i < warm; ++i) {
      t = performance.now();
      graph.run(inputs);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const medianMs = times.length ? times[(times.length - 1) >> 1] : firstMs;
    return { outputs, finalizeMs, firstMs, medianMs, profile: profile ? graph.profile() : null,
             threads: crossOriginIsolated ? threads : 1 };
  },
};

self.onmessage = async (e) => {
  const { id, type, ...args } = e.data;
  try {
    if (type !== 'load' && !graph) throw Object.assign(new Error('no model is loaded'), { code: 'invalid_argument' });
    const result = await handlers[type](args);
    const transfer = result && result.outputs ? result.outputs.map((o) => o.data.buffer) : [];
    self.postMessage({ id, ok: true, result }, transfer);
  } catch (err) {
    self.postMessage({ id, ok: false, error: { code: err.code ?? 'internal', message: String(err.message ?? err) } });
  }
};

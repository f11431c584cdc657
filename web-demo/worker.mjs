// The page's wasm side, off the main thread: holds the TracedGraph, loads,
// optimizes and runs it, so the page never freezes. Messages are
// { id, type, ...args } and answers { id, ok, result | error }.
//
// A finalized graph is fixed (as in C++), so the worker keeps the file's
// bytes and reads the graph again when a run wants another thread count,
// profiling, or input shapes other than the export's.
import { init, loadGraph, loadModel, threadsAvailable } from '/js/tracegraph.mjs';

// The wasm module compiled while the page starts, not when the first model opens
// (a failure here is the first load's to report).
init().catch(() => {});

let source = null;     // { json, weights, jsonName, weightsName }: the bytes as opened (weights null: a .pt2 in `json`)
let graph = null;
let optimized = false;
let finalizedWith = null;  // JSON of { threads, profile, shapes } of the last finalize
let threadsUsed = 1;

const sameShapes = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const exportShapes = (g) => g.document.graph.inputs.map((i) => g.document.graph.values[i].shape ?? null);

// `moduleTree`'s groups go without their lists of node names: the page
// finds a node's group by its module's path (the document's modules table).
function describe(g = graph) {
  const nodes = g.nodes;
  return {
    document: g.document,
    canonical: nodes.map((n) => n.canonical),
    flops: nodes.map((n) => n.flops ?? null),  // the core's node_flops (an older module has none: null)
    moduleTree: { groups: g.moduleTree().groups.map(({ nodes: _, ...group }) => group) },
    activation: g.outputActivation(),
    moduleGraph: g.moduleGraph(),
    weightStats: g.weightStats(),
    geometry: geometryRows(g),
  };
}

// The network's geometry per output and spatial axis, as plain rows (the
// functions geometry() gives stay here): what a blockwise run needs.
function geometryRows(g) {
  try {
    return g.geometry().map((o) => ({
      output: o.output,
      input: o.input,
      axes: o.axes.map((a) => (a.known
        ? { dim: a.dim, valid: a.valid, offset: a.offset, stride: a.stride, contextBefore: a.contextBefore }
        : { dim: a.dim, unknown: `${a.unknown.op} (${a.unknown.node}): ${a.unknown.reason}` })),
    }));
  } catch (e) {
    return [];  // an older module without geometry()
  }
}

async function fresh({ shapes = null, optimize = optimized, threads = 1 } = {}) {
  // More than one thread: the threaded build, when the page is cross-origin isolated.
  const threaded = threads > 1 && threadsAvailable();
  const next = await read(source, { shapes, threads: threaded });
  if (shapes && !sameShapes(shapes, exportShapes(next))) next.setInputShapes(shapes);
  let report = null;
  if (optimize) report = next.optimize();
  if (graph) graph.dispose();
  graph = next;
  finalizedWith = null;
  return report;
}

// Reads a model's bytes as opened: { json, weights (null: a .pt2 or .ts in `json`), jsonName, weightsName, inputShapes }.
const read = (s, { shapes = null, threads = false } = {}) => (s.weights
  ? loadGraph(s.json, s.weights, { jsonName: s.jsonName, weightsName: s.weightsName, threads })
  : loadModel(s.json, { name: s.jsonName, threads, inputShapes: shapes ?? s.inputShapes }));

const handlers = {
  async load(args) {
    const previous = source;
    source = args;
    const t = performance.now();
    try {
      optimized = false;
      await fresh();  // a bad file throws here and leaves the graph shown before in place
    } catch (e) {
      source = previous;
      throw e;
    }
    const t1 = performance.now();
    const described = describe();
    return { ...described, timings: { readMs: t1 - t, describeMs: performance.now() - t1 } };
  },
  async optimize() {
    const report = await fresh({ optimize: true });
    optimized = true;
    return { report, ...describe() };
  },
  // Finalizes for these input shapes before the page makes the inputs, so
  // that shapes too large (out_of_memory) or a file's bad attributes are
  // refused before any input is allocated. Returns the milliseconds it took
  // (0 when the graph was already finalized so).
  async prepare({ shapes, threads, profile }) {
    const wanted = JSON.stringify({ threads, profile, shapes });
    if (finalizedWith === wanted) return { finalizeMs: 0 };
    if (finalizedWith !== null || threads > 1 || !sameShapes(shapes, exportShapes(graph))) await fresh({ shapes, threads });
    const t = performance.now();
    threadsUsed = graph.finalize({ threads, profile });
    finalizedWith = wanted;
    return { finalizeMs: performance.now() - t };
  },
  // Runs the graph (as shown: optimized or not) keeping every node's value
  // (keepNodeOutputs()), for the numerics overlay: { kept: [{ key, node,
  // output, index }], outputs }. The next run reads the file again.
  async runNodes({ inputs }) {
    await fresh({ shapes: inputs.map((t) => t.shape) });
    const kept = graph.keepNodeOutputs();
    graph.finalize({ threads: 1 });
    finalizedWith = 'every node kept';
    return { kept, outputs: graph.run(inputs) };
  },
  // Describes another file, for the side-by-side view; the graph shown stays.
  async describeOther(args) {
    const other = await read(args);
    try {
      return describe(other);
    } finally {
      other.dispose();
    }
  },
  async run({ inputs, warm, threads, profile }) {
    const { finalizeMs } = await handlers.prepare({ shapes: inputs.map((t) => t.shape), threads, profile });
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
    return { outputs, finalizeMs, firstMs, medianMs, profile: profile ? graph.profile() : null, threads: threadsUsed };
  },
};

self.onmessage = async (e) => {
  const { id, type, ...args } = e.data;
  try {
    if (type !== 'load' && type !== 'describeOther' && !graph) throw Object.assign(new Error('no model is loaded'), { code: 'invalid_argument' });
    const result = await handlers[type](args);
    const transfer = result && result.outputs ? result.outputs.map((o) => o.data.buffer) : [];
    self.postMessage({ id, ok: true, result }, transfer);
  } catch (err) {
    self.postMessage({ id, ok: false, error: { code: err.code ?? 'internal', message: String(err.message ?? err) } });
  }
};

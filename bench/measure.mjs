// One measurement protocol for every engine, in Node and in the browser:
// load (read + prepare), one cold run, warm-ups, then timed warm runs.
export function inputFor(shape, seed = 1) {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; ++i) {  // xorshift: the same numbers for every engine
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    data[i] = (s / 4294967296) * 2 - 1;
  }
  return data;
}

function summary(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p) => {
    const idx = p * (sorted.length - 1);
    const lo = Math.floor(idx);
    const hi = Math.min(lo + 1, sorted.length - 1);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (idx - lo);
  };
  return { median: at(0.5), p10: at(0.1), p90: at(0.9) };
}

export async function measure(load, { warmup = 3, runs = 20 } = {}) {
  let t = performance.now();
  const run = await load();
  const loadMs = performance.now() - t;
  t = performance.now();
  const output = await run();
  const firstMs = performance.now() - t;
  for (let i = 0; i < warmup; ++i) await run();
  const times = [];
  for (let i = 0; i < runs; ++i) {
    t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  return { load: loadMs, first: firstMs, ...summary(times), checksum: output ? Array.from(output.slice(0, 4)) : null };
}

// tracegraph's wasm module (the threaded build for more than one thread):
// load the exported graph, optimize, finalize.
export function tracegraphLoader(api, json, weights, input, shape, threads, convAlgorithm = 'fastest') {
  return async () => {
    const g = await api.loadGraph(json, weights, { threads: threads > 1 });
    g.optimize();
    g.finalize({ threads, convAlgorithm });
    return () => g.run([{ data: input, shape }])[0].data;
  };
}

// onnxruntime-web or -node on the ONNX export of the same module.
export function ortLoader(ort, onnx, input, shape, threads, providers) {
  return async () => {
    const session = await ort.InferenceSession.create(onnx, {
      executionProviders: providers, intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    });
    const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', input, shape) };
    return async () => (await session.run(feeds))[session.outputNames[0]].data;
  };
}

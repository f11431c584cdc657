// The browser half of bench/run.mjs: one engine, model and thread count per
// page load (?engine=&model=&threads=&runs=&warmup=); the result lands in
// window.__bench for the driver, and on the page.
import { inputFor, measure, ortLoader, tracegraphLoader } from './measure.mjs';

const q = new URLSearchParams(location.search);
const engine = q.get('engine');
const model = q.get('model');
const threads = Number(q.get('threads') ?? 1);
const out = document.getElementById('out');

async function main() {
  const models = await (await fetch('/bench/models.json')).json();
  const shape = models[model].input_shape;
  const input = inputFor(shape);
  let load;
  if (engine === 'tracegraph-wasm') {
    const api = await import('/js/tracegraph.mjs');
    load = tracegraphLoader(api, `/bench/${model}/${model}.json`, `/bench/${model}/${model}.safetensors`, input, shape, threads);
  } else if (engine === 'ort-web') {
    const ort = await import('/vendor/onnxruntime-web/dist/ort.min.mjs');
    ort.env.wasm.numThreads = threads;
    ort.env.wasm.simd = true;
    ort.env.wasm.wasmPaths = '/vendor/onnxruntime-web/dist/';
    const bytes = new Uint8Array(await (await fetch(`/bench/${model}.onnx`)).arrayBuffer());
    load = ortLoader(ort, bytes, input, shape, threads, ['wasm']);
  } else if (engine === 'tfjs-wasm') {
    const { tfjsLoader } = await import('./tfjs.mjs');
    const doc = await (await fetch(`/bench/optimized/${model}/${model}.json`)).json();
    const weights = await (await fetch(`/bench/optimized/${model}/${model}.safetensors`)).arrayBuffer();
    load = tfjsLoader(doc, weights, input, shape, threads, '/vendor/@tensorflow/tfjs-backend-wasm/dist/');
  } else {
    throw new Error(`unknown engine ${engine}`);
  }
  return measure(load, { runs: Number(q.get('runs') ?? 20), warmup: Number(q.get('warmup') ?? 3) });
}

main().then(
  (r) => { window.__bench = r; out.textContent = JSON.stringify(r, null, 1); },
  (e) => { window.__bench = { error: String(e && e.stack || e) }; out.textContent = String(e); },
);

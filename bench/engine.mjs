// One engine, one model, one thread count, in this Node process; prints the
// measurement as JSON. Run by bench/run.mjs, a process per configuration
// (onnxruntime fixes its thread count when it first starts).
// Usage: node bench/engine.mjs ENGINE MODEL THREADS RUNS WARMUP
//   ENGINE: tracegraph-wasm | tracegraph-wasm-direct | ort-web | ort-node | tfjs-wasm
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { inputFor, measure, ortLoader, tracegraphLoader } from './measure.mjs';

const [engine, model, threadsArg, runsArg, warmupArg] = process.argv.slice(2);
const threads = Number(threadsArg);
const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const benchDir = resolve(process.env.TRACEGRAPH_BENCH_DIR ?? join(root, 'build', 'bench'));
const jsDir = resolve(process.env.TRACEGRAPH_JS_DIR ?? join(root, 'build', 'wasm', 'js'));
const shape = JSON.parse(readFileSync(join(benchDir, 'models.json'), 'utf8'))[model].input_shape;
const input = inputFor(shape);
let load;
if (engine === 'tracegraph-wasm' || engine === 'tracegraph-wasm-direct') {
  // -direct: every convolution directly (no Winograd), for the ratio.
  const api = await import(join(jsDir, 'tracegraph.mjs'));
  load = tracegraphLoader(api, join(benchDir, model, `${model}.json`), join(benchDir, model, `${model}.safetensors`), input, shape, threads,
                          engine === 'tracegraph-wasm' ? 'fastest' : 'direct');
} else if (engine === 'ort-web') {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  load = ortLoader(ort, join(benchDir, `${model}.onnx`), input, shape, threads, ['wasm']);
} else if (engine === 'tfjs-wasm') {
  const { tfjsLoader } = await import('./tfjs.mjs');
  const dir = join(benchDir, 'optimized', model);
  const bytes = readFileSync(join(dir, `${model}.safetensors`));
  load = tfjsLoader(JSON.parse(readFileSync(join(dir, `${model}.json`), 'utf8')),
                    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), input, shape, threads);
} else if (engine === 'ort-node') {
  const ort = (await import('onnxruntime-node')).default;
  load = ortLoader(ort, join(benchDir, `${model}.onnx`), input, shape, threads, ['cpu']);
} else {
  throw new Error(`unknown engine ${engine}`);
}
try {
  const result = await measure(load, { runs: Number(runsArg ?? 20), warmup: Number(warmupArg ?? 3) });
  console.log(JSON.stringify(result));
  process.exit(0);
} catch (e) {
  console.error(`${engine}: ${e.message}`);  // the last line is what bench/run.mjs shows
  process.exit(1);
}

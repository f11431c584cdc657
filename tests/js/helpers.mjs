// Shared by the Node tests of the JavaScript API: where the built module and
// the exported test models are, and a reader for the models' .io.safetensors.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const jsDir = resolve(process.env.TRACEGRAPH_JS_DIR ?? join(root, 'build', 'wasm', 'js'));
export const exportedDir = resolve(process.env.TRACEGRAPH_EXPORTED_DIR ?? join(root, 'build', 'native', 'exported'));
export const dataDir = join(root, 'tests', 'data');

if (!existsSync(join(jsDir, 'tracegraph.mjs'))) throw new Error(`no tracegraph.mjs in ${jsDir}: build the wasm preset first`);
if (!existsSync(exportedDir)) throw new Error(`no exported test models in ${exportedDir}: run the native preset's tests first (export_test_models)`);

export const api = await import(join(jsDir, 'tracegraph.mjs'));

// The exported models: a graph's NAME.json (with NAME.safetensors), or the
// model file its facts name ("file": a .pt2 the Python exporter saved).
export function models() {
  return readdirSync(exportedDir).filter((m) => existsSync(join(exportedDir, m, `${m}.expected.json`)) &&
    existsSync(modelPath(m, JSON.parse(readFileSync(join(exportedDir, m, `${m}.expected.json`), 'utf8')))))
    .sort();
}

function modelPath(model, expected) {
  return join(exportedDir, model, expected.file ?? `${model}.json`);
}

export function modelFiles(model) {
  const dir = join(exportedDir, model);
  const expected = JSON.parse(readFileSync(join(dir, `${model}.expected.json`), 'utf8'));
  return { file: modelPath(model, expected), json: join(dir, `${model}.json`), weights: join(dir, `${model}.safetensors`),
           expected, io: readTensors(join(dir, `${model}.io.safetensors`)) };
}

// A model of modelFiles() by its file: the JSON pair through loadGraph, a .pt2 through loadModel.
export function loadFiles(f, options = {}) {
  return f.file.endsWith('.json') ? api.loadGraph(f.json, f.weights, options) : api.loadModel(f.file, options);
}

// { name: { data: Float32Array, shape } } of a float32 safetensors file.
export function readTensors(path) {
  const b = readFileSync(path);
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8'));
  const out = {};
  // float32, and the integers and bools a model takes (token ids, masks) in their own arrays.
  const views = { F32: Float32Array, I64: BigInt64Array, I32: Int32Array, BOOL: Uint8Array };
  for (const [k, v] of Object.entries(header)) {
    if (k === '__metadata__') continue;
    const View = views[v.dtype];
    if (!View) throw new Error(`${path}: ${k} is ${v.dtype}`);
    const [s, e] = v.data_offsets;
    const bytes = b.subarray(8 + n + s, 8 + n + e);
    out[k] = { shape: v.shape, data: new View(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) };
    if (v.dtype === 'BOOL') out[k].dtype = 'bool';
  }
  return out;
}

export function inputsOf(io) {
  const out = [];
  for (let i = 0; `input.${i}` in io; ++i) out.push(io[`input.${i}`]);
  return out;
}
export function outputsOf(io) {
  const out = [];
  for (let i = 0; `output.${i}` in io; ++i) out.push(io[`output.${i}`]);
  return out;
}

// max |got - want| / max |want|
export function relativeError(got, want) {
  if (got.length !== want.length) return Infinity;
  let err = 0;
  let scale = 1e-12;
  for (let i = 0; i < want.length; ++i) {
    err = Math.max(err, Math.abs(Number(got[i]) - Number(want[i])));
    scale = Math.max(scale, Math.abs(Number(want[i])));
  }
  return err / scale;
}

// The outputs of a run are the model's own (f = modelFiles(...)): shapes, and values within `tolerance`.
export function assertOutputsMatch(out, f, tolerance = 1e-4) {
  const want = outputsOf(f.io);
  assert.equal(out.length, want.length);
  out.forEach((o, i) => {
    assert.deepEqual(o.shape, f.expected.output_shapes[i], `output ${i} shape`);
    const err = relativeError(o.data, want[i].data);
    assert.ok(err <= tolerance, `output ${i}: relative error ${err}`);
  });
}

// After hostile loads: the module still reads and runs a valid model (unet2d) right.
export async function assertAValidModelStillRuns() {
  const f = modelFiles('unet2d');
  const g = await api.loadGraph(f.json, f.weights);
  try {
    g.finalize();
    assert.ok(relativeError(g.run(inputsOf(f.io))[0].data, outputsOf(f.io)[0].data) <= 1e-4);
  } finally {
    g.dispose();
  }
}

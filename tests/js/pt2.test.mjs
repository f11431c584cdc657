// loadModel on torch.export archives (.pt2) and TorchScript archives under Node: the archives
// tests/models/make_pt2_models.py made (the native preset's make_pt2_models
// test), read by the core's .pt2 reader inside the wasm module, in the IR
// torch.export gives and in core ATen. Where XNNPACK lowers every op the run
// matches the program's own outputs within 1e-4; where it lacks one, the test
// is skipped with the ops named (the portable kernels of issue 33).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { api, inputsOf, modelFiles, outputsOf, readTensors, relativeError } from './helpers.mjs';

const { loadModel, TracegraphError } = api;
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pt2Dir = resolve(process.env.TRACEGRAPH_PT2_DIR ?? join(root, 'build', 'pt2'));
if (!existsSync(join(pt2Dir, 'index.json'))) throw new Error(`no .pt2 archives in ${pt2Dir}: run the native preset's make_pt2_models test first`);
const index = JSON.parse(readFileSync(join(pt2Dir, 'index.json'), 'utf8'));

// Optimizes, finalizes and runs `g` on io's inputs against its outputs
// within 1e-4; a skip naming the ops where XNNPACK lacks one.
function optimizeAndRun(t, g, io) {
  g.optimize();
  try {
    g.finalize({ threads: 1 });
  } catch (e) {
    if (e instanceof TracegraphError && e.code === 'unsupported' && /cannot run/.test(e.message)) {
      t.skip(e.message);
      return;
    }
    throw e;
  }
  const out = g.run(inputsOf(io));
  const want = outputsOf(io);
  assert.equal(out.length, want.length);
  out.forEach((o, i) => {
    assert.deepEqual(o.shape, want[i].shape, `output ${i} shape`);
    const err = relativeError(o.data, want[i].data);
    assert.ok(err <= 1e-4, `output ${i}: relative error ${err}`);
  });
}

test('the archives are made', () => {
  assert.ok(index.models.length >= 40, `only ${index.models.length} models`);
});

for (const model of index.models) {
  for (const form of ['pt2', 'core.pt2']) {
    test(`${model}.${form} opens, names its activation and runs`, async (t) => {
      const expected = JSON.parse(readFileSync(join(pt2Dir, `${model}.expected.json`), 'utf8'));
      const io = readTensors(join(pt2Dir, `${model}.io.safetensors`));
      const g = await loadModel(join(pt2Dir, `${model}.${form}`));
      try {
        const activation = g.outputActivation();
        assert.equal(activation.length, expected.activation.length);
        if (form === 'pt2') expected.activation.forEach((want, i) => assert.equal(activation[i].kind, want.kind, `output ${i} activation`));
        optimizeAndRun(t, g, io);
      } finally {
        g.dispose();
      }
    });
  }
}

// The zoo's TorchScript files, traced and scripted, read by the core's TorchScript reader
// in wasm with their input shapes (the native preset's make_zoo_small makes them).
const zooDir = resolve(process.env.TRACEGRAPH_ZOO_DIR ?? join(root, 'build', 'zoo'));
const zooIndex = existsSync(join(zooDir, 'index.json')) ? JSON.parse(readFileSync(join(zooDir, 'index.json'), 'utf8')) : { small: [] };
test('the zoo is made', () => assert.ok(zooIndex.small.length >= 50, `only ${zooIndex.small.length} zoo models`));
for (const model of zooIndex.small) {
  const facts = JSON.parse(readFileSync(join(zooDir, `${model}.expected.json`), 'utf8'));
  test(`${model}.ts (${facts.how === 'trace' ? 'traced' : 'scripted'}) opens, names its activation and runs`, async (t) => {
    const io = readTensors(join(zooDir, `${model}.io.safetensors`));
    const inputShapes = inputsOf(io).map((x) => x.shape);
    // Scripted code that branches on the input's shape asks for it by name and line.
    try {
      (await loadModel(join(zooDir, `${model}.ts`))).dispose();
    } catch (e) {
      assert.equal(facts.how, 'script', `a traced model needs input shapes: ${e.message}`);
      assert.ok(e instanceof TracegraphError && e.code === 'needs_input_shapes' && /\.py line \d+/.test(e.message), e.message);
    }
    const g = await loadModel(join(zooDir, `${model}.ts`), { inputShapes });
    try {
      const activation = g.outputActivation();
      facts.activation.forEach((want, i) => {
        // No shapes without LibTorch: concatenated heads' channel ranges are not known.
        assert.equal(activation[i].kind, want.kind === 'per_channel' ? 'unknown' : want.kind, `output ${i} activation`);
      });
      optimizeAndRun(t, g, io);
    } finally {
      g.dispose();
    }
  });
}

// The path a TorchScript user takes (issue 33's measure): the library zoo's
// traced models, exported by `tracegraph export` to the JSON pair and run
// through the JavaScript API (scripts/library_zoo.sh makes them; absent, no
// test is made here).
const exportedLibrary = process.env.TRACEGRAPH_LIBRARY_EXPORTED_DIR;
const tracedIndex = exportedLibrary ? JSON.parse(readFileSync(join(exportedLibrary, '..', 'index.json'), 'utf8')) : { traced: [] };
for (const model of tracedIndex.traced ?? []) {
  test(`${model}.ts exported to JSON loads and runs`, async (t) => {
    const dir = join(exportedLibrary, model);
    const io = readTensors(join(dir, `${model}.io.safetensors`));
    const g = await api.loadGraph(join(dir, `${model}.json`), join(dir, `${model}.safetensors`));
    try {
      optimizeAndRun(t, g, io);
    } finally {
      g.dispose();
    }
  });
}

test('loadModel takes bytes, a file URL and reports progress', async () => {
  const path = join(pt2Dir, 'dynamic_batch.pt2');
  const bytes = new Uint8Array(readFileSync(path));
  const a = await loadModel(bytes, { name: 'dynamic_batch.pt2' });
  const b = await loadModel(pathToFileURL(path));
  try {
    assert.deepEqual(a.document.graph.nodes.map((n) => n.op), b.document.graph.nodes.map((n) => n.op));
    assert.equal(a.outputActivation()[0].kind, 'sigmoid');
  } finally {
    a.dispose();
    b.dispose();
  }
  // A Blob (what a file picker gives) is read as a stream, with progress.
  const seen = [];
  const c = await loadModel(new Blob([bytes]), { name: 'picked.pt2', onProgress: (loaded, total) => seen.push([loaded, total]) });
  c.dispose();
  assert.ok(seen.length >= 1);
  assert.deepEqual(seen.at(-1), [bytes.byteLength, bytes.byteLength]);
});

test('loadModel reads an exported graph with the weights its document names', async () => {
  const f = modelFiles('unet2d');
  const g = await loadModel(f.json);
  try {
    g.finalize();
    const [y] = g.run(inputsOf(f.io));
    assert.ok(relativeError(y.data, outputsOf(f.io)[0].data) <= 1e-4);
  } finally {
    g.dispose();
  }
  await assert.rejects(loadModel(new TextEncoder().encode(readFileSync(f.json, 'utf8'))),
                       (e) => e instanceof TracegraphError && e.code === 'invalid_argument' && /options\.weights/.test(e.message));
});

// Sizes only the run knows (what a boolean mask keeps, nonzero's count): a
// new input with another count plans again, and the first input after it
// gives the first results again (the scripted detection head, read in wasm).
test('a detection head whose outputs the values size runs on a new count and back', async () => {
  const models = join(root, 'build', 'native', 'models');
  const io = readTensors(join(models, 'detection_head_scripted.io.safetensors'));
  const [x] = inputsOf(io);
  const g = await loadModel(join(models, 'detection_head_scripted.ts'), { inputShapes: [x.shape] });
  try {
    g.finalize({ threads: 1 });
    const matches = () => {
      const out = g.run([x]);
      outputsOf(io).forEach((want, i) => {
        assert.deepEqual(out[i].shape, want.shape, `output ${i} shape`);
        assert.ok(relativeError(out[i].data, want.data) <= 1e-4, `output ${i}`);
      });
      return out[2].shape[0];
    };
    const kept = matches();
    const other = g.run([{ shape: x.shape, data: x.data.map((v) => -2 * v) }]);
    const count = other[2].shape[0];
    assert.notEqual(count, kept);
    assert.deepEqual(other.map((o) => o.shape), [[count, 4], [count], [count, 2]]);
    assert.equal(matches(), kept);
  } finally {
    g.dispose();
  }
});

test('a traced TorchScript archive reads and runs; one that loops on its input names its line', async () => {
  const models = join(root, 'build', 'native', 'models');
  const g = await loadModel(join(models, 'unet3d_sigmoid_traced.ts'));
  try {
    assert.equal(g.outputActivation()[0].kind, 'sigmoid');
    const io = readTensors(join(models, 'unet3d_sigmoid_traced.io.safetensors'));
    g.setInputShapes(inputsOf(io).map((t) => t.shape));
    g.finalize();
    const [y] = g.run(inputsOf(io));
    assert.ok(relativeError(y.data, outputsOf(io)[0].data) <= 1e-4);
  } finally {
    g.dispose();
  }
  await assert.rejects(loadModel(join(models, 'loop_on_values.ts')),
                       (e) => e instanceof TracegraphError && e.code === 'unsupported' && /\.py line \d+/.test(e.message) &&
                              /tracegraph export/.test(e.message));
});

test('a broken archive is a typed error naming the file', async () => {
  await assert.rejects(loadModel(join(pt2Dir, 'bad_major.pt2')), (e) => e.code === 'unsupported_version' && /schema 99\.0/.test(e.message));
  await assert.rejects(loadModel(join(pt2Dir, 'truncated.pt2')), (e) => e.code === 'truncated' && /truncated\.pt2: the zip archive ends early/.test(e.message));
  await assert.rejects(loadModel(new Uint8Array([1, 2, 3]), { name: 'junk.bin' }), (e) => e.code === 'parse' && /junk\.bin/.test(e.message));
});

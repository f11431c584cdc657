// Bad input gives a TracegraphError with the core's code and a message that
// names the file or the value, and the module keeps working afterwards.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { api, assertOutputsMatch, dataDir, inputsOf, modelFiles, outputsOf, relativeError } from './helpers.mjs';

const { loadGraph, TracegraphError } = api;
const isError = (code, pattern) => (e) => {
  assert.ok(e instanceof TracegraphError, `not a TracegraphError: ${e}`);
  assert.ok(e instanceof Error);
  assert.equal(e.code, code, e.message);
  if (pattern) assert.match(e.message, pattern);
  return true;
};

// The malformed corpus (tests/data/malformed) through the JavaScript loader.
const manifest = JSON.parse(readFileSync(join(dataDir, 'malformed', 'manifest.json'), 'utf8'));
const small = join(dataDir, 'valid', 'small.json');
// The JavaScript loader is given the weights' bytes, so the cases about the
// weights file the document names (escaping its folder, missing) are file-only.
const fileOnly = new Set(['g_weights_path_escapes.json', 'g_weights_file_missing.json']);
for (const c of manifest.filter((c) => c.loader !== 'tree_spec' && !fileOnly.has(c.file))) {
  test(`malformed ${c.file} is refused with ${c.code}`, async () => {
    const path = join(dataDir, 'malformed', c.file);
    let json = path;
    let weights = join(dataDir, 'valid', 'good.safetensors');
    if (c.loader === 'safetensors') {
      json = small;
      weights = path;
    } else {
      try {
        const named = JSON.parse(readFileSync(path, 'utf8')).weights;
        if (typeof named === 'string' && existsSync(join(dataDir, 'malformed', named))) weights = join(dataDir, 'malformed', named);
      } catch { /* not JSON: any weights will do */ }
    }
    await assert.rejects(loadGraph(json, weights), (e) => {
      assert.ok(e instanceof TracegraphError, String(e));
      assert.equal(e.code, c.code, e.message);
      assert.ok(e.message.includes(c.message), `${e.message} should contain ${c.message}`);
      return true;
    });
  });
}

test('a missing file is an io error naming it', async () => {
  await assert.rejects(loadGraph('/no/such/graph.json', '/no/such/w.safetensors'), isError('io', /\/no\/such\/graph\.json/));
});

test('wrong inputs are refused and the graph still runs', async () => {
  const f = modelFiles('unet2d');
  const g = await loadGraph(f.json, f.weights);
  try {
    g.finalize();
    const [x] = inputsOf(f.io);
    assert.throws(() => g.run([{ data: x.data.subarray(1), shape: x.shape }]), isError('shape_mismatch', /holds/));
    assert.throws(() => g.run([x, x]), isError('invalid_argument', /takes 1 input/));
    assert.throws(() => g.run([{ data: new Float32Array(3 * 8 * 8), shape: [1, 3, 8, 8] }]), isError('shape_mismatch', /must have shape/));
    assert.throws(() => g.run({ nope: x }), isError('not_found', /no input %nope/));
    assert.throws(() => g.run({}), isError('invalid_argument', /is missing/));
    assert.throws(() => g.call({ a: 1 }), isError('tree_spec_mismatch', /\(root\): expected an array of 2/));
    assert.equal(g.run([x]).length, 1);
  } finally {
    g.dispose();
  }
});

test('a truncated weights file is refused naming the file', async () => {
  const f = modelFiles('unet2d');
  const w = readFileSync(f.weights);
  await assert.rejects(loadGraph(f.json, w.subarray(0, w.length - 100), { weightsName: 'cut.safetensors' }), isError('out_of_range', /cut\.safetensors.*past the end/));
});

// A model file from anyone: attributes edited as a hostile file would, and an
// input too large for wasm's memory, each a typed error; the module keeps
// working afterwards (a later load and run gives the right result).
function withFirstConv(json, edit) {
  // int64 attributes (a slice's end of 2^63 - 1) would lose digits as JS numbers: kept as text.
  const text = readFileSync(json, 'utf8').replace(/(?<=[:,[]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '"#int64#$1"');
  const doc = JSON.parse(text);
  const conv = doc.graph.nodes.find((n) => n.op === 'aten::_convolution');
  edit(conv.attributes);
  return JSON.stringify(doc).replace(/"#int64#(-?\d+)"/g, '$1');
}

test('hostile convolution attributes are typed errors at finalize', async () => {
  const f = modelFiles('unet2d');
  const rows = [
    [{ padding: [-5, -5] }, 'invalid_argument', /negative padding/],
    [{ stride: [0, 0] }, 'invalid_argument', /'stride' \[0, 0\]/],
    [{ dilation: [0, 0] }, 'invalid_argument', /'dilation' \[0, 0\]/],
    [{ stride: [-1, 1] }, 'invalid_argument', /'stride' \[-1, 1\]/],
    [{ padding: [100000, 100000] }, 'out_of_memory', /over the memory budget|more than this platform can address/],
  ];
  for (const [change, code, pattern] of rows) {
    const json = withFirstConv(f.json, (a) => {
      for (const [k, v] of Object.entries(change)) a[k] = { type: 'ints', value: v };
    });
    const g = await loadGraph(json, f.weights, { jsonName: 'edited.json' });
    try {
      assert.throws(() => g.finalize(), isError(code, pattern), JSON.stringify(change));
    } finally {
      g.dispose();
    }
  }
});

test('inputs too large for wasm are typed errors, and the same model then loads and runs right', async () => {
  const f = modelFiles('unet2d');
  const huge = await loadGraph(f.json, f.weights);
  try {
    // 10.8 GB of input: more than a 32-bit size can say.
    assert.throws(() => huge.setInputShapes([[1, 3, 30000, 30000]]), isError('bad_shape', /overflows this platform's size_t/));
  } finally {
    huge.dispose();
  }
  const big = await loadGraph(f.json, f.weights);
  try {
    big.setInputShapes([[1, 3, 15000, 15000]]);  // 2.7 GB: addressable, over the 2 GiB budget
    assert.throws(() => big.finalize(), isError('out_of_memory', /over the memory budget/));
  } finally {
    big.dispose();
  }
  const budgeted = await loadGraph(f.json, f.weights);
  try {
    assert.throws(() => budgeted.finalize({ memoryBudget: 1 << 16 }), isError('out_of_memory', /over the memory budget of 65536 bytes/));
  } finally {
    budgeted.dispose();
  }
  const g = await loadGraph(f.json, f.weights);
  try {
    g.finalize();
    const out = g.run(inputsOf(f.io));
    assert.ok(relativeError(out[0].data, outputsOf(f.io)[0].data) <= 1e-4);
  } finally {
    g.dispose();
  }
});

// Graphs share the threaded build's workers: one pool per thread count.
test('ten live graphs on the threaded build share a pool; a pool the workers cannot hold is a typed error', async () => {
  const f = modelFiles('unet2d');
  const graphs = [];
  try {
    for (let i = 0; i < 10; ++i) {
      const g = await loadGraph(f.json, f.weights, { threads: true });
      graphs.push(g);
      assert.equal(g.finalize({ threads: 2 }), 2);
    }
    for (const g of graphs) assertOutputsMatch(g.run(inputsOf(f.io)), f);
    // The 2-thread pool holds one of the four workers; eight threads need seven.
    const greedy = await loadGraph(f.json, f.weights, { threads: true });
    graphs.push(greedy);
    assert.throws(() => greedy.finalize({ threads: 8 }), isError('limit_exceeded', /8 threads need 7 workers, and 3 of this build's 4 are free/));
    assert.throws(() => greedy.finalize({ threads: -1 }), isError('invalid_argument', /threads must be 0/));
    assert.equal(greedy.finalize({ threads: 4 }), 4);  // three more workers: all four in use
    assertOutputsMatch(greedy.run(inputsOf(f.io)), f);
  } finally {
    for (const g of graphs) g.dispose();
  }
  // Every pool gone, all four workers are free again.
  const g = await loadGraph(f.json, f.weights, { threads: true });
  try {
    assert.equal(g.finalize({ threads: 5 }), 5);
    assertOutputsMatch(g.run(inputsOf(f.io)), f);
  } finally {
    g.dispose();
  }
});

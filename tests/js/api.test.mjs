// The JavaScript API's surface, on the exported test models: what a graph
// shows, optimize, finalize, the run forms, the structured call, disposal.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { api, assertOutputsMatch, inputsOf, jsDir, modelFiles, outputsOf, relativeError } from './helpers.mjs';

const { loadGraph, TracegraphError } = api;

// The page downloads it. 2 MiB until the page read .pt2 and TorchScript
// archives itself (the zip reader and inflater, the unpickler, the two
// readers and LibTorch's schema table: about 250 KB, compiled -Os); 2.5 MiB
// until the portable kernels of PyTorch's op set (scatters, index_put,
// einsum, pooling with indices: 2.50 MiB with them, December 2026); 2.75 MiB
// until the geometry, the module tree, the activation's range reasoning and
// the TorchScript reader's lists (2.77 MiB with them and the whole core, the
// C API and the planning built for size, December 2026).
test('the single-threaded wasm stays under 2.875 MiB', () => {
  const bytes = statSync(join(jsDir, 'tracegraph.wasm')).size;
  assert.ok(bytes < 2.875 * 1024 * 1024, `tracegraph.wasm is ${bytes} bytes`);
});

test('the single-threaded build runs one thread whatever is asked', async () => {
  const f = modelFiles('unet2d');
  const g = await loadGraph(f.json, f.weights);
  try {
    assert.equal(g.finalize({ threads: 4 }), 1);
  } finally {
    g.dispose();
  }
  assert.equal(api.threadsAvailable(), true);  // Node has SharedArrayBuffer
});

test('a graph shows its nodes, values, names and specs', async () => {
  const f = modelFiles('unet3d_sigmoid_traced');
  const doc = JSON.parse(readFileSync(f.json, 'utf8'));
  const g = await loadGraph(f.json, f.weights);
  try {
    assert.equal(g.nodes.length, doc.graph.nodes.length);
    const first = g.nodes[0];
    assert.equal(first.op, doc.graph.nodes[0].op);
    assert.equal(first.name, doc.graph.nodes[0].name);
    assert.deepEqual(first.inputs, doc.graph.nodes[0].inputs.map((i) => doc.graph.values[i].name));
    assert.deepEqual(g.inputNames, doc.graph.inputs.map((i) => doc.graph.values[i].name));
    assert.deepEqual(g.outputNames, doc.graph.outputs.map((i) => doc.graph.values[i].name));
    assert.deepEqual(g.outSpec, JSON.parse(f.expected.out_spec));
    assert.equal(g.isFinalized(), false);
    const conv = g.nodes.find((n) => n.op === 'aten::_convolution' || n.op === 'aten::conv3d');
    assert.ok(conv, 'a convolution');
    assert.ok(Array.isArray(conv.attributes.stride));
    const stats = g.weightStats();
    const weight = g.values.find((v) => v.constant && v.shape.length === 5);
    assert.equal(stats[weight.name].count, weight.shape.reduce((a, b) => a * b, 1));
    assert.ok(stats[weight.name].min <= stats[weight.name].mean && stats[weight.name].mean <= stats[weight.name].max);
  } finally {
    g.dispose();
  }
});

for (const model of ['unet3d_sigmoid_traced', 'unet3d_clamp', 'unet3d_softmax', 'unet3d_dict_out', 'unet3d_none', 'mobilenet_v2_traced']) {
  test(`${model}: outputActivation and moduleGraph say what the model ends in`, async () => {
    const f = modelFiles(model);
    const g = await loadGraph(f.json, f.weights);
    try {
      const acts = g.outputActivation();
      assert.equal(acts.length, f.expected.activation.length);
      acts.forEach((a, i) => {
        for (const [k, v] of Object.entries(f.expected.activation[i])) assert.equal(a[k], v, `output ${i} ${k}`);
      });
      // The view against the exported document itself, not against the module's other views.
      const doc = JSON.parse(readFileSync(f.json, 'utf8'));
      const name = (id) => doc.graph.values.find((v) => v.id === id).name;
      const mg = g.moduleGraph();
      assert.equal(mg.nodes.length, doc.graph.nodes.length);
      mg.nodes.forEach((n, i) => {
        const d = doc.graph.nodes[i];
        assert.equal(n.op, d.op, `node ${i}`);
        assert.deepEqual(n.inputs, d.inputs.map(name), `node ${i} inputs`);
        assert.deepEqual(n.outputs, d.outputs.map(name), `node ${i} outputs`);
      });
      assert.equal(mg.output, name(doc.graph.outputs[0]));
      assert.deepEqual(mg.outputs, doc.graph.outputs.map(name));
      if (model === 'unet3d_clamp') {
        const last = mg.nodes.at(-1);
        assert.deepEqual([last.op, last.min, last.max], ['aten::clamp', 0, 1]);
      }
      // optimizing never changes what the model ends in
      g.optimize();
      assert.deepEqual(g.outputActivation().map((a) => a.kind), acts.map((a) => a.kind));
    } finally {
      g.dispose();
    }
  });
}

test('optimize returns the report and changes the graph', async () => {
  const f = modelFiles('mobilenet_v2_traced');
  const g = await loadGraph(f.json, f.weights);
  try {
    const before = g.nodes.length;
    const report = g.optimize();
    assert.equal(report.nodes_before, before);
    assert.equal(report.nodes_after, g.nodes.length);
    assert.ok(report.nodes_after < before, `${report.nodes_after} < ${before}`);
    assert.ok(report.transforms.some((t) => t.name === 'batch_norm_folding' && t.rewrites > 0));
    const again = g.optimize({ disabled: ['constant_folding'] });
    assert.equal(again.nodes_before, report.nodes_after);
    assert.throws(() => g.optimize({ disabled: ['no_such_transform'] }), (e) => e instanceof TracegraphError && e.code === 'not_found');
  } finally {
    g.dispose();
  }
});

test('maxIterations caps the sweeps as in C++: 0 runs none, 1 runs one', async () => {
  const f = modelFiles('mobilenet_v2_traced');
  const g = await loadGraph(f.json, f.weights);
  try {
    const before = g.nodes.length;
    const none = g.optimize({ maxIterations: 0 });
    assert.deepEqual([none.sweeps, none.converged, g.nodes.length], [0, false, before]);
    const one = g.optimize({ maxIterations: 1 });
    assert.equal(one.sweeps, 1);
    assert.equal(one.converged, false);  // mobilenet needs more than one sweep
    assert.ok(g.nodes.length < before);
    const rest = g.optimize();
    assert.ok(rest.sweeps >= 1 && rest.converged);
    assert.throws(() => g.optimize({ maxIterations: -1 }), (e) => e instanceof TracegraphError && e.code === 'invalid_argument');
  } finally {
    g.dispose();
  }
});

test('run by array, by name and the structured call agree', async () => {
  const f = modelFiles('unet3d_dict_out');
  const g = await loadGraph(f.json, f.weights);
  try {
    assert.throws(() => g.run(inputsOf(f.io)), (e) => e instanceof TracegraphError && e.code === 'not_finalized');
    assert.equal(g.finalize({ threads: 1 }), 1);
    assert.equal(g.isFinalized(), true);
    assert.equal(g.finalize({ threads: 1 }), 1);  // again: nothing changes, as in C++
    assert.throws(() => g.optimize(), (e) => e instanceof TracegraphError && e.code === 'invalid_argument' && /finalized/.test(e.message));
    const byArray = g.run(inputsOf(f.io));
    // By name, the outputs come back as the list, in output order, as C++'s run() gives them.
    const byName = g.run({ [g.inputNames[0]]: inputsOf(f.io)[0] });
    assert.ok(Array.isArray(byName));
    assert.equal(byName.length, g.outputNames.length);
    byName.forEach((o, i) => assert.deepEqual(o.data, byArray[i].data));
    // The exported graph keeps forward's in_spec, ((x,), {}): the call takes that structure.
    const leaf = { type: null, context: null, children_spec: [] };
    assert.deepEqual(g.inSpec, [1, { type: 'builtins.tuple', context: 'null', children_spec: [
      { type: 'builtins.tuple', context: 'null', children_spec: [leaf] },
      { type: 'builtins.dict', context: '[]', children_spec: [] }] }]);
    const tree = g.call([inputsOf(f.io), {}]);
    assert.deepEqual(Object.keys(tree), ['mask', 'affinities']);
    assert.deepEqual(tree.mask.data, byArray[0].data);
    assert.deepEqual(tree.affinities.shape, [1, 2, 28, 28, 28]);
    const want = outputsOf(f.io);
    assert.ok(relativeError(tree.affinities.data, want[1].data) <= 1e-4);
    const mismatch = (re) => (e) => e instanceof TracegraphError && e.code === 'tree_spec_mismatch' && re.test(e.message);
    assert.throws(() => g.call(inputsOf(f.io)), mismatch(/\(root\): expected an array of 2/));
    assert.throws(() => g.call([inputsOf(f.io), { scale: inputsOf(f.io)[0] }]), mismatch(/\[1\]: unexpected key 'scale'/));
    assert.throws(() => g.call([[], {}]), mismatch(/\[0\]: expected an array of 1/));
  } finally {
    g.dispose();
  }
});

test('keepNodeOutputs makes every node\'s value a run output, after the model\'s own', async () => {
  const f = modelFiles('unet3d_dict_out');
  const g = await loadGraph(f.json, f.weights);
  try {
    const own = g.outputNames.length;
    const nodes = g.nodes;
    const kept = g.keepNodeOutputs();
    // Each node whose value something reads, in node order; the model's outputs keep their places.
    const read = new Set([...nodes.flatMap((n) => n.inputs), ...g.outputNames.slice(0, own)]);
    assert.deepEqual(kept.map((k) => k.node), nodes.filter((n) => n.outputs.some((o) => read.has(o))).map((n) => n.name));
    assert.ok(kept.every((k) => k.key === (k.output ? `${k.node}:${k.output}` : k.node)));
    assert.equal(g.outputNames.length, own + kept.filter((k) => k.index >= own).length);
    // The outputs are flat now: a tuple of them all.
    assert.equal(g.outSpec[1].type, 'builtins.tuple');
    assert.equal(g.outSpec[1].children_spec.length, g.outputNames.length);
    g.finalize({ threads: 1 });
    assert.throws(() => g.keepNodeOutputs(), (e) => e instanceof TracegraphError && e.code === 'invalid_argument' && /finalized/.test(e.message));
    const out = g.run(inputsOf(f.io));
    assert.equal(out.length, g.outputNames.length);
    const want = outputsOf(f.io);
    for (let i = 0; i < own; ++i) assert.ok(relativeError(out[i].data, want[i].data) <= 1e-4);
    // Each kept value has its value's shape, and a model output's node holds that output.
    const shapeOf = new Map(g.document.graph.values.map((v) => [v.name, v.shape]));
    for (const k of kept) {
      const node = nodes.find((n) => n.name === k.node);
      assert.deepEqual(out[k.index].shape, shapeOf.get(node.outputs[k.output]), k.key);
    }
    assert.ok(kept.some((k) => k.index < own));
  } finally {
    g.dispose();
  }
});

test('the structured call of a tuple output gives an array', async () => {
  const f = modelFiles('unet3d_tuple_out');
  const g = await loadGraph(f.json, f.weights);
  try {
    g.finalize();
    const out = g.call([inputsOf(f.io), {}]);
    assert.ok(Array.isArray(out));
    assert.equal(out.length, outputsOf(f.io).length);
    out.forEach((o, i) => assert.ok(relativeError(o.data, outputsOf(f.io)[i].data) <= 1e-4, `output ${i}`));
  } finally {
    g.dispose();
  }
});

test('a graph loads from bytes and from the document text too', async () => {
  const f = modelFiles('unet2d');
  const text = readFileSync(f.json, 'utf8');
  const weights = readFileSync(f.weights);
  const g1 = await loadGraph(text, weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength));
  const g2 = await loadGraph(new TextEncoder().encode(text), new Uint8Array(weights));
  try {
    g1.finalize();
    g2.finalize();
    const x = inputsOf(f.io);
    assert.deepEqual(g1.run(x)[0].data, g2.run(x)[0].data);
  } finally {
    g1.dispose();
    g2.dispose();
  }
});

test('profiling gives each node its time', async () => {
  const f = modelFiles('unet2d');
  const g = await loadGraph(f.json, f.weights);
  try {
    g.finalize({ profile: true });
    g.run(inputsOf(f.io));
    const times = g.profile();
    assert.equal(times.length, g.nodes.length);
    assert.ok(times.every((t) => t.ms >= 0));
    assert.ok(times.reduce((a, t) => a + t.ms, 0) > 0);
    assert.equal(times[0].node, g.nodes[0].name);
    // Convolutions count their arithmetic (and so their GFLOP/s); a ReLU none.
    const conv = times.filter((t) => /convolution/.test(t.op));
    assert.ok(conv.length > 0 && conv.every((t) => t.flops > 0 && t.gflops > 0), JSON.stringify(conv[0]));
    assert.ok(times.filter((t) => /relu/.test(t.op)).every((t) => t.flops === 0 && t.gflops === 0));
    // The UNet is a chain of channels-last ops: no layout change inside it.
    assert.deepEqual(times.filter((t) => t.layoutChanges !== 0 || t.layoutMs !== 0), []);
    // Its weights are small: every GEMM is one XNNPACK operator.
    assert.ok(times.every((t) => t.columnBlocks === 0), JSON.stringify(times.find((t) => t.columnBlocks !== 0)));
    // 8 and 16 output channels fill wasm's XNNPACK tiles of 8: no pixels folded.
    assert.ok(times.every((t) => t.pixelFold === 1), JSON.stringify(times.find((t) => t.pixelFold !== 1)));
  } finally {
    g.dispose();
  }
});

test('3D convolutions with 4 output channels fold two pixels into a tile of 8, and the output stays right', async () => {
  const f = modelFiles('unet3d_sigmoid_traced');
  const g = await loadGraph(f.json, f.weights);
  try {
    g.finalize({ profile: true, convAlgorithm: 'direct' });
    assertOutputsMatch(g.run(inputsOf(f.io)), f);
    // The UNet's 3x3x3 convolutions: four with 4 output channels (even widths), two with 8.
    const folds = g.profile().filter((t) => /convolution/.test(t.op) && t.flops > 0 && t.pixelFold > 1).map((t) => t.pixelFold);
    assert.deepEqual(folds, [2, 2, 2, 2]);
  } finally {
    g.dispose();
  }
});

test('finalize takes the convolution algorithm; Winograd and direct agree', async () => {
  const f = modelFiles('unet2d');
  const outputs = {};
  for (const convAlgorithm of ['direct', 'winograd', 'winograd4', 'fastest']) {
    const g = await loadGraph(f.json, f.weights);
    try {
      g.finalize({ profile: true, convAlgorithm });
      outputs[convAlgorithm] = g.run(inputsOf(f.io))[0].data;
      const convs = g.profile().filter((t) => /convolution/.test(t.op));
      const engines = new Set(convs.map((t) => t.engine));
      if (convAlgorithm === 'direct') assert.deepEqual([...engines], ['xnnpack']);
      if (convAlgorithm.startsWith('winograd')) assert.ok(engines.has('winograd'), [...engines].join());
      // Each Winograd convolution says its tile and GEMM (wasm: 4 lanes); no other node does.
      const tile = convAlgorithm === 'winograd4' ? 'F(4,3)' : 'F(2,3)';
      for (const t of convs) {
        if (t.engine !== 'winograd') assert.equal(t.winograd, '', t.node);
        else if (convAlgorithm !== 'fastest') assert.equal(t.winograd, `${tile}, our GEMM, 4 lanes`, t.node);
        else assert.match(t.winograd, /^F\([24],3\), (our GEMM, 4 lanes|XNNPACK's GEMM)/, t.node);
      }
    } finally {
      g.dispose();
    }
  }
  for (const k of ['winograd', 'winograd4', 'fastest']) {
    const d = outputs.direct, w = outputs[k];
    const scale = d.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    const err = w.reduce((m, v, i) => Math.max(m, Math.abs(v - d[i])), 0) / scale;
    assert.ok(err <= 1e-4, `${k}: ${err}`);
  }
  const g = await loadGraph(f.json, f.weights);
  try {
    assert.throws(() => g.finalize({ convAlgorithm: 'fast' }), (e) => e.code === 'invalid_argument' && /'fast'/.test(e.message));
  } finally {
    g.dispose();
  }
});

test('a disposed graph refuses to be used', async () => {
  const f = modelFiles('unet2d');
  const g = await loadGraph(f.json, f.weights);
  g.dispose();
  g.dispose();  // twice is harmless
  assert.throws(() => g.nodes, (e) => e instanceof TracegraphError && /disposed/.test(e.message));
});

test('many loads and disposals do not grow memory without bound', async () => {
  const f = modelFiles('unet2d');
  const core = await api.init();
  let first = 0;
  for (let i = 0; i < 30; ++i) {
    const g = await loadGraph(f.json, f.weights);
    g.finalize();
    g.run(inputsOf(f.io));
    g.dispose();
    if (i === 4) first = core.HEAPU8.length;
  }
  assert.equal(core.HEAPU8.length, first, 'wasm memory grew after warm-up');
});

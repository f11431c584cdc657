// geometry(), moduleTree() and each node's module path in the JavaScript API:
// the values tests/python/test_geometry.py derives by hand from the models'
// definitions, and (where the native build's CLI is there) the same geometry
// as `tracegraph inspect --json`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

import { api, dataDir, exportedDir, loadFiles, modelFiles } from './helpers.mjs';

const { loadModel, TracegraphError } = api;
const isError = (code, re) => (e) => e instanceof TracegraphError && e.code === code && re.test(e.message);
const cli = resolve(process.env.TRACEGRAPH_CLI ?? join(exportedDir, '..', 'cli', 'tracegraph'));
const nestedBlocks = join(dataDir, 'valid', 'nested_blocks.pt2');

// make_test_models.py's unet3d_sigmoid as torch.export saved it: valid 3x3x3
// convolutions, a pooling by 2, a transposed convolution by 2 and the skip's
// crop f0[4:36], fixed at the traced size. The cat's sizes, 2 * (floor((n -
// 4) / 2) - 4) and 32 (from n = 40), agree at n = 44 and 45 only; the output
// is 28. Offsets: 2, then 5/2 (stride 2), 13/2, then 6 (stride 1) where the
// crop puts the skip (2 + 4), then 8. Context: 8 before, n - 8 - 28 after.
test('a valid UNet with a fixed crop takes 44 or 45 and says its context', async () => {
  const f = modelFiles('unet3d_sigmoid_export');
  const g = await loadFiles(f);
  try {
    const geometry = g.geometry();
    assert.equal(geometry.length, 1);
    const [o] = geometry;
    assert.equal(o.output, g.outputNames[0]);
    assert.equal(o.input, g.inputNames[0]);
    assert.deepEqual(o.axes.map((a) => a.dim), [2, 3, 4]);
    for (const a of o.axes) {
      assert.equal(a.known, true);
      assert.equal(a.valid, '44 or 45');
      assert.equal(a.lattice, null);
      assert.equal(a.smallest, 44);
      assert.equal(a.offset, '8');
      assert.equal(a.stride, '1');
      assert.equal(a.contextBefore, '8');
      // Valid convolutions only: no edge effects, no halo; the receptive
      // field reaches at least as far as the context cut.
      assert.equal(a.edgeEffects, false);
      assert.equal(a.halo, 0);
      const [num, den = '1'] = a.reach.split('/');
      assert.ok(Number(num) / Number(den) >= 8, a.reach);
      assert.deepEqual(a.nonlocal, []);
      assert.equal(a.outputSize(44), f.expected.output_shapes[0][a.dim]);  // what torch gave at 44
      assert.equal(a.outputSize(44), 28);
      assert.equal(a.outputSize(45), 28);
      for (const n of [0, 1, 40, 43, 46, 52, 1000]) {
        assert.equal(a.outputSize(n), null, `n = ${n}`);
        assert.equal(a.accepts(n), false, `n = ${n}`);
      }
      assert.equal(a.accepts(45), true);
      assert.equal(a.contextAfter(44), '8');
      assert.equal(a.contextAfter(45), '9');
      assert.equal(a.contextAfter(46), null);
    }
    assert.throws(() => o.axes[0].outputSize(44.5), isError('invalid_argument', /non-negative integer/));
    assert.throws(() => o.axes[0].outputSize(-1), isError('invalid_argument', /non-negative integer/));
  } finally {
    g.dispose();
  }
});

test('the CLI says the same geometry', { skip: !existsSync(cli) && `no CLI at ${cli} (the native preset builds it)` }, async () => {
  const f = modelFiles('unet3d_sigmoid_export');
  const doc = JSON.parse(execFileSync(cli, ['inspect', f.file, '--json'], { encoding: 'utf8' }));
  const g = await loadFiles(f);
  try {
    const ours = g.geometry();
    assert.equal(doc.geometry.length, ours.length);
    doc.geometry.forEach((c, i) => {
      assert.equal(c.output, ours[i].output);
      assert.equal(c.input, ours[i].input);
      c.axes.forEach((ca, j) => {
        const a = ours[i].axes[j];
        assert.equal(a.dim, ca.dim);
        assert.equal(a.valid, ca.valid);
        assert.deepEqual(a.lattice, ca.lattice ?? null);
        assert.equal(a.smallest, ca.smallest);
        assert.equal(a.outputSize(ca.smallest), ca.output_size);
        assert.deepEqual([a.contextBefore, a.contextAfter(ca.smallest)], ca.context);
        assert.equal(a.offset, ca.offset);
        assert.equal(a.stride, ca.stride);
        assert.equal(a.reach, ca.reach);
        assert.equal(a.edgeEffects, ca.edge_effects);
        assert.equal(a.halo, ca.halo);
      });
    });
    assert.deepEqual(doc.geometry[0].axes[0], { dim: 2, valid: '44 or 45', smallest: 44, output_size: 28, context: ['8', '8'], offset: '8',
      reach: '9', edge_effects: false, halo: 0, stride: '1' });
  } finally {
    g.dispose();
  }
});

test('a graph without a spatial input has no geometry', async () => {
  const g = await loadModel(nestedBlocks);  // input [2, 4]
  try {
    assert.deepEqual(g.geometry(), []);
  } finally {
    g.dispose();
  }
});

test('the geometry answers for the graph it was read from', async () => {
  const g = await loadFiles(modelFiles('unet3d_sigmoid_export'));
  try {
    const [axis] = g.geometry()[0].axes;
    assert.equal(axis.outputSize(45), 28);
    g.setInputShapes([[1, 1, 44, 44, 44]]);  // a change to the graph (here: its shapes forgotten and read again)
    assert.throws(() => axis.outputSize(45), isError('invalid_argument', /changed since geometry\(\)/));
    assert.equal(g.geometry()[0].axes[0].outputSize(45), 28);  // asked again: the changed graph's
    g.dispose();
    assert.throws(() => g.geometry(), isError('invalid_argument', /disposed/));
  } finally {
    g.dispose();
  }
});

// nested_blocks.pt2 (make_pt2_models.py's NestedBlocks, input [2, 4]): an
// encoder of three identical blocks (x + mlp(attn(x)); attn: relu(qkv(x));
// mlp: Linear(4, 4), GELU), a head Linear(4, 2), the root's sigmoid. 17
// nodes; parameters 20 per Linear(4, 4), 10 for the head, 130 in all; FLOPs
// 2 * 2 * 4 * 4 = 64 per Linear(4, 4), 32 for the head, 416 in all.
test('moduleTree groups nested blocks with counts and repeats', async () => {
  const g = await loadModel(nestedBlocks);
  try {
    const { groups } = g.moduleTree();
    const at = (path) => groups.find((x) => x.path === path);
    assert.equal(groups.length, 21);  // root, encoder, 3 x (block, attn, qkv, mlp, mlp.0, mlp.1), head
    const root = groups[0];
    assert.deepEqual([root.path, root.type, root.parent, root.nodes], ['', '', null, ['sigmoid']]);
    assert.deepEqual([root.nodeCount, root.parameters, root.flops], [17, 130, 416]);
    assert.deepEqual(root.children.map((i) => groups[i].path), ['encoder', 'head']);
    const encoder = at('encoder');
    assert.deepEqual([encoder.type, encoder.nodes, encoder.nodeCount, encoder.parameters, encoder.flops], ['Encoder', [], 15, 120, 384]);
    assert.deepEqual(encoder.children.map((i) => groups[i].path), ['encoder.blocks.0', 'encoder.blocks.1', 'encoder.blocks.2']);
    const [first, second, third] = encoder.children.map((i) => groups[i]);
    assert.deepEqual([first.type, first.nodes, first.nodeCount, first.parameters, first.flops], ['Block', ['add'], 5, 40, 128]);
    assert.deepEqual([first.repeatOf, first.repeats], [null, 3]);
    for (const b of [second, third]) {
      assert.deepEqual([b.repeatOf, b.repeats], [first.index, 1]);
      assert.equal(b.signature, first.signature);
    }
    assert.match(first.signature, /^[0-9a-f]{16}$/);
    assert.deepEqual(first.children.map((i) => groups[i].path), ['encoder.blocks.0.attn', 'encoder.blocks.0.mlp']);
    assert.deepEqual([at('encoder.blocks.0.attn').nodes, at('encoder.blocks.0.attn').parameters], [['relu'], 20]);
    assert.deepEqual([at('encoder.blocks.0.attn.qkv').type, at('encoder.blocks.0.attn.qkv').nodes], ['Linear', ['linear']]);
    assert.deepEqual(at('encoder.blocks.0.mlp').children.map((i) => [groups[i].type, groups[i].nodes]), [['Linear', ['linear_1']], ['GELU', ['gelu']]]);
    const head = at('head');
    assert.deepEqual([head.type, head.nodes, head.nodeCount, head.parameters, head.flops, head.repeats], ['Linear', ['linear_6'], 1, 10, 32, 1]);
    groups.forEach((x, i) => {
      assert.equal(x.index, i);
      for (const c of x.children) assert.equal(groups[c].parent, i);
    });
  } finally {
    g.dispose();
  }
});

test('each node says its module and the path to it', async () => {
  const g = await loadModel(nestedBlocks);
  try {
    const nodes = Object.fromEntries(g.nodes.map((n) => [n.name, n]));
    assert.equal(nodes.linear.module, 'encoder.blocks.0.attn.qkv');
    assert.deepEqual(nodes.linear.modulePath, [
      { path: 'encoder', type: 'Encoder' }, { path: 'encoder.blocks.0', type: 'Block' },
      { path: 'encoder.blocks.0.attn', type: 'Attention' }, { path: 'encoder.blocks.0.attn.qkv', type: 'Linear' }]);
    assert.equal(nodes.gelu_2.module, 'encoder.blocks.2.mlp.1');
    assert.deepEqual(nodes.add_2.modulePath.map((f) => f.path), ['encoder', 'encoder.blocks.2']);
    assert.deepEqual(nodes.linear_6.modulePath, [{ path: 'head', type: 'Linear' }]);
    assert.equal(nodes.sigmoid.module, null);  // the root's own forward
    assert.deepEqual(nodes.sigmoid.modulePath, []);
  } finally {
    g.dispose();
  }
});

test("each node's FLOPs are the core's, which the module tree sums", async () => {
  const g = await loadModel(nestedBlocks);
  try {
    const nodes = Object.fromEntries(g.nodes.map((n) => [n.name, n]));
    assert.equal(nodes.linear_6.flops, 32);  // the head (its group says 32 too)
    assert.equal(nodes.sigmoid.flops, null);  // pointwise: not counted
    const { groups } = g.moduleTree();
    assert.equal(g.nodes.reduce((a, n) => a + (n.flops ?? 0), 0), groups[0].flops);
  } finally {
    g.dispose();
  }
});

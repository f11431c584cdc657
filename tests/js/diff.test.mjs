// web-demo/diff.mjs, the page's matching of two graphs, under Node: the
// common subsequence against the textbook dynamic programme on random
// sequences, and the matching's statuses on small graphs written out here
// (the page test, tests/web/compare.test.mjs, checks it on models torch makes).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { commonSubsequence, diffGraphs, diffNodes, shortOp } from '../../web-demo/diff.mjs';

function lcsLength(a, b) {
  const t = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; ++i)
    for (let j = 1; j <= b.length; ++j) t[i][j] = a[i - 1] === b[j - 1] ? t[i - 1][j - 1] + 1 : Math.max(t[i - 1][j], t[i][j - 1]);
  return t[a.length][b.length];
}

test('the common subsequence is a longest one, in order, of equal elements', () => {
  let seed = 53;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  for (let trial = 0; trial < 300; ++trial) {
    const a = Array.from({ length: rnd(30) }, () => 'abcd'[rnd(4)]);
    const b = Array.from({ length: rnd(30) }, () => 'abcd'[rnd(4)]);
    const pairs = commonSubsequence(a, b);
    assert.equal(pairs.length, lcsLength(a, b), `${a.join('')} / ${b.join('')}`);
    pairs.forEach(([i, j], k) => {
      assert.equal(a[i], b[j]);
      if (k) assert.ok(i > pairs[k - 1][0] && j > pairs[k - 1][1]);
    });
  }
});

test('a long sequence with a few edits is matched whole, and two unrelated long ones give up', () => {
  const a = Array.from({ length: 10000 }, (_, i) => `op${i % 25}`);
  const b = [...a.slice(0, 4000), 'new', ...a.slice(4001, 9000), ...a.slice(9002)];
  assert.equal(commonSubsequence(a, b).length, 10000 - 3);
  const c = Array.from({ length: 10000 }, (_, i) => `x${i}`);
  assert.equal(commonSubsequence(a, c), null);
});

// A node record as diffNodes makes them.
let nextId = 0;
const node = (module, op, shape = '[1]', attributes = {}) => ({ id: nextId++, name: `${op}_${nextId}`, module, op, shapes: [shape], attributes });

test('nodes are matched within their module by op: same, changed, removed, added', () => {
  const a = [node('stem', 'conv', 's1'), node('stem', 'relu'), node('blocks.0', 'conv', 'w8'), node('blocks.0', 'relu'),
    node('blocks.1', 'linear'), node('old', 'add')];
  const b = [node('stem', 'conv', 's1'), node('blocks.0', 'conv', 'w16'), node('blocks.0', 'gelu'),
    node('blocks.1', 'linear'), node('blocks.1', 'dropout'), node('new', 'mul'), node('new', 'add')];
  const d = diffGraphs(a, b);
  assert.deepEqual(d.counts, { same: 2, changed: 2, removed: 2, added: 3 });
  const statuses = (nodes, map) => nodes.map((n) => map.get(n.id));
  assert.deepEqual(statuses(a, d.a), ['same', 'removed', 'changed', 'changed', 'same', 'removed']);
  assert.deepEqual(statuses(b, d.b), ['same', 'changed', 'changed', 'same', 'added', 'added', 'added']);
  assert.deepEqual(d.pairs, [[a[0].id, b[0].id], [a[2].id, b[1].id], [a[3].id, b[2].id], [a[4].id, b[3].id]]);
});

test('attributes differ where both name them, or where one alone has a fused activation', () => {
  const a = [node('m', 'conv', 's', { stride: '[1,1]', cudnn_enabled: 'true' }), node('m', 'conv', 's', { stride: '[1,1]' }),
    node('m', 'linear', 's', {})];
  const b = [node('m', 'conv', 's', { stride: '[1,1]' }), node('m', 'conv', 's', { stride: '[2,2]' }),
    node('m', 'linear', 's', { fused_activation: '"relu"' })];
  const d = diffGraphs(a, b);
  assert.deepEqual(a.map((n) => d.a.get(n.id)), ['same', 'changed', 'changed']);
});

test('a graph matched with itself is the same throughout', () => {
  const a = Array.from({ length: 50 }, (_, i) => node(`m${i % 5}`, `op${i % 3}`, String(i)));
  assert.deepEqual(diffGraphs(a, a).counts, { same: 50, changed: 0, removed: 0, added: 0 });
});

test('diffNodes reads a document: module paths, canonical ops, and signatures from shapes, weights and attributes', () => {
  const doc = { graph: {
    values: [{ name: 'x', shape: [1, 3] }, { name: 'w', shape: [4, 3], constant: true }, { name: 'y', shape: [1, 4] }, { name: 'z', shape: [1, 4] }],
    modules: [{ path: 'fc', type: 'Linear', parent: null }],
    nodes: [{ id: 7, name: 'linear', op: 'aten.linear.default', inputs: [0, 1], outputs: [2], attributes: {}, module: 0 },
      { id: 9, name: 'relu', op: 'aten::relu', inputs: [2], outputs: [3], attributes: { inplace: { kind: 'bool', value: false } } }],
  } };
  const [lin, relu] = diffNodes(doc, ['linear', null]);
  assert.equal(lin.module, 'fc');
  assert.equal(lin.op, 'linear');
  assert.equal(relu.module, '');
  assert.equal(relu.op, 'relu');
  assert.equal(shortOp('aten.add.Tensor'), 'add');
  const wider = structuredClone(doc);
  wider.graph.values[1].shape = [5, 3];
  assert.deepEqual(lin.shapes, ['[1,4]', null, '[4,3]']);
  assert.deepEqual(diffNodes(wider, ['linear', null])[0].shapes, ['[1,4]', null, '[5,3]']);
  // A shape one file does not know matches any.
  const unknown = structuredClone(doc);
  delete unknown.graph.values[2].shape;
  const [x, y] = [diffNodes(unknown, ['linear', null]), diffNodes(wider, ['linear', null])];
  assert.equal(diffGraphs(x, diffNodes(doc, ['linear', null])).counts.same, 2);
  assert.equal(diffGraphs(x, y).counts.changed, 1);
  assert.deepEqual(relu.attributes, { inplace: 'false' });
});

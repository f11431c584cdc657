// One surface on both sides: the calls of tests/xnnpack/surface_test.cpp (C++ on
// the XNNPACK backend), case by case, in wasm on the same exported files; the
// same results and the same error codes (README, "C++ and JavaScript").
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { api, inputsOf, modelFiles } from './helpers.mjs';

const { loadGraph, TracegraphError } = api;
const isError = (code, re) => (e) => e instanceof TracegraphError && e.code === code && re.test(e.message);

async function withGraph(model, fn) {
  const f = modelFiles(model);
  const g = await loadGraph(f.json, f.weights);
  try { await fn(g, f); } finally { g.dispose(); }
}

test('to takes the cpu and refuses other devices', () => withGraph('unet2d', (g) => {
  assert.equal(g.to('cpu'), g);
  assert.equal(g.device, 'cpu');
  assert.equal(g.backend.name, 'xnnpack');
  assert.throws(() => g.to('cuda'), isError('unsupported', /runs on the CPU only, not on cuda/));
  assert.throws(() => g.to('cuda:1'), isError('unsupported', /not on cuda:1/));
  assert.throws(() => g.to('gpu'), isError('invalid_argument', /device 'gpu'/));
  assert.equal(g.device, 'cpu');
  g.finalize();
  g.to('cpu');
  assert.throws(() => g.to('cuda'), isError('unsupported', /not on cuda/));
}));

test('run by name returns the list in output order', () => withGraph('unet3d_dict_out', (g, f) => {
  const inputs = inputsOf(f.io);
  assert.throws(() => g.run(inputs), isError('not_finalized', /./));
  g.finalize();
  g.finalize();
  assert.throws(() => g.optimize(), isError('invalid_argument', /finalized/));
  const byOrder = g.run(inputs);
  const byName = g.run({ [g.inputNames[0]]: inputs[0] });
  assert.ok(Array.isArray(byName));
  assert.equal(byName.length, g.outputNames.length);
  byName.forEach((o, i) => { assert.deepEqual(o.shape, byOrder[i].shape); assert.deepEqual(o.data, byOrder[i].data); });
  assert.throws(() => g.run({}), isError('invalid_argument', /is missing/));
  assert.throws(() => g.run({ [g.inputNames[0]]: inputs[0], nope: inputs[0] }), isError('not_found', /no input %nope/));
  assert.throws(() => g.run([inputs[0], inputs[0]]), isError('invalid_argument', /takes 1 input/));
}));

test('optimize takes the same options', () => withGraph('mobilenet_v2_traced', (g) => {
  const before = g.nodes.length;
  const none = g.optimize({ maxIterations: 0 });
  assert.equal(none.sweeps, 0);
  assert.equal(g.nodes.length, before);
  const named = g.optimize({ transforms: ['dead_code_elimination', 'noop_elimination'] });
  assert.deepEqual(named.transforms.map((t) => t.name), ['dead_code_elimination', 'noop_elimination']);
  const budgeted = g.optimize({ enabled: ['batch_norm_folding'], rewriteBudget: 1, verifyEach: false });
  assert.deepEqual(budgeted.transforms.map((t) => t.name), ['batch_norm_folding']);
  assert.equal(budgeted.total_rewrites, 1);
  assert.equal(budgeted.budget_exhausted, true);
  assert.throws(() => g.optimize({ disabled: ['no_such_transform'] }), isError('not_found', /no transform named 'no_such_transform'/));
  assert.throws(() => g.optimize({ transforms: ['no_such_transform'] }), isError('not_found', /no transform named/));
  // Misused options (JavaScript's own checks: C++'s types rule them out).
  assert.throws(() => g.optimize({ maxIterations: -1 }), isError('invalid_argument', /maxIterations/));
  assert.throws(() => g.optimize({ disable: [] }), isError('invalid_argument', /unknown option 'disable'/));
  const rest = g.optimize();
  assert.equal(rest.converged, true);
  assert.equal(rest.nodes_after, g.nodes.length);
  assert.ok(rest.nodes_after < before);
}));

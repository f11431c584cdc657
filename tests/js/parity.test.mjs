// Every exported test model, run by the wasm module in Node, equals
// LibTorch's forward (the outputs make_test_models.py saved), as read and
// after optimize(), and on the threaded build with two threads.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { assertOutputsMatch, inputsOf, loadFiles, modelFiles, models, outputsOf, relativeError } from './helpers.mjs';

const all = models();

test('every readable test model is exported', () => {
  assert.ok(all.length >= 18, `only ${all.length} exported models`);
  for (const m of ['unet3d_sigmoid_traced', 'unet2d', 'mobilenet_v2_traced', 'resnet18_traced']) assert.ok(all.includes(m), m);
});

for (const model of all) {
  test(`${model} on the threaded build, two threads, matches LibTorch within 1e-4`, async () => {
    const f = modelFiles(model);
    const g = await loadFiles(f, { threads: true });
    try {
      g.optimize();
      assert.equal(g.finalize({ threads: 2 }), 2);
      const out = g.run(inputsOf(f.io));
      outputsOf(f.io).forEach((want, i) => {
        const err = relativeError(out[i].data, want.data);
        assert.ok(err <= 1e-4, `output ${i}: relative error ${err}`);
      });
    } finally {
      g.dispose();
    }
  });
  for (const optimized of [false, true]) {
    test(`${model}${optimized ? ' optimized' : ''} matches LibTorch within 1e-4`, async () => {
      const f = modelFiles(model);
      const g = await loadFiles(f);
      try {
        if (optimized) {
          const report = g.optimize();
          assert.ok(report.nodes_after <= report.nodes_before);
        }
        g.finalize({ threads: 1 });
        assertOutputsMatch(g.run(inputsOf(f.io)), f);
      } finally {
        g.dispose();
      }
    });
  }
}

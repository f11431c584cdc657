// The real-model zoo (torchvision's architectures and the UNets people build,
// tests/models/make_zoo_models.py) in the wasm module under Node, optimized,
// on the single-threaded build and on the threaded one with two threads: the
// outputs of the module's own forward within 1e-4, portable kernels running
// what XNNPACK lacks.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { assertOutputsMatch, inputsOf, loadFiles, modelFiles, models } from './helpers.mjs';

const all = models();

// TRACEGRAPH_ZOO_SET=large: the large set (scripts/zoo.sh), exported beside the small one.
const large = process.env.TRACEGRAPH_ZOO_SET === 'large';

test('the zoo is exported', () => {
  assert.ok(all.length >= (large ? 10 : 50), `only ${all.length} exported zoo models`);
  const some = large ? ['vit_b_16', 'maxvit_t', 'r3d_18', 'deeplabv3_resnet50']
                     : ['resnet50', 'efficientnet_b0', 'unet3d_in_gelu_trilinear_sigmoid_scripted', 'seg_logits_bilinear'];
  for (const m of some) assert.ok(all.includes(m), m);
});

for (const model of all) {
  for (const threads of [1, 2]) {
    test(`${model} optimized, ${threads} thread(s), matches its module within 1e-4`, async () => {
      const f = modelFiles(model);
      const g = await loadFiles(f, { threads: threads > 1 });
      try {
        g.optimize();
        assert.equal(g.finalize({ threads }), threads);
        assertOutputsMatch(g.run(inputsOf(f.io)), f);
        // The activation the model was built with, range-keeping ops after it included.
        const activation = g.outputActivation();
        f.expected.activation.forEach((want, i) => {
          assert.equal(activation[i].kind, want.kind, `output ${i} activation`);
          assert.deepEqual(activation[i].after ?? [], want.after ?? [], `output ${i} ops after the activation`);
        });
      } finally {
        g.dispose();
      }
    });
  }
}

// The web page end to end, in headless Chromium (Debian's, driven by
// playwright-core; no browser download): open samples, check the graph and
// the panels against the exported documents, run a model in the worker and
// compare with LibTorch's outputs, optimize, open torch.export archives by
// the file picker, and refuse a corrupt file while the page keeps working. Screenshots go to build/web-screenshots/.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

import { pageUnderTest, root } from './browser.mjs';

const exportedDir = resolve(process.env.TRACEGRAPH_EXPORTED_DIR ?? join(root, 'build', 'native', 'exported'));
const shots = resolve(process.env.TRACEGRAPH_SCREENSHOTS ?? join(root, 'build', 'web-screenshots'));
mkdirSync(shots, { recursive: true });

const doc = (name) => JSON.parse(readFileSync(join(exportedDir, name, `${name}.json`), 'utf8'));

let page;
const errors = pageUnderTest((p) => { page = p; });

async function openSample(name) {
  await page.selectOption('#samples', name);
  await page.waitForFunction((n) => window.__tracegraph.state.loaded === n, name, { timeout: 60000 });
}

test('the page is served cross-origin isolated (threads need it)', async () => {
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
});

test('a 3D UNet sample: its graph, summary and a node panel', async () => {
  await openSample('unet3d_sigmoid_traced');
  const d = doc('unet3d_sigmoid_traced');
  const drawn = await page.locator('.node').count();
  assert.equal(drawn, d.graph.nodes.length + d.graph.inputs.length + d.graph.outputs.length);
  assert.equal(await page.textContent('#summary-nodes'), String(d.graph.nodes.length));
  assert.match(await page.textContent('#summary-activation'), /sigmoid/);
  // The geometry a blockwise run needs, per spatial axis (the core's network_geometry).
  const geometry = await page.textContent('#summary-geometry');
  for (const dim of [2, 3, 4]) assert.match(geometry, new RegExp(`dim ${dim}\\s*sizes [^,]+, offset 8, stride 1`), geometry);
  await page.screenshot({ path: join(shots, 'unet3d-summary.png') });

  const conv = d.graph.nodes.find((n) => n.op === 'aten::_convolution');
  await page.click(`.node[data-name="${conv.name}"]`);
  assert.equal(await page.textContent('#node-op'), conv.op);
  const out = d.graph.values[conv.outputs[0]];
  assert.match(await page.textContent('#node-outputs'), new RegExp(`\\[${out.shape.join(', ')}\\]`));
  const weight = d.graph.values[conv.inputs[1]];
  const panel = await page.textContent('#tab-node');
  assert.ok(panel.includes(weight.name), 'the weight is listed');
  assert.ok(panel.includes(weight.shape.reduce((a, b) => a * b, 1).toLocaleString('en-US')), 'with its count');
  assert.match(panel, /min \/ max/);
  await page.screenshot({ path: join(shots, 'unet3d-node.png') });
});

test('search finds nodes by op', async () => {
  await page.fill('#search', 'sigmoid');
  assert.equal(await page.textContent('#search-count'), '1 match');
  await page.fill('#search', '');
});

test('running the sample in the worker matches LibTorch', async () => {
  await page.click('[data-tab=run]');
  assert.equal(await page.inputValue('#run-input'), 'test');
  await page.check('#run-profile');
  await page.click('#run');
  await page.waitForSelector('#run-error-0', { timeout: 60000 });
  const err = Number(await page.getAttribute('#run-error-0', 'data-error'));
  assert.ok(err <= 1e-4, `max relative error ${err}`);
  assert.match(await page.textContent('.output-shape'), /\[1, 1, 28, 28, 28\]/);
  assert.ok(await page.locator('#run-result canvas').count() >= 1, 'a slice is drawn');
  assert.ok(await page.locator('.time').count() > 0, 'per-node times are on the graph');
  // and which engine ran each node: XNNPACK's convolutions, portable kernels
  // for the 3D pooling, resize and concatenation it has no operator for
  assert.ok(await page.locator('.time[data-engine=xnnpack]').count() > 0, 'nodes on XNNPACK are marked');
  assert.ok(await page.locator('.time[data-engine=portable]').count() > 0, 'nodes on portable kernels are marked');
  // a Winograd convolution's form is its time's tooltip; no other node has one
  const tips = await page.$$eval('.time', (ts) => ts.map((t) => [t.dataset.engine, t.querySelector('title')?.textContent ?? '']));
  for (const [engine, tip] of tips) assert.ok(engine === 'winograd' ? /^Winograd F\([24],3\), /.test(tip) : tip === '', `${engine}: '${tip}'`);
  assert.match(await page.textContent('#run-portable-share'), /^\d+\.\d% \(\d+ nodes\)$/);
  await page.screenshot({ path: join(shots, 'unet3d-run.png') });
  // two threads: the threaded build, in the worker of a cross-origin isolated page
  await page.selectOption('#run-threads', '2');
  await page.uncheck('#run-profile');
  await page.click('#run');
  await page.waitForFunction(() => document.querySelector('#run-threads-used')?.textContent === '2', null, { timeout: 60000 });
  assert.ok(Number(await page.getAttribute('#run-error-0', 'data-error')) <= 1e-4);
  await page.selectOption('#run-threads', '1');
});

test('optimize shows the report and the graph after, with before kept', async () => {
  const before = await page.locator('.node').count();
  await page.click('#optimize');
  await page.waitForSelector('#report-summary', { timeout: 60000 });
  const after = await page.locator('.node').count();
  assert.ok(after < before, `${after} < ${before}`);
  assert.match(await page.textContent('#report-summary'), /→/);
  assert.equal(await page.isVisible('#show-before'), true);
  await page.screenshot({ path: join(shots, 'unet3d-optimized.png') });
  await page.click('#show-before');
  await page.waitForFunction((n) => document.querySelectorAll('.node').length === n, before);
  // and the optimized graph still runs, with the same numbers
  await page.click('[data-tab=run]');
  await page.click('#run');
  await page.waitForSelector('#run-error-0', { timeout: 60000 });
  assert.ok(Number(await page.getAttribute('#run-error-0', 'data-error')) <= 1e-4);
});

test('mobilenet_v2 lays out and runs; the summary counts parameters and FLOPs', async () => {
  await openSample('mobilenet_v2_traced');
  const status = await page.textContent('#status');
  console.log(`mobilenet_v2_traced: ${status}`);
  assert.match(status, /laid out in \d+ ms/);
  const summary = await page.textContent('#tab-summary');
  const d = doc('mobilenet_v2_traced');
  const constants = d.graph.values.filter((v) => v.constant).reduce((a, v) => a + v.shape.reduce((x, y) => x * y, 1), 0);
  // torchvision's 3,504,872 parameters plus the batch norms' running statistics
  assert.equal(constants, 3504872 + 8496);
  assert.ok(summary.includes(constants.toLocaleString('en-US')), summary);
  assert.match(summary, /6[0-4]\d MFLOP/);  // 300 M multiply-adds in convolutions, plus the elementwise ops
  await page.screenshot({ path: join(shots, 'mobilenet-summary.png') });
  await page.click('[data-tab=run]');
  await page.click('#run');
  await page.waitForSelector('#run-error-0', { timeout: 60000 });
  assert.ok(Number(await page.getAttribute('#run-error-0', 'data-error')) <= 1e-4);
  assert.match(await page.textContent('#run-result'), /top classes/);
});

// The torch.export sample: a .pt2 the Python exporter saved, fetched as one
// file and read by the core's .pt2 reader, run on its test input.
test('the torch.export sample opens as its .pt2 and runs within 1e-4 of torch', async () => {
  const sample = JSON.parse(readFileSync(join(root, 'web-demo', 'samples.json'), 'utf8')).find((s) => s.from === 'torch.export');
  assert.match(sample.file, /\.pt2$/);
  await openSample(sample.name);
  assert.match(await page.textContent('#summary-activation'), /sigmoid/);
  await page.click('[data-tab=run]');
  assert.equal(await page.inputValue('#run-input'), 'test');
  await page.click('#run');
  await page.waitForSelector('#run-error-0', { timeout: 60000 });
  assert.ok(Number(await page.getAttribute('#run-error-0', 'data-error')) <= 1e-4);
});

test('a 900-node graph lays out and draws (time printed, not asserted)', async () => {
  const r = await page.evaluate(async (n) => {
    // mobilenet-like: conv, batch norm, clip in a chain, a residual add every tenth node
    const values = [{ id: 0, name: 'x', dtype: 'float32', shape: [1, 32, 56, 56] }];
    const nodes = [];
    let last = 0;
    let skip = 0;
    const ops = ['aten::_convolution', 'aten::batch_norm', 'aten::hardtanh'];
    for (let i = 0; i < n; ++i) {
      const out = values.length;
      values.push({ id: out, name: `v${out}`, dtype: 'float32', shape: [1, 32, 56, 56] });
      const add = i % 10 === 9;
      nodes.push({ id: i, name: `n${i}`, op: add ? 'aten::add' : ops[i % 3], inputs: add ? [last, skip] : [last], outputs: [out], attributes: {} });
      if (add) skip = out;
      last = out;
    }
    const doc = { graph: { name: 'big', values, nodes, inputs: [0], outputs: [last] }, in_spec: null, out_spec: null };
    return window.__tracegraph.view.show(doc, nodes.map(() => null));
  }, 900);
  console.log(`900 nodes: laid out in ${r.layoutMs.toFixed(0)} ms, drawn in ${r.drawMs.toFixed(0)} ms`);
  assert.equal(r.nodes, 902);
  assert.equal(await page.locator('.node').count(), 902);
  await page.screenshot({ path: join(shots, 'nine-hundred-nodes.png') });
});

test('a corrupt file gives a clear message and the page keeps working', async () => {
  const dir = join(tmpdir(), 'tracegraph-e2e');
  mkdirSync(dir, { recursive: true });
  const good = join(exportedDir, 'unet2d', 'unet2d.json');
  const text = readFileSync(good, 'utf8');
  writeFileSync(join(dir, 'broken.json'), text.slice(0, Math.floor(text.length / 2)));
  const before = await page.evaluate(() => window.__tracegraph.state.name);
  assert.ok(before);
  await page.setInputFiles('#file', [join(dir, 'broken.json'), join(exportedDir, 'unet2d', 'unet2d.safetensors')]);
  await page.waitForSelector('#error:not([hidden])');
  const message = await page.textContent('#error-text');
  assert.match(message, /^parse: /);
  assert.match(message, /broken\.json/);
  await page.screenshot({ path: join(shots, 'corrupt-file.png') });
  // the model shown before is still there, and another opens fine
  assert.equal(await page.evaluate(() => window.__tracegraph.state.name), before);
  await page.click('#error-close');
  await openSample('unet2d');
  assert.equal(await page.isVisible('#error'), false);
  await page.click('[data-tab=run]');
  await page.selectOption('#run-input', 'random');
  await page.fill('#run-shape', '1,3,96,96');
  await page.click('#run');
  await page.waitForSelector('#run-median', { timeout: 60000 });
  assert.match(await page.textContent('.output-shape'), /\[1, 2, 80, 80\]/);
  await page.screenshot({ path: join(shots, 'unet2d-run.png') });
});

// A model file from anyone (issue 14's table): each case is a banner with
// the code and the message; the page keeps working afterwards.
test('hostile attributes and shapes too large are error banners, and the page works afterwards', async () => {
  const dir = join(tmpdir(), 'tracegraph-e2e');
  mkdirSync(dir, { recursive: true });
  const source = join(exportedDir, 'unet2d', 'unet2d.json');
  // int64 attributes (a slice's end of 2^63 - 1) would lose digits as JS numbers: kept as text.
  const text = readFileSync(source, 'utf8').replace(/(?<=[:,[]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '"#int64#$1"');
  const edited = (name, padding) => {
    const d = JSON.parse(text);
    d.graph.nodes.find((n) => n.op === 'aten::_convolution').attributes.padding = { type: 'ints', value: padding };
    d.weights = 'unet2d.safetensors';
    writeFileSync(join(dir, name), JSON.stringify(d).replace(/"#int64#(-?\d+)"/g, '$1'));
    return join(dir, name);
  };
  const runRandom = async (shape) => {
    await page.click('[data-tab=run]');
    await page.selectOption('#run-input', 'random');
    await page.fill('#run-shape', shape);
    await page.click('#run');
  };
  const banner = async (pattern) => {
    await page.waitForSelector('#error:not([hidden])', { timeout: 60000 });
    const message = await page.textContent('#error-text');
    assert.match(message, pattern);
    await page.click('#error-close');
    return message;
  };
  const cases = [
    ['negative_padding.json', [-5, -5], /^invalid_argument: .*negative padding/],
    ['huge_padding.json', [100000, 100000], /^out_of_memory: .*(over the memory budget|more than this platform can address)/],
  ];
  for (const [name, padding, pattern] of cases) {
    await page.setInputFiles('#file', [edited(name, padding), join(exportedDir, 'unet2d', 'unet2d.safetensors')]);
    await page.waitForFunction((n) => window.__tracegraph.state.loaded === n, name.replace(/\.json$/, ''), { timeout: 60000 });
    await runRandom('1,3,64,64');
    console.log(`${name}: ${await banner(pattern)}`);
    await page.screenshot({ path: join(shots, `hostile-${name.replace(/\.json$/, '')}.png`) });
  }
  // An input of 2.7 GB: refused before the page makes it.
  await openSample('unet2d');
  await runRandom('1,3,15000,15000');
  console.log(`1,3,15000,15000: ${await banner(/^out_of_memory: .*over the memory budget/)}`);
  // and the same page then runs the model right
  await page.selectOption('#run-input', 'test');
  await page.click('#run');
  await page.waitForSelector('#run-error-0', { timeout: 60000 });
  assert.ok(Number(await page.getAttribute('#run-error-0', 'data-error')) <= 1e-4);
  assert.equal(await page.isVisible('#error'), false);
});

// A torch.export archive by the file picker, with its .io.safetensors as the
// test input: read in the page by the core's .pt2 reader (no server, no
// Python), its activation shown, run in the worker against torch's outputs.
const pt2Dir = resolve(process.env.TRACEGRAPH_PT2_DIR ?? join(root, 'build', 'pt2'));
for (const [model, activation, forms] of [['dynamic_batch', /sigmoid/, ['pt2', 'core.pt2']], ['resnet18', /none/, ['pt2', 'core.pt2']],
                                          ['unet2d_bn_relu_nearest_sigmoid_traced', /sigmoid/, ['pt2', 'core.pt2']],
                                          ['unet3d_sigmoid_then_trilinear_traced', /sigmoid/, ['pt2']], ['mean_of_heads', /none/, ['pt2', 'core.pt2']],
                                          // int64 token ids and attention mask, read from its .io.safetensors as BigInt64Arrays
                                          ['token_classifier', /none/, ['pt2', 'core.pt2']]]) {
  for (const form of forms) {
    test(`${model}.${form} opens by the file picker and runs within 1e-4 of torch`, async () => {
      await page.setInputFiles('#file', [join(pt2Dir, `${model}.${form}`), join(pt2Dir, `${model}.io.safetensors`)]);
      await page.waitForFunction((n) => window.__tracegraph.state.loaded === n, `${model}.${form}`.replace(/\.pt2$/, ''), { timeout: 60000 });
      const summary = await page.textContent('#summary-activation');
      assert.match(summary, activation);
      await page.click('[data-tab=run]');
      assert.equal(await page.inputValue('#run-input'), 'test');
      await page.click('#run');
      await page.waitForSelector('#run-error-0', { timeout: 60000 });
      const err = Number(await page.getAttribute('#run-error-0', 'data-error'));
      assert.ok(err <= 1e-4, `max relative error ${err}`);
      if (model === 'resnet18' && form === 'pt2') await page.screenshot({ path: join(shots, 'resnet18-pt2-run.png') });
    });
  }
}

// Height and width exported as 8 times a torch.export.Dim: the Run panel
// fills in the sizes the program was exported with (16 and 24), names the
// symbols and their ranges beside them, runs, and runs again at a size typed.
test('a .pt2 with symbolic sizes fills the Run panel with its example sizes and runs', async () => {
  await page.setInputFiles('#file', [join(pt2Dir, 'spatial_multiple_of_8.pt2')]);
  await page.waitForFunction((n) => window.__tracegraph.state.loaded === n, 'spatial_multiple_of_8', { timeout: 60000 });
  await page.click('[data-tab=run]');
  assert.equal(await page.inputValue('#run-shape'), '1,1,16,24');
  const symbols = await page.textContent('#run-symbols');
  assert.match(symbols, /8\*s\d+ = 16 in 8…256, 8\*s\d+ = 24 in 8…256/);
  assert.equal(await page.isVisible('#run-symbols'), true);
  await page.selectOption('#run-input', 'random');
  await page.click('#run');
  await page.waitForSelector('#run-median', { timeout: 60000 });
  assert.match(await page.textContent('.output-shape'), /\[1, 1, 16, 24\]/);
  await page.fill('#run-shape', '1,1,40,8');
  await page.click('#run');
  await page.waitForFunction(() => /\[1, 1, 40, 8\]/.test(document.querySelector('.output-shape')?.textContent ?? ''), null, { timeout: 60000 });
  assert.equal(await page.isVisible('#error'), false);
  // A model without symbols shows no such line.
  await page.setInputFiles('#file', [join(pt2Dir, 'mean_of_heads.pt2')]);
  await page.waitForFunction((n) => window.__tracegraph.state.loaded === n, 'mean_of_heads', { timeout: 60000 });
  assert.equal(await page.isVisible('#run-symbols'), false);
});

// A traced TorchScript file by the picker, read by the core's own reader.
test('a traced TorchScript file opens by the picker and runs within 1e-4 of torch', async () => {
  const models = join(root, 'build', 'native', 'models');
  await page.setInputFiles('#file', [join(models, 'unet3d_sigmoid_traced.ts'), join(models, 'unet3d_sigmoid_traced.io.safetensors')]);
  await page.waitForFunction((n) => window.__tracegraph.state.loaded === n, 'unet3d_sigmoid_traced', { timeout: 60000 });
  assert.match(await page.textContent('#summary-activation'), /sigmoid/);
  await page.click('[data-tab=run]');
  assert.equal(await page.inputValue('#run-input'), 'test');
  await page.click('#run');
  await page.waitForSelector('#run-error-0', { timeout: 60000 });
  assert.ok(Number(await page.getAttribute('#run-error-0', 'data-error')) <= 1e-4);
});

// A scripted UNet whose code branches and loops on its input's shape
// (instance norm's rank, F.interpolate's dims): read for its test input's shapes.
test('a scripted TorchScript file opens with its test input and runs within 1e-4 of torch', async () => {
  const zoo = join(root, 'build', 'zoo');
  const name = 'unet2d_in_relu_bilinear_log_softmax_scripted';
  await page.setInputFiles('#file', [join(zoo, `${name}.ts`), join(zoo, `${name}.io.safetensors`)]);
  await page.waitForFunction((n) => window.__tracegraph.state.loaded === n, name, { timeout: 60000 });
  assert.match(await page.textContent('#summary-activation'), /log_softmax/);
  await page.click('[data-tab=run]');
  assert.equal(await page.inputValue('#run-input'), 'test');
  await page.click('#run');
  await page.waitForSelector('#run-error-0', { timeout: 60000 });
  assert.ok(Number(await page.getAttribute('#run-error-0', 'data-error')) <= 1e-4);
});

test('a scripted TorchScript file that loops on its input says which line and what to do', async () => {
  await page.setInputFiles('#file', [join(root, 'build', 'native', 'models', 'loop_on_values.ts')]);
  await page.waitForSelector('#error:not([hidden])');
  const message = await page.textContent('#error-text');
  assert.match(message, /^unsupported: /);
  assert.match(message, /loop_on_values\.ts/);
  assert.match(message, /\.py line \d+/);
  assert.match(message, /tracegraph export/);
  await page.click('#error-close');
});

test('no script errors on the page', () => {
  assert.deepEqual(errors, []);
});

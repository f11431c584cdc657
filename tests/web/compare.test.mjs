// The page's comparisons end to end, in headless Chromium, on models torch
// makes for them (tests/models/make_page_models.py):
// - numerics: LibTorch's value of every node of a small CNN (the CLI's
//   `tracegraph run --dump-nodes`) is the reference; the page runs a copy of
//   the CNN with one convolution's weight changed, on the reference's input,
//   and must name that convolution as the first node where the runs part
//   (every node before it within the tolerance), while the unchanged model
//   parts nowhere; as a .pt2, and as traced TorchScript (read by the core's
//   reader on both sides: --reader core);
// - two graphs side by side: two versions of a CNN, whose added, removed and
//   changed nodes are counted from the leaf modules torch calls in each
//   (class, output shape, parameter shapes) and the node count of each module
//   in the page's graphs; and a graph before and after Optimize.
// Screenshots of each view go to build/web-screenshots/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { pageUnderTest, root } from './browser.mjs';
import { makePageModels, modelsDir, openFile, openModel, shots } from './page_models.mjs';

makePageModels();
// The native preset's command-line tool writes the reference (LibTorch).
const cli = process.env.TRACEGRAPH_CLI ?? join(root, 'build', 'native', 'cli', 'tracegraph');
const work = mkdtempSync(join(tmpdir(), 'tracegraph-compare-'));

let page;
const errors = pageUnderTest((p) => { page = p; });

const open = (file) => openFile(page, file);

// Each node's module path in a view's graph (its innermost group's).
const modulesOf = (view) => page.evaluate((v) => {
  const g = window.__tracegraph[v];
  return g.model.doc.graph.nodes.map((n) => ({ id: n.id, name: n.name, op: n.op, module: g.hierarchy.groups[g.hierarchy.groupOf.get(n.id)].path }));
}, view);


// The nodes of module M in the view's graph that read a constant (a weight).
const weightReaders = (m) => page.evaluate((path) => {
  const { view } = window.__tracegraph;
  const { graph } = view.model.doc;
  return graph.nodes.filter((n) => view.hierarchy.groups[view.hierarchy.groupOf.get(n.id)].path === path && n.inputs.some((v) => graph.values[v].constant))
    .map((n) => n.name);
}, m);
test('the numerics overlay names the node that reads the changed weight as the first where the runs part', async () => {
  const { module } = JSON.parse(readFileSync(join(modelsDir, 'numerics.json'), 'utf8'));
  const reference = join(work, 'numerics_ref.dump.safetensors');
  execFileSync(cli, ['run', join(modelsDir, 'numerics_ref.pt2'), '-i', join(modelsDir, 'numerics.input.npy'), '--dump-nodes', reference], { stdio: 'inherit' });

  // The unchanged model against its own reference: XNNPACK in wasm and LibTorch agree at every node.
  await open('numerics_ref.pt2');
  await page.setInputFiles('#reference-file', reference);
  await page.waitForSelector('#numerics-first-none', { timeout: 120000 });
  const nodeCount = (await modulesOf('view')).length;
  assert.equal(await page.textContent('#numerics-compared'), `${nodeCount} of ${nodeCount}`);
  console.log(`the unchanged model against its reference: largest error ${await page.textContent('#numerics-worst')}`);

  // The changed model and the reference picked together (as they may be dropped together).
  await openModel(page, [join(modelsDir, 'numerics_perturbed.pt2'), reference], 'numerics_perturbed');
  await page.waitForSelector('#numerics-first', { timeout: 120000 });
  const nodes = await modulesOf('view');
  // The node that reads the changed parameter: the one in its module with a weight among its inputs.
  const readers = await weightReaders(module);
  assert.equal(readers.length, 1, `one node in ${module} reads weights: ${readers}`);
  const first = await page.getAttribute('#numerics-first', 'data-node');
  console.log(`the first node past the tolerance: ${first} (${await page.textContent('#numerics-result td:has(#numerics-first)')})`);
  assert.equal(first, readers[0]);

  // Every node before it within the tolerance, it and everything after past it (the change reaches the output).
  const rel = await page.evaluate(() => {
    const { app } = window.__tracegraph;
    return app.state.current.document.graph.nodes.map((n) => app.numerics.errors.get(n.name)?.rel ?? null);
  });
  const at = nodes.findIndex((n) => n.name === first);
  assert.ok(at > 0, 'an earlier node exists to stay within the tolerance');
  nodes.forEach((n, i) => {
    assert.notEqual(rel[i], null, `${n.name} was compared`);
    if (i < at) assert.ok(rel[i] <= 1e-4, `${n.name} before it: ${rel[i]}`);
    else assert.ok(rel[i] > 1e-4, `${n.name} at or after it: ${rel[i]}`);
  });
  assert.equal(await page.inputValue('#overlay'), 'error');
  assert.match(await page.textContent('#legend'), /relative error.*tolerance 1e-4/);
  assert.equal(await page.locator(`.node.past[data-name="${first}"]`).count(), 1);
  await page.screenshot({ path: join(shots, 'compare-numerics.png') });
  await page.click('#numerics-first');
  await page.waitForSelector(`.node.selected[data-name="${first}"]`);
  assert.match(await page.textContent('#node-error'), /rel\. [1-9]/);
  await page.locator('#canvas').screenshot({ path: join(shots, 'compare-numerics-first-node.png') });
});

test('a TorchScript file against a dump of the core\'s reading of it (--reader core): the same node parts first', async () => {
  const { module } = JSON.parse(readFileSync(join(modelsDir, 'numerics.json'), 'utf8'));
  const reference = join(work, 'numerics_ref_ts.dump.safetensors');
  execFileSync(cli, ['run', join(modelsDir, 'numerics_ref.ts'), '--reader', 'core', '-i', join(modelsDir, 'numerics.input.npy'), '--dump-nodes', reference], { stdio: 'inherit' });
  await openModel(page, [join(modelsDir, 'numerics_perturbed.ts'), reference], 'numerics_perturbed');
  await page.waitForSelector('#numerics-first', { timeout: 120000 });
  const nodes = await modulesOf('view');
  const readers = await weightReaders(module);
  assert.equal(readers.length, 1, `one node in ${module} reads weights: ${readers}`);
  const first = await page.getAttribute('#numerics-first', 'data-node');
  console.log(`TorchScript: the first node past the tolerance: ${first}; compared ${await page.textContent('#numerics-compared')}`);
  assert.equal(first, readers[0]);
  const [compared, total] = (await page.textContent('#numerics-compared')).split(' of ').map(Number);
  assert.ok(compared > nodes.length / 2 && total === nodes.length, 'the dump\'s keys are the page\'s node names');
});

test('two versions of a model side by side: added, removed and changed nodes as torch\'s modules say', async () => {
  await open('diff_a.pt2');
  await page.setInputFiles('#compare-file', join(modelsDir, 'diff_b.pt2'));
  await page.waitForSelector('#diff-added', { timeout: 60000 });
  const shown = Object.fromEntries(await Promise.all(['same', 'changed', 'removed', 'added']
    .map(async (k) => [k, Number(await page.getAttribute(`#diff-${k}`, 'data-count'))])));
  console.log(`diff_a.pt2 against diff_b.pt2: ${JSON.stringify(shown)}`);

  // What torch says changed, module by module, and how many nodes each module has in each graph.
  const leaves = (v) => new Map(JSON.parse(readFileSync(join(modelsDir, `diff_${v}.leaves.json`), 'utf8')).leaves.map((l) => [l.path, l]));
  const [la, lb] = [leaves('a'), leaves('b')];
  const count = (nodes) => nodes.reduce((m, n) => m.set(n.module, (m.get(n.module) ?? 0) + 1), new Map());
  const [na, nb] = [count(await modulesOf('view')), count(await modulesOf('viewB'))];
  for (const [m, l] of [[na, la], [nb, lb]]) for (const path of m.keys()) assert.ok(l.has(path), `every node is in a leaf module torch calls (${path})`);
  const expected = { same: 0, changed: 0, removed: 0, added: 0 };
  for (const path of new Set([...la.keys(), ...lb.keys()])) {
    const a = na.get(path) ?? 0;
    const b = nb.get(path) ?? 0;
    if (!lb.has(path)) expected.removed += a;
    else if (!la.has(path)) expected.added += b;
    else {
      const { path: _a, ...ra } = la.get(path);
      const { path: _b, ...rb } = lb.get(path);
      const k = Math.min(a, b);
      expected[JSON.stringify(ra) === JSON.stringify(rb) ? 'same' : 'changed'] += k;
      expected.removed += a - k;
      expected.added += b - k;
    }
  }
  assert.ok(expected.added && expected.removed && expected.changed, JSON.stringify(expected));
  assert.deepEqual(shown, expected);
  // Both views mark them: removed and changed on the left, added and changed on the right.
  assert.equal(await page.locator('#graph .node.diff-removed').count(), expected.removed);
  assert.equal(await page.locator('#graph-b .node.diff-added').count(), expected.added);
  assert.equal(await page.locator('#graph .node.diff-changed').count(), expected.changed);
  assert.equal(await page.locator('#graph-b .node.diff-changed').count(), expected.changed);
  // A node selected on one side selects its match on the other: the widened convolution.
  const conv = (await modulesOf('view')).find((n) => n.module === 'blocks.1.0');
  const match = (await modulesOf('viewB')).find((n) => n.module === 'blocks.1.0');
  await page.click(`#graph .node[data-name="${conv.name}"]`);
  await page.waitForSelector(`#graph-b .node.selected[data-name="${match.name}"]`);
  assert.equal(await page.getAttribute(`#graph-b .node[data-name="${match.name}"]`, 'data-diff'), 'changed');
  await page.screenshot({ path: join(shots, 'compare-two-versions.png') });
  // Both views at a readable size, on the widened block.
  await page.evaluate(() => {
    for (const v of [window.__tracegraph.view, window.__tracegraph.viewB]) v.centerOnGroup(v.hierarchy.groups.find((g) => g.path === 'blocks.1').index);
  });
  await page.locator('#canvas').screenshot({ path: join(shots, 'compare-two-versions-blocks.png') });
  await page.click('[data-tab=compare]');
  await page.click('#compare-close');
  assert.equal(await page.locator('#view-b').isHidden(), true);
});

test('a graph before and after Optimize side by side: what fused is marked', async () => {
  await open('diff_a.pt2');
  await page.click('#optimize');
  await page.waitForSelector('#report-summary', { timeout: 60000 });
  await page.click('[data-tab=compare]');
  await page.click('#compare-optimized');
  await page.waitForSelector('#diff-added', { timeout: 60000 });
  const before = await modulesOf('view');
  const after = await modulesOf('viewB');
  assert.ok(after.length < before.length, 'the optimizer removed nodes');
  const marks = (view) => page.evaluate((v) => Object.fromEntries([...window.__tracegraph[v].diff]), view);
  const [ma, mb] = [await marks('view'), await marks('viewB')];
  // A ReLU folded into the convolution before it is gone, and that convolution changed (its fused activation).
  const fused = await page.evaluate(() => window.__tracegraph.viewB.model.doc.graph.nodes.filter((n) => n.attributes.fused_activation).map((n) => n.id));
  assert.ok(fused.length > 0);
  for (const id of fused) assert.equal(mb[id], 'changed');
  for (const n of before) if (/relu/.test(n.op) && !after.some((m) => m.module === n.module)) assert.equal(ma[n.id], 'removed', n.name);
  await page.screenshot({ path: join(shots, 'compare-optimize-before-after.png') });
  await page.click('#compare-close');
});

test('no script errors on the page', () => {
  assert.deepEqual(errors, []);
});

// Exporting what the page shows, end to end in headless Chromium: the SVG
// of the view (it parses, and holds the label of every box on the screen),
// the PNG of it, and the link to a place (file, unfolded groups, selection)
// opened in a fresh page: a sample the page serves reopens at once, a
// user's file is asked for by name and then the place comes back.
// Screenshots go to build/web-screenshots/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { pageUnderTest } from './browser.mjs';
import { makePageModels, modelsDir, openFile, shots } from './page_models.mjs';

makePageModels();

let page;
const errors = pageUnderTest((p) => { page = p; });

const open = (file) => openFile(page, file);

async function downloaded(button) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  return { name: d.suggestedFilename(), bytes: readFileSync(await d.path()) };
}

// What a page shows: the open groups' paths, and the selection (a node's name or a module's path).
const placeShown = (p) => p.evaluate(() => {
  const { view } = window.__tracegraph;
  const h = view.hierarchy;
  const sel = view.selected;
  const meta = sel && view.info.get(sel);
  return {
    open: h.groups.filter((g) => g.parent !== null && h.open.has(g.index)).map((g) => g.path).sort(),
    selected: meta?.node?.name ?? (meta?.group !== undefined ? h.groups[meta.group].path : null),
  };
});

// A second page, fresh, with its errors gathered too.
async function freshPage(url) {
  const fresh = await page.context().browser().newPage({ viewport: { width: 1440, height: 900 } });
  fresh.on('pageerror', (e) => errors.push(e.message));
  fresh.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await fresh.goto(url);
  return fresh;
}

test('the view as SVG: it parses and holds the label of every box on the screen; and as PNG', async () => {
  await open('vit24.pt2');
  await page.click('.node.group[data-path="blocks"]');
  await page.waitForSelector('.frame[data-path="blocks"]');
  await page.click('.node.group[data-path="blocks.5"]');
  await page.waitForSelector('.frame[data-path="blocks.5"]');
  const onScreen = await page.evaluate(() => {
    const area = document.querySelector('#graph').getBoundingClientRect();
    return [...document.querySelectorAll('#graph .node')].filter((g) => {
      const r = g.querySelector('rect.box').getBoundingClientRect();
      return r.right > area.left && r.left < area.right && r.bottom > area.top && r.top < area.bottom;
    }).map((g) => g.querySelector('text').textContent);
  });
  assert.ok(onScreen.length > 5, `${onScreen.length} boxes on the screen`);
  const svg = await downloaded('#export-svg');
  assert.equal(svg.name, 'vit24.svg');
  const parsed = await page.evaluate((text) => {
    const d = new DOMParser().parseFromString(text, 'image/svg+xml');
    return { error: d.querySelector('parsererror')?.textContent ?? null, root: d.documentElement.nodeName,
      labels: [...d.querySelectorAll('.node')].map((g) => g.querySelector('text')?.textContent), styled: /\.node/.test(d.querySelector('style')?.textContent ?? '') };
  }, svg.bytes.toString('utf8'));
  assert.equal(parsed.error, null);
  assert.equal(parsed.root, 'svg');
  assert.ok(parsed.styled, 'the graph\'s styles travel with it');
  for (const label of onScreen) assert.ok(parsed.labels.includes(label), `"${label}" is in the SVG`);
  console.log(`SVG: ${svg.bytes.length} bytes, ${parsed.labels.length} boxes (${onScreen.length} on the screen)`);

  const png = await downloaded('#export-png');
  assert.equal(png.name, 'vit24.png');
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const width = png.bytes.readUInt32BE(16);
  const area = await page.evaluate(() => document.querySelector('#graph').getBoundingClientRect().width);
  assert.equal(width, 2 * Math.round(area), 'twice the view\'s width');
});

test('a link to a user\'s file asks for the file by name, then opens the same groups and selection', async () => {
  // vit24.pt2 is open with blocks and blocks.5 unfolded; select a node inside blocks.5.attn.
  await page.click('.node.group[data-path="blocks.5.attn"]');
  await page.waitForSelector('.frame[data-path="blocks.5.attn"]');
  const name = await page.evaluate(() => document.querySelector('.frame[data-path="blocks.5.attn"] ~ * .node[data-op*="softmax"], .node[data-op*="softmax"]')?.dataset.name);
  await page.click(`.node[data-name="${name}"]`);
  await page.click('#copy-link');
  const link = page.url();
  assert.match(link, /#file=vit24\.pt2&open=.*blocks\.5\.attn.*&sel=n:/);
  const want = await placeShown(page);
  assert.equal(want.selected, name);

  const fresh = await freshPage(link);
  await fresh.waitForSelector('#asks-for:not([hidden])');
  assert.match(await fresh.textContent('#asks-for'), /vit24\.pt2/);
  await fresh.screenshot({ path: join(shots, 'link-asks-for-file.png') });
  await fresh.setInputFiles('#asks-for-file', join(modelsDir, 'vit24.pt2'));
  await fresh.waitForFunction((n) => window.__tracegraph.view.selected && window.__tracegraph.view.info.get(window.__tracegraph.view.selected)?.node?.name === n, name, { timeout: 60000 });
  assert.deepEqual(await placeShown(fresh), want);
  assert.equal(await fresh.locator(`.node.selected[data-name="${name}"]`).count(), 1);
  assert.equal(await fresh.isHidden('#asks-for'), true);
  await fresh.screenshot({ path: join(shots, 'link-restored-file.png') });
  await fresh.close();
});

test('a link to a sample the page serves reopens it at the same place', async () => {
  const samples = JSON.parse(readFileSync(new URL('../../web-demo/samples.json', import.meta.url), 'utf8'));
  // A torch.export sample: its .pt2 says each node's module.
  const sample = samples.find((s) => s.file?.endsWith('.pt2')).name;
  await page.evaluate(() => { window.__tracegraph.state.loaded = null; });
  await page.selectOption('#samples', sample);
  await page.waitForFunction((n) => window.__tracegraph.state.loaded === n, sample, { timeout: 120000 });
  // Fold one module, select a node in another.
  const [folded, inside] = await page.evaluate(() => {
    const { view } = window.__tracegraph;
    const top = view.hierarchy.groups[0].children.map((g) => view.hierarchy.groups[g]);
    return [top[0].path, top[top.length - 1].path];
  });
  await page.click(`.frame[data-path="${folded}"] > .frame-head`);
  await page.waitForSelector(`.node.group[data-path="${folded}"]`);
  const node = await page.evaluate((p) => {
    const { view } = window.__tracegraph;
    const h = view.hierarchy;
    const path = (n) => h.groups[h.groupOf.get(n.id)].path;
    return view.model.doc.graph.nodes.find((n) => path(n) === p || path(n).startsWith(`${p}.`))?.name;
  }, inside);
  await page.click(`.node[data-name="${node}"]`);
  const link = page.url();
  assert.match(link, new RegExp(`#sample=${sample}&open=.*&sel=n:`));
  const want = await placeShown(page);
  assert.ok(!want.open.includes(folded) && want.open.includes(inside));

  const fresh = await freshPage(link);
  await fresh.waitForFunction((n) => window.__tracegraph?.state.loaded && window.__tracegraph.view.info?.get(window.__tracegraph.view.selected)?.node?.name === n, node, { timeout: 120000 });
  assert.deepEqual(await placeShown(fresh), want);
  assert.equal(await fresh.locator(`.node.group[data-path="${folded}"]`).count(), 1);
  await fresh.screenshot({ path: join(shots, 'link-restored-sample.png') });
  await fresh.close();
});

test('no script errors on the page', () => {
  assert.deepEqual(errors, []);
});

// The npm package as an app gets it: `npm pack` of the built module, installed
// into a fresh app by `npm install` of the tarball (no registry involved), and
// imported by name under Node, single-threaded and threaded; then
// examples/web, with that install, in headless Chromium.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { exportedDir, jsDir } from './helpers.mjs';

const scratch = mkdtempSync(join(tmpdir(), 'tracegraph-package-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
// npm offline, with its cache in the scratch directory: nothing is fetched.
const env = { ...process.env, npm_config_cache: join(scratch, 'npm-cache'), npm_config_offline: 'true', npm_config_audit: 'false',
              npm_config_fund: 'false', npm_config_update_notifier: 'false' };
const npm = (args, cwd) => execFileSync('npm', args, { cwd, env, encoding: 'utf8' });
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const app = join(scratch, 'app');
const model = 'unet3d_sigmoid_traced';

test('npm pack makes a tarball an app installs and imports by name', () => {
  const manifest = JSON.parse(readFileSync(join(jsDir, 'package.json'), 'utf8'));
  assert.equal(manifest.name, 'tracegraph');
  const [packed] = JSON.parse(npm(['pack', jsDir, '--pack-destination', scratch, '--json'], scratch));
  assert.equal(packed.filename, `tracegraph-${manifest.version}.tgz`);
  const files = packed.files.map((f) => f.path).sort();
  for (const f of ['package.json', 'README.md', 'tracegraph.mjs', 'tracegraph.d.ts', 'tracegraph_core.mjs', 'tracegraph.wasm',
                   'tracegraph_threads_core.mjs', 'tracegraph_threads_raw.js', 'tracegraph_threads_raw.worker.js', 'tracegraph_threads_raw.wasm'])
    assert.ok(files.includes(f), `${f} is in the tarball (${files.join(', ')})`);
  assert.equal(files.length, 10, `only the package's files: ${files.join(', ')}`);

  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'tracegraph-app', private: true, type: 'module' }));
  npm(['install', join(scratch, packed.filename)], app);
  const stem = join(exportedDir, model, model);
  writeFileSync(join(app, 'app.mjs'), `
import { loadGraph, TracegraphError } from 'tracegraph';
const out = {};
for (const threads of [false, true]) {
  const g = await loadGraph(${JSON.stringify(stem + '.json')}, ${JSON.stringify(stem + '.safetensors')}, { threads });
  out.activation = g.outputActivation()[0].kind;
  g.finalize({ threads: threads ? 2 : 1 });
  const [y] = g.run([{ data: new Float32Array(44 * 44 * 44).fill(0.5), shape: [1, 1, 44, 44, 44] }]);
  out[threads ? 'threaded' : 'single'] = { shape: y.shape, first: y.data[0], last: y.data[y.data.length - 1] };
  g.dispose();
}
out.error = TracegraphError.name;
console.log(JSON.stringify(out));
`);
  const result = JSON.parse(execFileSync('node', ['app.mjs'], { cwd: app, encoding: 'utf8' }));
  assert.equal(result.activation, 'sigmoid');
  assert.deepEqual(result.single.shape, [1, 1, 28, 28, 28]);
  assert.deepEqual(result.threaded.shape, [1, 1, 28, 28, 28]);
  assert.ok(result.single.first > 0 && result.single.first < 1, 'a sigmoid output');
  assert.ok(Math.abs(result.single.first - result.threaded.first) <= 1e-5);
  assert.ok(Math.abs(result.single.last - result.threaded.last) <= 1e-5);
  assert.equal(result.error, 'TracegraphError');
});

test('examples/web runs on the installed package in Chromium', async () => {
  for (const f of ['index.html', 'main.mjs']) copyFileSync(join(root, 'examples', 'web', f), join(app, f));
  const { chromium } = await import(join(root, 'web-demo', 'node_modules', 'playwright-core', 'index.mjs'));
  const { serve } = await import(join(root, 'web-demo', 'serve.mjs'));
  const server = await serve({ port: 0, quiet: true, table: [['/models/', [exportedDir]], ['/', [app]]] });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const base = `http://127.0.0.1:${server.address().port}`;
    await page.goto(`${base}/?json=/models/${model}/${model}.json&weights=/models/${model}/${model}.safetensors`);
    await page.waitForFunction(() => /ran in|error/.test(document.getElementById('result').textContent), null, { timeout: 60000 });
    const text = await page.textContent('#result');
    assert.match(text, /^output \S+: sigmoid$/m);
    assert.match(text, /ran in [0-9.]+ ms: \[1,1,28,28,28\]/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.close();
  }
});

// The models torch makes for the page's tests (tests/models/make_page_models.py),
// made once per content of tests/models through fixture_cache.py (a second
// run copies them from the cache), by the venv's Python; and where screenshots go.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { root } from './browser.mjs';

export const shots = resolve(process.env.TRACEGRAPH_SCREENSHOTS ?? join(root, 'build', 'web-screenshots'));
export const modelsDir = resolve(process.env.TRACEGRAPH_PAGE_MODELS_DIR ?? join(root, 'build', 'page_models'));
// scripts/env.sh's rule for the venv's Python.
const cache = process.env.TRACEGRAPH_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? '/root', '.cache'), 'tracegraph');
export const python = process.env.TRACEGRAPH_PYTHON ?? join(cache, 'venv', 'bin', 'python3');

export function makePageModels() {
  mkdirSync(shots, { recursive: true });
  const t0 = Date.now();
  execFileSync(python, [join(root, 'tests', 'models', 'fixture_cache.py'), 'page_models', modelsDir, '--',
    python, join(root, 'tests', 'models', 'make_page_models.py'), '{out}'], { stdio: 'inherit' });
  console.log(`page models ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

// Opens FILES (a model, and maybe its reference) of modelsDir in the page
// through its file input and waits until the model named NAME has loaded.
export async function openModel(page, files, name) {
  await page.evaluate(() => { window.__tracegraph.state.loaded = null; });
  await page.setInputFiles('#file', files);
  await page.waitForFunction((n) => window.__tracegraph.state.loaded === n, name, { timeout: 120000 });
}

// One page model file of modelsDir, opened.
export const openFile = (page, file) => openModel(page, join(modelsDir, file), file.replace(/\.(pt2|ts)$/, ''));

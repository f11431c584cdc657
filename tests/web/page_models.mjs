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

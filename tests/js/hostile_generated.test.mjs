// The generator's hostile archives (tests/hostile/make_hostile_archives.py,
// the fixture make_hostile_archives_js writes them to TRACEGRAPH_HOSTILE_DIR)
// through the JavaScript loader, all in one module: each file that names a
// model (TorchScript, .pt2, zip structure, exported graphs with their
// weights beside them) is a TracegraphError with a code other than internal
// or out_of_memory, with a short message, or a correct load, in under 10 s
// of CPU time;
// the module's heap stays bounded, and a valid model then loads and runs
// right. (The .npy cases are the CLI's: the JS API takes typed arrays.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { api, assertAValidModelStillRuns } from './helpers.mjs';

const { loadModel, init, TracegraphError } = api;

const dir = process.env.TRACEGRAPH_HOSTILE_DIR;
if (!dir) throw new Error('TRACEGRAPH_HOSTILE_DIR: the folder make_hostile_archives.py wrote (its manifest.json)');
// Findings not fixed yet (tests/hostile/open_findings.txt, its js lines) are
// not run: a load in the module cannot be stopped, and they take minutes.
const openFindings = new Set(readFileSync(new URL('../hostile/open_findings.txt', import.meta.url), 'utf8')
  .split('\n').map((l) => l.trim().split(/\s+/)).filter((w) => w[0] === 'js').map((w) => w[1]));
const all = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).files.filter((c) => c.kind !== 'npy');
// Every named case, and every third truncation or mutant of a real file (the CLI test takes a sample too).
const cases = all.filter((c) => !openFindings.has(c.file)).filter((c, i) => !c.variant || i % 3 === 0);
for (const c of all) if (openFindings.has(c.file)) console.log(`OPEN (not run): ${c.file}`);

test(`${cases.length} generated hostile files: typed errors or correct loads, then a valid model runs`, async () => {
  const m = await init();
  const codes = {};
  let heapAfterFirst = 0;
  const problems = [];
  for (const [i, c] of cases.entries()) {
    const path = join(dir, c.file);
    const t0 = process.cpuUsage();
    let code = 'read';
    try {
      // A graph's JSON by its path (its weights are the file it names beside
      // it); archives by their bytes, as a page hands them over.
      const g = await loadModel(c.kind === 'json' ? path : readFileSync(path), { name: c.file });
      g.dispose();
    } catch (e) {
      if (!(e instanceof TracegraphError)) {
        problems.push(`${c.file}: not a TracegraphError: ${e}`);
        continue;
      }
      code = e.code;
      if (typeof e.code !== 'string' || e.code === 'internal' || e.code === 'out_of_memory') problems.push(`${c.file}: code ${e.code}: ${e.message.slice(0, 200)}`);
      if (e.message.length > 5000) problems.push(`${c.file}: a message of ${e.message.length} characters`);
    }
    const used = process.cpuUsage(t0);
    const ms = (used.user + used.system) / 1000;  // CPU time: the work, whatever else the machine runs
    if (process.env.TRACEGRAPH_HOSTILE_VERBOSE) console.log(`${c.file}: ${code}, ${Math.round(ms)} ms, heap ${m.HEAPU8.length >> 20} MiB`);
    if (ms > 10000) problems.push(`${c.file}: ${Math.round(ms)} ms of CPU time`);
    if (c.expect && code !== c.expect) problems.push(`${c.file}: ${code}, expected ${c.expect}`);
    codes[code] = (codes[code] ?? 0) + 1;
    if (i === Math.min(40, cases.length - 1)) heapAfterFirst = m.HEAPU8.length;
  }
  console.log(`${cases.length} files: ${JSON.stringify(codes)}; wasm heap ${heapAfterFirst >> 20} MiB after 41, ${m.HEAPU8.length >> 20} MiB after all`);
  assert.deepEqual(problems, []);
  // Failed loads free what they took: the heap is where the first ones left it, give or take.
  assert.ok(m.HEAPU8.length <= heapAfterFirst + (256 << 20), `the heap grew from ${heapAfterFirst} to ${m.HEAPU8.length} bytes`);
  await assertAValidModelStillRuns();
});

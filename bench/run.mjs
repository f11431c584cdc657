// The side-by-side benchmark (run by scripts/bench.sh, which makes the
// models and builds first): the same models with the same weights in
// tracegraph's wasm module and in onnxruntime-web (wasm, SIMD), in Node 20
// and in headless Chromium, 1 and 2 threads (and tfjs-wasm, one thread, on
// the optimized export's graph, bench/tfjs.mjs, in both); natively tracegraph's XNNPACK
// backend against onnxruntime-node, ExecuTorch's XNNPACK delegate
// (bench/executorch_bench.py) and LibTorch. Each configuration runs in
// its own process or page load, in --rounds rounds (3 unless told) that take
// turns with the other configurations of the model, in reverse order every
// other round; each keeps its round with the lowest median. (This machine
// kind is shared: a slow minute, or a process whose address layout falls
// badly for one engine, moved single cells by up to 1.8x; the LibTorch
// rows land in one of two modes per process, 24 or 45 ms for the 2D UNet;
// wasm has spells of seconds at 1.7-2x its time, mobilenet_v2 at 17 or 31
// ms within one process, while native code slows by about 10%; and the two
// vCPUs are at times one core, which cores_probe tells.)
// Prints medians, spread, first run, load time, the ratios the targets are
// stated in, and writes results.json.
// Usage: node bench/run.mjs [--runs N] [--warmup N] [--rounds N] [--models a,b] [--no-browser] [--no-native]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { serve } from '../web-demo/serve.mjs';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const benchDir = resolve(process.env.TRACEGRAPH_BENCH_DIR ?? join(root, 'build', 'bench'));
const jsDir = resolve(process.env.TRACEGRAPH_JS_DIR ?? join(root, 'build', 'wasm', 'js'));
const cli = resolve(process.env.TRACEGRAPH_CLI ?? join(root, 'build', 'native', 'cli', 'tracegraph'));
const arg = (name, fallback) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : fallback; };
const runs = Number(arg('--runs', 20));
const warmup = Number(arg('--warmup', 3));
const rounds = Math.max(1, Number(arg('--rounds', 3)));
const models = JSON.parse(readFileSync(join(benchDir, 'models.json'), 'utf8'));
const names = arg('--models', Object.keys(models).join(',')).split(',');
const browser = !process.argv.includes('--no-browser');
const native = !process.argv.includes('--no-native');
const threadedWasm = existsSync(join(jsDir, 'tracegraph_threads_core.mjs'));

// FLOPs of convolutions, linear layers and matrix products (2 per
// multiply-add): the core's node_flops, summed by its module tree, as the page counts them.
async function flops(model) {
  const { loadModel } = await import(pathToFileURL(join(jsDir, 'tracegraph.mjs')).href);
  const g = await loadModel(join(benchDir, model, `${model}.json`));
  try {
    return g.moduleTree().groups[0].flops;
  } finally {
    g.dispose();
  }
}

// ExecuTorch's XNNPACK delegate (bench/executorch_bench.py) in the venv
// scripts/executorch_venv.sh made; bench.sh passes its Python.
const executorchPython = process.env.TRACEGRAPH_EXECUTORCH_PYTHON;
function executorch(model, threads) {
  if (!executorchPython) return { error: 'not measured: no executorch venv (scripts/executorch_venv.sh)' };
  try {
    const out = execFileSync(executorchPython, [join(root, 'bench', 'executorch_bench.py'), benchDir, model, String(threads), String(runs), String(warmup)],
                             { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return JSON.parse(out.trim().split('\n').pop());
  } catch (e) {
    return { error: String(e.stderr || e.message).trim().split('\n').slice(-1)[0] };
  }
}

// bench/cores_probe.c, which bench.sh builds: whether the first two CPUs
// are two cores right now (`pair`: two threads' multiply-adds over one's, 2
// for two free cores, 1 for one shared). This machine kind's host runs its
// two vCPUs on one core for minutes at a time, where no program's two threads
// can be 1.8x its one; a two-thread tracegraph measurement waits (up to
// kCoresWait ms) for two cores, and keeps the probe's reading either side.
const coresProbe = resolve(process.env.TRACEGRAPH_CORES_PROBE ?? join(benchDir, 'cores_probe'));
const kCoresWait = 90000;
function probeCores() {
  if (!existsSync(coresProbe)) return NaN;
  try {
    return JSON.parse(execFileSync(coresProbe, { encoding: 'utf8' }).trim()).pair;
  } catch {
    return NaN;
  }
}
// Waits (up to kCoresWait ms, probing every 5 s) for two cores; returns
// the last reading.
async function twoCores() {
  let reading = probeCores();
  for (const start = Date.now(); reading < 1.6 && Date.now() - start < kCoresWait; reading = probeCores())
    await new Promise((r) => setTimeout(r, 5000));
  return reading;
}
// A result with the lower of the readings before and after it.
function withCores(result, before) {
  const cores = Math.min(before, probeCores());
  return Number.isFinite(cores) && result && !result.error ? { ...result, cores } : result;
}

function node(engine, model, threads) {
  try {
    const out = execFileSync(process.execPath, [join(root, 'bench', 'engine.mjs'), engine, model, String(threads), String(runs), String(warmup)],
                             { env: { ...process.env, TRACEGRAPH_BENCH_DIR: benchDir, TRACEGRAPH_JS_DIR: jsDir }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return JSON.parse(out.trim().split('\n').pop());
  } catch (e) {
    return { error: String(e.stderr || e.message).trim().split('\n').slice(-1)[0] };
  }
}

function nativeRows(model, threads) {
  const shape = models[model].input_shape.join(',');
  try {
    const text = execFileSync(cli, ['bench', join(benchDir, `${model}.ts`), '--input-shape', shape, '--threads', String(threads),
                                    '--runs', String(runs), '--warmup', String(warmup)], { encoding: 'utf8' });
    const rows = {};
    for (const line of text.split('\n')) {
      const m = line.match(/^(\S.*?)\s{2,}([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\.\.([\d.]+)/);
      if (m) rows[m[1].trim()] = { load: +m[2], first: +m[3], median: +m[4], p10: +m[5], p90: +m[6] };
    }
    return rows;
  } catch (e) {
    return { error: String(e.message) };
  }
}

async function chromium(configs) {
  const { chromium } = await import('playwright-core');
  const server = await serve({ port: 0, quiet: true });
  const port = server.address().port;
  const b = await chromium.launch({ executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const results = [];
  try {
    for (const c of configs) {
      const page = await b.newPage();
      const ours2t = c.engine === 'tracegraph-wasm' && c.threads > 1;
      const before = ours2t ? await twoCores() : NaN;
      try {
        await page.goto(`http://127.0.0.1:${port}/bench/page.html?engine=${c.engine}&model=${c.model}&threads=${c.threads}&runs=${runs}&warmup=${warmup}`);
        await page.waitForFunction(() => window.__bench, null, { timeout: 600000 });
        const result = await page.evaluate(() => window.__bench);
        results.push(ours2t ? withCores(result, before) : result);
      } catch (e) {
        results.push({ error: String(e.message).split('\n')[0] });
      } finally {
        await page.close();
      }
    }
  } finally {
    await b.close();
    server.close();
  }
  return results;
}

const fmt = (r) => (r && !r.error && r.median !== undefined)
  ? `${r.load.toFixed(0).padStart(7)} ${r.first.toFixed(1).padStart(9)} ${r.median.toFixed(2).padStart(9)} ${(r.p10.toFixed(2) + '..' + r.p90.toFixed(2)).padStart(17)}`
  + (r.cores !== undefined ? `   two cores ${r.cores.toFixed(2)}x one${r.cores < 1.6 ? ' (SHARED)' : ''}` : '')
  : `  ${r ? (r.error ?? 'n/a') : 'n/a'}`.slice(0, 100);
const ratio = (a, b) => (a && b && !a.error && !b.error && a.median && b.median) ? a.median / b.median : NaN;
const report = { runs, warmup, rounds, models: {}, targets: [] };
const targets = [];

for (const model of names) {
  const gflop = (await flops(model)) / 1e9;
  const r = {};
  console.log(`\n== ${model} ${JSON.stringify(models[model].input_shape)}, ${gflop.toFixed(2)} GFLOP ==`);
  console.log(`${'engine'.padEnd(40)} ${'load ms'.padStart(7)} ${'first ms'.padStart(9)} ${'median ms'.padStart(9)} ${'p10..p90 ms'.padStart(17)}`);
  // Each measurement a function returning { name: result }; every round
  // runs them all, a round's result replacing a kept one with a higher median.
  const jobs = [];
  for (const t of [1, 2]) {
    jobs.push(async () => {
      if (t > 1 && !threadedWasm) return { [`node: tracegraph wasm ${t}t`]: { error: 'n/a: no threaded wasm build' } };
      const before = t > 1 ? await twoCores() : NaN;
      const result = node('tracegraph-wasm', model, t);
      return { [`node: tracegraph wasm ${t}t`]: t > 1 ? withCores(result, before) : result };
    });
    jobs.push(() => ({ [`node: onnxruntime-web ${t}t`]: node('ort-web', model, t) }));
  }
  // Every convolution directly (no Winograd), for the ratio Winograd makes.
  jobs.push(() => ({ 'node: tracegraph wasm 1t, direct convs': node('tracegraph-wasm-direct', model, 1) }));
  // tfjs-wasm on the same graph and weights (bench/tfjs.mjs), one thread.
  jobs.push(() => ({ 'node: tfjs-wasm 1t': node('tfjs-wasm', model, 1) }));
  if (browser) {
    const configs = [];
    for (const t of [1, 2]) configs.push({ engine: 'tracegraph-wasm', model, threads: t }, { engine: 'ort-web', model, threads: t });
    configs.push({ engine: 'tfjs-wasm', model, threads: 1 });
    const names = { 'ort-web': 'onnxruntime-web', 'tracegraph-wasm': 'tracegraph wasm', 'tfjs-wasm': 'tfjs-wasm' };
    jobs.push(async () => {
      const got = {};
      (await chromium(configs)).forEach((x, i) => {
        const c = configs[i];
        got[`chromium: ${names[c.engine]} ${c.threads}t`] = c.engine === 'tracegraph-wasm' && c.threads > 1 && !threadedWasm ? { error: 'n/a: no threaded wasm build' } : x;
      });
      return got;
    });
  }
  if (native) {
    for (const t of [1, 2]) {
      jobs.push(() => {
        const rows = nativeRows(model, t);
        return {
          [`native: tracegraph xnnpack ${t}t`]: rows['tracegraph optimized on xnnpack'] ?? rows,
          [`native: libtorch optimize_for_inference ${t}t`]: rows['torchscript optimize_for_inference'] ?? rows,
          [`native: tracegraph on libtorch ${t}t`]: rows['tracegraph optimized on libtorch'] ?? rows,
        };
      });
      jobs.push(() => ({ [`native: onnxruntime-node ${t}t`]: node('ort-node', model, t) }));
      jobs.push(() => ({ [`native: executorch xnnpack ${t}t`]: executorch(model, t) }));
    }
  }
  const better = (a, b) => (!a || (a.median === undefined && b?.median !== undefined) || (b?.median !== undefined && b.median < a.median)) ? b : a;
  for (let round = 0; round < rounds; ++round)
    for (const job of round % 2 ? [...jobs].reverse() : jobs)
      for (const [name, res] of Object.entries(await job())) r[name] = better(r[name], res);
  for (const [name, res] of Object.entries(r)) console.log(`${name.padEnd(40)} ${fmt(res)}`);
  const agree = (a, b) => a?.checksum && b?.checksum && a.checksum.every((v, i) => Math.abs(v - b.checksum[i]) <= 1e-3 * Math.max(1, Math.abs(v)));
  if (r['node: tfjs-wasm 1t']?.checksum)
    console.log(`tfjs-wasm's first outputs ${agree(r['node: tfjs-wasm 1t'], r['node: tracegraph wasm 1t']) ? 'agree with' : 'DIFFER from'} tracegraph's: ${JSON.stringify(r['node: tfjs-wasm 1t'].checksum.map((v) => +v.toFixed(5)))}`);
  if (r['chromium: tfjs-wasm 1t']?.checksum)
    console.log(`tfjs-wasm's first outputs in Chromium ${agree(r['chromium: tfjs-wasm 1t'], r['chromium: tracegraph wasm 1t']) ? 'agree with' : 'DIFFER from'} tracegraph's`);
  const et = r['native: executorch xnnpack 1t'];
  if (et?.max_abs_diff !== undefined) console.log(`executorch's output: max |difference| from the module's forward ${et.max_abs_diff.toExponential(2)}`);
  report.models[model] = { gflop, results: r };
  const gflops = (x) => (x && x.median ? gflop / (x.median / 1000) : NaN);
  const direct = ratio(r['node: tracegraph wasm 1t'], r['node: tracegraph wasm 1t, direct convs']);
  if (Number.isFinite(direct)) console.log(`Winograd where it measured faster: ${direct.toFixed(2)}x the time of direct convolutions only (node, 1t)`);
  console.log(`GFLOP/s, tracegraph wasm 1t: node ${gflops(r['node: tracegraph wasm 1t']).toFixed(1)}` +
              (browser ? `, chromium ${gflops(r['chromium: tracegraph wasm 1t']).toFixed(1)}` : '') +
              (native ? `; native xnnpack 1t ${gflops(r['native: tracegraph xnnpack 1t']).toFixed(1)}` : ''));
  for (const where of browser ? ['node', 'chromium'] : ['node']) {
    const ours = r[`${where}: tracegraph wasm 1t`];
    const theirs = r[`${where}: onnxruntime-web 1t`];
    targets.push({ what: `${model} ${where} wasm 1t / onnxruntime-web 1t`, value: ratio(ours, theirs), limit: model === 'unet3d' ? 0.6 : 0.5, below: true });
    if (model === 'resnet18') targets.push({ what: `resnet18 ${where} wasm 1t GFLOP/s`, value: gflops(ours), limit: 24, below: false });
    if (model !== 'unet3d') targets.push({ what: `${model} ${where} wasm 1t / tfjs-wasm 1t`, value: ratio(ours, r[`${where}: tfjs-wasm 1t`]), limit: 0.8, below: true });
    const two = r[`${where}: tracegraph wasm 2t`];
    targets.push({ what: `${model} ${where} wasm speed-up 2t over 1t`, value: ratio(ours, two), limit: 1.8, below: false,
                   note: two?.cores < 1.6 ? `the kept 2t round ran while the host gave the two CPUs ${two.cores.toFixed(2)} cores' worth` : undefined });
  }
  if (native) {
    for (const t of [1, 2]) {
      targets.push({ what: `${model} native xnnpack ${t}t / onnxruntime-node ${t}t`, value: ratio(r[`native: tracegraph xnnpack ${t}t`], r[`native: onnxruntime-node ${t}t`]), limit: 0.8, below: true });
      targets.push({ what: `${model} native xnnpack ${t}t / executorch xnnpack ${t}t`, value: ratio(r[`native: tracegraph xnnpack ${t}t`], r[`native: executorch xnnpack ${t}t`]), limit: 1.0, below: true });
      targets.push({ what: `${model} native libtorch ${t}t / optimize_for_inference ${t}t`, value: ratio(r[`native: tracegraph on libtorch ${t}t`], r[`native: libtorch optimize_for_inference ${t}t`]), limit: 1.0, below: true });
    }
  }
}

console.log('\n== targets (ratios from this run) ==');
for (const t of targets) {
  const met = Number.isFinite(t.value) ? (t.below ? t.value <= t.limit : t.value >= t.limit) : null;
  console.log(`${t.what.padEnd(58)} ${Number.isFinite(t.value) ? t.value.toFixed(2).padStart(7) : '    n/a'}  (${t.below ? '<=' : '>='} ${t.limit})  ${met === null ? 'not measured' : met ? 'met' : 'MISSED'}${t.note ? ` (${t.note})` : ''}`);
}
report.targets = targets;
writeFileSync(join(benchDir, 'results.json'), JSON.stringify(report, null, 1));
console.log(`\nwrote ${join(benchDir, 'results.json')}`);

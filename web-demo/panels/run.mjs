// The Run panel: makes the inputs (random, an image, a shape, or a sample's
// test input), runs the model in the worker, and shows timings, what ran on
// XNNPACK and on portable kernels, each output's statistics (against LibTorch's
// outputs for a sample's test input) and a heatmap or the top classes.
import { $, fmt, shapeStr } from '../format.mjs';

const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];
const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];

export function parseShapes(text) {
  return text.split(';').map((s) => s.trim()).filter(Boolean).map((s) => s.split(/[ ,x×]+/).filter(Boolean).map(Number));
}

function randomNormal(n, seed = 42) {
  const out = new Float32Array(n);
  let s = seed;
  const rnd = () => { s = (s * 1664525 + 1013904223) >>> 0; return (s + 1) / 4294967297; };
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(rnd()));
    const a = 2 * Math.PI * rnd();
    out[i] = r * Math.cos(a);
    if (i + 1 < n) out[i + 1] = r * Math.sin(a);
  }
  return out;
}

// The tensors of a safetensors file that a model takes or gives (float32,
// integers, bool): { name: { shape, data, dtype } }.
const SAFETENSORS_ARRAYS = { F32: ['float32', Float32Array], I64: ['int64', BigInt64Array], I32: ['int32', Int32Array], BOOL: ['bool', Uint8Array], U8: ['uint8', Uint8Array] };
export function readSafetensors(buffer) {
  const view = new DataView(buffer);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, n)));
  const out = {};
  for (const [k, v] of Object.entries(header)) {
    if (k === '__metadata__' || !(v.dtype in SAFETENSORS_ARRAYS)) continue;
    const [a, b] = v.data_offsets;
    const [dtype, View] = SAFETENSORS_ARRAYS[v.dtype];
    out[k] = { shape: v.shape, dtype, data: new View(buffer.slice(8 + n + a, 8 + n + b)) };
  }
  return out;
}

// A random input of the graph input's dtype: normal floats, small whole numbers
// (ids 0..9, valid for any embedding table of 10 rows or more), or a 0/1 mask.
function randomInput(n, dtype) {
  if (dtype === 'complex64') return randomNormal(2 * n);  // (real, imaginary) pairs
  const floats = randomNormal(n);
  if (dtype === 'bool') return Uint8Array.from(floats, (x) => (x > 0 ? 1 : 0));
  if (dtype === 'int64') return BigInt64Array.from(floats, (x) => BigInt(Math.floor(Math.abs(x) * 4) % 10));
  if (dtype && dtype.startsWith('int')) return Int32Array.from(floats, (x) => Math.floor(Math.abs(x) * 4) % 10);
  return floats;
}

function stats(data) {
  let lo = Infinity, hi = -Infinity, sum = 0;
  for (const v of data) { const x = Number(v); lo = Math.min(lo, x); hi = Math.max(hi, x); sum += x; }
  return { min: lo, max: hi, mean: sum / data.length };
}

function relativeError(got, want) {
  let err = 0, scale = 1e-12;
  for (let i = 0; i < want.length; ++i) { err = Math.max(err, Math.abs(Number(got[i]) - Number(want[i]))); scale = Math.max(scale, Math.abs(Number(want[i]))); }
  return err / scale;
}

function colormap(t) {
  const x = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  return VIRIDIS[i].map((c, k) => Math.round(c + (VIRIDIS[i + 1][k] - c) * f));
}

function heatmap(data, offset, h, w, lo, hi) {
  const c = document.createElement('canvas');
  c.width = w;
  c.height = h;
  const ctx = c.getContext('2d');
  const img = ctx.createImageData(w, h);
  for (let i = 0; i < h * w; ++i) {
    const [r, g, b] = colormap((data[offset + i] - lo) / (hi - lo || 1));
    img.data.set([r, g, b, 255], 4 * i);
  }
  ctx.putImageData(img, 0, 0);
  return c;
}

// The share of the run's time per engine (with the per-node profile).
function engineShares(profile) {
  const total = profile.reduce((a, t) => a + t.ms, 0) || 1e-9;
  const share = (engine) => profile.filter((t) => t.engine === engine).reduce((a, t) => a + t.ms, 0) / total;
  const count = (engine) => profile.filter((t) => t.engine === engine).length;
  return `<tr><th>on XNNPACK</th><td class="num" id="run-xnnpack-share">${(100 * share('xnnpack')).toFixed(1)}% (${count('xnnpack')} nodes)</td></tr>
    <tr><th>as Winograd convolutions</th><td class="num" id="run-winograd-share">${(100 * share('winograd')).toFixed(1)}% (${count('winograd')} nodes)</td></tr>
    <tr><th>on portable kernels</th><td class="num" id="run-portable-share">${(100 * share('portable')).toFixed(1)}% (${count('portable')} nodes)</td></tr>`;
}

// The inputs' shapes to run: a symbolic size (a torch.export.Dim) is the size
// the program was exported with (the .pt2 reader's example_input_shapes), or
// the symbol's least value when it is a plain symbol with a range. `symbols`
// says which sizes stand for which symbols, and their ranges, for the person.
export function exampleShapes(doc) {
  const meta = doc.metadata ?? {};
  const parse = (text) => { try { return text ? JSON.parse(text) : null; } catch { return null; } };
  const examples = parse(meta.example_input_shapes) ?? [];
  const ranges = parse(meta.symbol_ranges) ?? {};
  const symbols = [];
  const range = (sym) => (ranges[sym] ? ` in ${ranges[sym][0] ?? 0}…${ranges[sym][1] ?? '∞'}` : '');
  const shapes = doc.graph.inputs.map((id, k) => {
    const shape = doc.graph.values[id].shape;
    if (!shape) return null;
    return shape.map((d, i) => {
      if (Number.isInteger(d)) return d;
      const example = examples[k]?.[i];
      const size = Number.isInteger(example) && example > 0 ? example : Math.max(1, ranges[d]?.[0] ?? 1);
      symbols.push(`${d} = ${size}${range(d)}`);
      return size;
    });
  });
  return { shapes, symbols };
}

export class RunPanel {
  constructor(app) {
    this.app = app;
    if (globalThis.crossOriginIsolated) for (const t of [2, 4]) $('run-threads').append(new Option(String(t)));
    $('run-input').addEventListener('change', (e) => { if (e.target.value === 'image') $('run-image').click(); });
    $('run-image').addEventListener('change', () => { if ($('run-image').files.length) app.status(`Image: ${$('run-image').files[0].name}`); });
    $('run').onclick = () => this.run();
    // Shapes a person typed (not those reset() wrote from the model before) are what the next model is read for.
    this.typedShapes = false;
    $('run-shape').addEventListener('input', () => { this.typedShapes = true; });
  }

  // A model was opened: its input shapes, and the test input when it has one
  // (a sample's, or an .io.safetensors opened with it).
  reset(described, sample) {
    $('run-result').replaceChildren();
    const { shapes, symbols } = exampleShapes(described.document);
    $('run-shape').value = shapes.map((s) => (s ? s.join(',') : '')).join(' ; ');
    $('run-symbols').hidden = !symbols.length;
    $('run-symbols').textContent = symbols.length ? `${symbols.join(', ')}: the exported example (edit to run another size)` : '';
    this.typedShapes = false;
    $('run-input').querySelector('[value=test]').disabled = !sample;
    $('run-input').value = sample ? 'test' : 'random';
  }

  async imageInput(shape) {
    const file = $('run-image').files[0];
    if (!file) throw new Error('Choose an image first.');
    if (shape.length !== 4 || shape[1] !== 3) throw new Error(`An image fits a [N, 3, H, W] input; this one is [${shape}].`);
    const bitmap = await createImageBitmap(file);
    const c = new OffscreenCanvas(shape[3], shape[2]);
    const ctx = c.getContext('2d');
    ctx.drawImage(bitmap, 0, 0, shape[3], shape[2]);
    const px = ctx.getImageData(0, 0, shape[3], shape[2]).data;
    const hw = shape[2] * shape[3];
    const data = new Float32Array(3 * hw);
    for (let i = 0; i < hw; ++i) for (let ch = 0; ch < 3; ++ch) data[ch * hw + i] = (px[4 * i + ch] / 255 - MEAN[ch]) / STD[ch];
    return data;
  }

  async run() {
    const { app } = this;
    const state = app.state;
    if (!state.current) return;
    const button = $('run');
    button.disabled = true;
    $('run-result').replaceChildren();  // the last result goes: what shows next is this run's
    try {
      app.clearError();
      const how = $('run-input').value;
      const threads = Number($('run-threads').value);
      const profile = $('run-profile').checked;
      let inputs;
      let expected = null;
      let prepared = { finalizeMs: 0 };
      if (how === 'test' && (state.sample || state.testIo)) {
        const io = readSafetensors(state.testIo ?? await (await fetch(`/models/${state.sample}/${state.sample}.io.safetensors`)).arrayBuffer());
        inputs = [];
        for (let i = 0; `input.${i}` in io; ++i) inputs.push(io[`input.${i}`]);
        expected = [];
        for (let i = 0; `output.${i}` in io; ++i) expected.push(io[`output.${i}`]);
      } else {
        const shapes = parseShapes($('run-shape').value);
        if (!shapes.length || shapes.some((s) => !s.length || s.some((d) => !Number.isInteger(d) || d <= 0)))
          throw new Error(`"${$('run-shape').value}" is not a shape: write dims like 1,3,224,224 (inputs separated by ;)`);
        // The worker plans first: shapes too large for the memory are refused
        // before the page makes inputs of that size.
        app.status('Preparing the model for these shapes…');
        prepared = await app.worker.call('prepare', { shapes, threads, profile });
        inputs = [];
        const values = state.current.document.graph.values;
        const dtypes = state.current.document.graph.inputs.map((v) => values[v].dtype);
        for (const [k, s] of shapes.entries()) {
          const count = s.reduce((a, b) => a * b, 1);
          const dtype = dtypes[k] ?? 'float32';
          inputs.push({ shape: s, data: how === 'image' && dtype === 'float32' ? await this.imageInput(s) : randomInput(count, dtype) });
        }
      }
      app.status('Running in the worker…');
      const r = await app.worker.call('run', { inputs, warm: Math.max(1, Math.min(200, Number($('run-count').value) || 5)), threads, profile });
      r.finalizeMs ||= prepared.finalizeMs;
      app.view.overlayTimes(profile ? r.profile : null);
      this.showResult(r, expected);
      app.selectTab('run');
      app.status(`Ran: first ${r.firstMs.toFixed(1)} ms, warm median ${r.medianMs.toFixed(1)} ms.`);
    } catch (e) {
      app.error(`${e.code ?? 'error'}: ${e.message}`);
    } finally {
      button.disabled = false;
    }
  }

  showResult(r, expected) {
    const box = $('run-result');
    box.innerHTML = `<h2>Result</h2>
      <table class="kv">
        <tr><th>first run</th><td class="num" id="run-first">${r.firstMs.toFixed(2)} ms</td></tr>
        <tr><th>warm median</th><td class="num" id="run-median">${r.medianMs.toFixed(2)} ms</td></tr>
        ${r.finalizeMs ? `<tr><th>finalize (pack weights)</th><td class="num">${r.finalizeMs.toFixed(1)} ms</td></tr>` : ''}
        <tr><th>threads</th><td class="num" id="run-threads-used">${r.threads}</td></tr>
        ${r.profile ? engineShares(r.profile) : ''}
      </table>`;
    r.outputs.forEach((o, i) => box.appendChild(this.outputSection(o, i, expected?.[i] ?? null)));
  }

  outputSection(o, i, want) {
    if (o.data instanceof BigInt64Array) o = { ...o, data: Float64Array.from(o.data, Number) };  // int64 shown as numbers
    if (o.dtype === 'complex64') {  // shown by magnitude: the pairs' |z|
      const z = o.data;
      o = { ...o, dtype: 'complex64 (magnitudes shown)', data: Float32Array.from({ length: z.length / 2 }, (_, k) => Math.hypot(z[2 * k], z[2 * k + 1])) };
      want = null;
    }
    const s = stats(o.data);
    const err = want ? relativeError(o.data, want.data) : null;
    const section = document.createElement('div');
    section.innerHTML = `<h3>Output ${i}</h3><table class="kv">
      <tr><th>shape</th><td class="mono output-shape">${shapeStr(o.shape)} ${o.dtype}</td></tr>
      <tr><th>min / max</th><td class="num">${fmt(s.min)} / ${fmt(s.max)}</td></tr>
      <tr><th>mean</th><td class="num">${fmt(s.mean)}</td></tr>
      ${err !== null ? `<tr><th>vs torch</th><td class="num"><span class="pill ${err <= 1e-4 ? 'good' : 'warn'}" id="run-error-${i}" data-error="${err}">max rel. error ${err.toExponential(2)}</span></td></tr>` : ''}
    </table>`;
    const sh = o.shape;
    if (sh.length === 4 || sh.length === 5) section.append(...this.slices(o, s));
    else if (sh.length === 2 && sh[1] > 1) section.appendChild(this.topClasses(o));
    return section;
  }

  // A heatmap of one channel (and depth slice, for 3D), with sliders.
  slices(o, s) {
    const sh = o.shape;
    const [, C] = sh;
    const D = sh.length === 5 ? sh[2] : 1;
    const H = sh[sh.length - 2];
    const W = sh[sh.length - 1];
    const controls = document.createElement('div');
    controls.className = 'form';
    controls.innerHTML = `<label>channel <input type="range" min="0" max="${C - 1}" value="0"></label>` +
      (D > 1 ? `<label>slice (depth) <input type="range" min="0" max="${D - 1}" value="${D >> 1}"></label>` : '');
    const pic = document.createElement('div');
    const draw = () => {
      const [cIn, dIn] = controls.querySelectorAll('input');
      const c = Number(cIn.value);
      const d = dIn ? Number(dIn.value) : 0;
      pic.replaceChildren(heatmap(o.data, ((c * D) + d) * H * W, H, W, s.min, s.max));
      pic.title = `channel ${c}${D > 1 ? `, slice ${d}` : ''}; ${fmt(s.min)} … ${fmt(s.max)}`;
    };
    controls.addEventListener('input', draw);
    draw();
    return [controls, pic];
  }

  topClasses(o) {
    const row = Array.from(o.data.slice(0, o.shape[1]));
    const top = row.map((v, k) => [v, k]).sort((a, b) => b[0] - a[0]).slice(0, 5);
    const max = Math.max(...top.map((t) => Math.abs(t[0])), 1e-9);
    const list = document.createElement('table');
    list.className = 'kv';
    list.innerHTML = '<tr><th>top classes</th><td></td></tr>' + top.map(([v, k]) => `<tr><th>class ${k}</th><td><div class="bar" style="width:${Math.max(2, (100 * Math.abs(v)) / max)}%"></div>${fmt(v)}</td></tr>`).join('');
    return list;
  }
}

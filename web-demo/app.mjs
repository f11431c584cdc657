// The page: open a model (samples, file picker, drag and drop), show its
// graph and what it computes, optimize it, run it in a Web Worker.
import { CATEGORIES, GraphView, escapeXml } from './graph_view.mjs';
import { human, modelCost, nodeCost } from './model_stats.mjs';

const $ = (id) => document.getElementById(id);
export const SAMPLES = [
  ['unet3d_sigmoid_traced', '3D UNet, ends in sigmoid'],
  ['unet3d_sigmoid_export', '3D UNet, ends in sigmoid (torch.export)'],
  ['unet3d_two_heads', '3D UNet, two heads (per channel)'],
  ['unet3d_softmax', '3D UNet, ends in softmax'],
  ['unet2d', '2D UNet'],
  ['mobilenet_v2_traced', 'MobileNetV2 (traced)'],
  ['resnet18_traced', 'ResNet-18 (traced)'],
];

// ---- the worker ------------------------------------------------------------
const worker = new Worker(new URL('./worker.mjs', import.meta.url), { type: 'module' });
let nextId = 1;
const pending = new Map();
worker.onmessage = (e) => {
  const { id, ok, result, error } = e.data;
  const p = pending.get(id);
  pending.delete(id);
  if (ok) p.resolve(result);
  else p.reject(Object.assign(new Error(error.message), { code: error.code }));
};
worker.onerror = (e) => showError(`The worker failed: ${e.message}`);
function call(type, args = {}, transfer = []) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, type, ...args }, transfer);
  });
}

// ---- state -----------------------------------------------------------------
const state = { name: '', loaded: null, current: null, before: null, after: null, report: null, sample: null, showing: 'after' };
const view = new GraphView($('graph'), { onSelect: (meta) => showNode(meta) });
window.__tracegraph = { state, view };  // for the end-to-end tests

// ---- status, errors, progress --------------------------------------------
function status(text) { $('status').textContent = text; }
function showError(message) {
  $('error-text').textContent = message;
  $('error').hidden = false;
  status('Error.');
}
function clearError() { $('error').hidden = true; }
$('error-close').onclick = clearError;
function progress(fraction, text) {
  $('progress').hidden = fraction === null;
  if (fraction !== null) {
    $('progress-bar').style.width = `${Math.round(Math.min(1, fraction) * 100)}%`;
    $('progress-text').textContent = text;
  }
}

// Reads a response or a File with progress, summed over several of them.
async function readAll(sources, label) {
  const total = sources.reduce((a, s) => a + (s.size || 0), 0);
  let done = 0;
  const out = [];
  for (const s of sources) {
    const reader = s.stream.getReader();
    const chunks = [];
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      chunks.push(value);
      done += value.byteLength;
      progress(total ? done / total : 0.5, `${label}: ${human(done, 'B')}${total ? ` of ${human(total, 'B')}` : ''}`);
    }
    const bytes = new Uint8Array(chunks.reduce((a, c) => a + c.byteLength, 0));
    let at = 0;
    for (const c of chunks) { bytes.set(c, at); at += c.byteLength; }
    out.push(bytes.buffer);
  }
  return out;
}

// ---- opening models ------------------------------------------------------
async function openBytes(json, weights, jsonName, weightsName, sample = null) {
  clearError();
  status(`Reading ${jsonName}…`);
  const t = performance.now();
  const described = await call('load', { json, weights, jsonName, weightsName }, [json, weights]);
  state.loaded = null;  // set again once the new graph is drawn
  state.name = jsonName.replace(/\.json$/, '');
  state.sample = sample;
  state.before = described;
  state.after = null;
  state.report = null;
  state.showing = 'before';
  $('view-toggle').hidden = true;
  $('model-name').textContent = state.name;
  $('run-result').replaceChildren();
  $('tab-report').innerHTML = '<p class="muted">Press <b>Optimize</b> to run the default pipeline.</p>';
  await showDescribed(described);
  const shapes = described.document.graph.inputs.map((i) => described.document.graph.values[i].shape);
  $('run-shape').value = shapes.map((s) => (s ? s.join(',') : '')).join(' ; ');
  $('run-input').querySelector('[value=test]').disabled = !sample;
  $('run-input').value = sample ? 'test' : 'random';
  const drawn = state.lastLayout;
  status(`Read ${state.name} in ${(performance.now() - t).toFixed(0)} ms: ${described.document.graph.nodes.length} nodes, laid out in ${drawn.layoutMs.toFixed(0)} ms, drawn in ${drawn.drawMs.toFixed(0)} ms.`);
  state.loaded = state.name;
}

async function showDescribed(described) {
  state.current = described;
  $('empty').hidden = true;
  const drawn = await view.show(described.document, described.canonical);
  state.lastLayout = drawn;
  showSummary();
  selectTab('summary');
  status(`${described.document.graph.nodes.length} nodes; laid out in ${drawn.layoutMs.toFixed(0)} ms, drawn in ${drawn.drawMs.toFixed(0)} ms.`);
}

async function openSample(name) {
  try {
    const base = `/models/${name}/${name}`;
    const responses = await Promise.all([fetch(`${base}.json`), fetch(`${base}.safetensors`)]);
    for (const r of responses) if (!r.ok) throw new Error(`${r.url} answered ${r.status}`);
    const [json, weights] = await readAll(responses.map((r) => ({ stream: r.body, size: Number(r.headers.get('content-length')) || 0 })), `Downloading ${name}`);
    await openBytes(json, weights, `${name}.json`, `${name}.safetensors`, name);
  } catch (e) {
    showError(e.code ? `${e.code}: ${e.message}` : String(e.message ?? e));
  } finally {
    progress(null);
  }
}

async function openFiles(files) {
  try {
    const list = [...files];
    const json = list.find((f) => f.name.endsWith('.json'));
    let weights = list.find((f) => f.name.endsWith('.safetensors'));
    if (!json) throw new Error(`Open the graph's .json together with its .safetensors (got: ${list.map((f) => f.name).join(', ') || 'nothing'}).`);
    if (!weights) {
      let named = '';
      try { named = JSON.parse(await json.text()).weights; } catch { /* reported by the loader */ }
      if (named) throw new Error(`${json.name} keeps its weights in ${named}: open both files together.`);
      weights = new File([new Uint8Array(0)], 'none.safetensors');
    }
    const [jb, wb] = await readAll([json, weights].map((f) => ({ stream: f.stream(), size: f.size })), `Reading ${json.name}`);
    await openBytes(jb, wb, json.name, weights.name);
  } catch (e) {
    showError(e.code ? `${e.code}: ${e.message}` : String(e.message ?? e));
  } finally {
    progress(null);
  }
}

$('file').addEventListener('change', (e) => { if (e.target.files.length) openFiles(e.target.files); e.target.value = ''; });
for (const [name, label] of SAMPLES) $('samples').append(new Option(label, name));
$('samples').addEventListener('change', (e) => { if (e.target.value) openSample(e.target.value); e.target.value = ''; });
const canvas = $('canvas');
canvas.addEventListener('dragover', (e) => { e.preventDefault(); $('drop-hint').hidden = false; });
canvas.addEventListener('dragleave', (e) => { if (!canvas.contains(e.relatedTarget)) $('drop-hint').hidden = true; });
canvas.addEventListener('drop', (e) => { e.preventDefault(); $('drop-hint').hidden = true; openFiles(e.dataTransfer.files); });

// ---- panels --------------------------------------------------------------
function selectTab(name) {
  for (const b of document.querySelectorAll('#panel nav .tab')) b.classList.toggle('on', b.dataset.tab === name);
  for (const t of document.querySelectorAll('.tab-body')) t.hidden = t.id !== `tab-${name}`;
}
for (const b of document.querySelectorAll('#panel nav .tab')) b.onclick = () => selectTab(b.dataset.tab);

const shapeStr = (s) => (s ? `[${s.join(', ')}]` : '?');
const activationKindStr = (a) => {
  if (a.kind === 'clip') return `clip(${a.min ?? '-∞'}, ${a.max ?? '∞'})`;
  if (a.kind === 'softmax' || a.kind === 'log_softmax') return `${a.kind}(dim=${a.dim})`;
  if (a.kind === 'per_channel') return `per channel: ${(a.channels ?? []).map((c) => `[${c.begin}, ${c.end}) ${c.kind}`).join(', ')}`;
  return a.kind;
};
// "sigmoid, then upsample_bilinear2d": the range-keeping ops after it too.
const activationStr = (a) => [activationKindStr(a), ...(a.after ?? [])].join(', then ');
const activationPill = (a) => `<span class="pill ${a.kind === 'none' ? 'warn' : a.kind === 'unknown' ? '' : 'good'}">${escapeXml(activationStr(a))}</span>`;
function specStr(spec) {
  if (!spec) return '<span class="muted">none (flat)</span>';
  const walk = (s) => {
    if (s.type === null) return '*';
    const kids = s.children_spec.map(walk);
    if (s.type === 'builtins.tuple') return `(${kids.join(', ')}${kids.length === 1 ? ',' : ''})`;
    if (s.type === 'builtins.list') return `[${kids.join(', ')}]`;
    if (/dict/i.test(s.type)) { const keys = JSON.parse(s.context); return `{${keys.map((k, i) => `${k}: ${kids[i]}`).join(', ')}}`; }
    return `${s.type}(${kids.join(', ')})`;
  };
  return `<code>${escapeXml(walk(spec[1] ?? spec))}</code>`;
}

function showSummary() {
  const d = state.current;
  const doc = d.document;
  const cost = modelCost(doc);
  const ops = {};
  for (const n of doc.graph.nodes) ops[n.op] = (ops[n.op] ?? 0) + 1;
  const values = doc.graph.values;
  $('tab-summary').innerHTML = `
    <h2>${escapeXml(state.name)}</h2>
    <table class="kv">
      <tr><th>nodes</th><td class="num" id="summary-nodes">${doc.graph.nodes.length}</td></tr>
      <tr><th title="every constant: weights, biases, and buffers such as a batch norm's running statistics">parameters</th><td class="num">${cost.params.toLocaleString('en-US')} (${human(cost.params * 4, 'B')})</td></tr>
      <tr><th>FLOPs</th><td class="num">${human(cost.flops, 'FLOP')}</td></tr>
      <tr><th>inputs</th><td>${doc.graph.inputs.map((i) => `<code>${escapeXml(values[i].name)}</code> ${values[i].dtype ?? ''} ${shapeStr(values[i].shape)}`).join('<br>')}</td></tr>
      <tr><th>in spec</th><td>${specStr(doc.in_spec)}</td></tr>
      <tr><th>out spec</th><td>${specStr(doc.out_spec)}</td></tr>
    </table>
    <h3>Outputs and their activation</h3>
    <table class="kv" id="summary-activation">
      ${doc.graph.outputs.map((vid, i) => `<tr><th>${i}: <code>${escapeXml(values[vid].name)}</code><br><span class="muted">${shapeStr(values[vid].shape)}</span></th>
        <td>${activationPill(d.activation[i])}<br><span class="muted">${d.activation[i].node ? `by <code>${escapeXml(d.activation[i].node)}</code>` : ''}</span></td></tr>`).join('')}
    </table>
    <p class="muted">${d.activation.some((a) => a.kind === 'sigmoid') ? 'It already ends in a sigmoid: do not apply another.' : d.activation.every((a) => a.kind === 'none') ? 'It returns raw values (logits): apply the activation yourself if you need one.' : ''}</p>
    <h3>Ops</h3>
    <table class="kv">${Object.entries(ops).sort((a, b) => b[1] - a[1]).map(([op, n]) => `<tr><th><code>${escapeXml(op)}</code></th><td class="num">${n}</td></tr>`).join('')}</table>`;
  $('legend').innerHTML = CATEGORIES.map((c) => `<span><i style="background:${c.fill};border:1px solid ${c.stroke}"></i>${c.name}</span>`).join('');
}

function showNode(meta) {
  const d = state.current;
  const doc = d.document;
  const values = doc.graph.values;
  const valueRow = (vid) => {
    const v = values[vid];
    return `<tr><th><code>${escapeXml(v.name)}</code></th><td>${v.dtype ?? '?'} ${shapeStr(v.shape)}${v.constant ? ' <span class="pill">weight</span>' : ''}</td></tr>`;
  };
  if (!meta.node) {
    $('tab-node').innerHTML = `<h2>${meta.kind === 'input' ? 'Graph input' : 'Graph output'}</h2><table class="kv">${valueRow(meta.value)}</table>`;
    selectTab('node');
    return;
  }
  const n = meta.node;
  const cost = nodeCost(doc, n);
  const attrs = Object.entries(n.attributes).filter(([k]) => k !== 'arg_names');
  const argNames = n.attributes.arg_names?.value ?? [];
  const weights = n.inputs.map((vid, i) => [vid, argNames[i]]).filter(([vid]) => values[vid].constant);
  $('tab-node').innerHTML = `
    <h2 id="node-title"><code>${escapeXml(n.name)}</code></h2>
    <table class="kv">
      <tr><th>op</th><td><code id="node-op">${escapeXml(n.op)}</code></td></tr>
      <tr><th>canonical op</th><td><code>${escapeXml(meta.canonical ?? '—')}</code></td></tr>
      <tr><th>FLOPs</th><td class="num">${human(cost.flops, 'FLOP')}</td></tr>
      <tr><th>parameters</th><td class="num">${cost.params.toLocaleString('en-US')}</td></tr>
    </table>
    <h3>Inputs</h3><table class="kv">${n.inputs.filter((vid) => !values[vid].constant).map(valueRow).join('') || '<tr><td class="muted">none</td></tr>'}</table>
    <h3>Outputs</h3><table class="kv" id="node-outputs">${n.outputs.map(valueRow).join('')}</table>
    <h3>Attributes</h3><table class="kv">${attrs.map(([k, a]) => `<tr><th>${escapeXml(k)}</th><td><code>${escapeXml(JSON.stringify(a.value))}</code></td></tr>`).join('') || '<tr><td class="muted">none</td></tr>'}</table>
    <h3>Weights</h3>${weights.length ? weights.map(([vid, arg]) => {
      const v = values[vid];
      const s = d.weightStats[v.name];
      return `<table class="kv"><tr><th>${escapeXml(arg ?? 'weight')}</th><td><code>${escapeXml(v.name)}</code></td></tr>
        <tr><th>shape, dtype</th><td>${shapeStr(v.shape)} ${v.dtype}</td></tr>
        ${s ? `<tr><th>count</th><td class="num">${s.count.toLocaleString('en-US')}</td></tr>
        <tr><th>min / max</th><td class="num">${fmt(s.min)} / ${fmt(s.max)}</td></tr>
        <tr><th>mean</th><td class="num">${fmt(s.mean)}</td></tr>` : ''}</table>`;
    }).join('') : '<p class="muted">none</p>'}`;
  selectTab('node');
}
const fmt = (x) => (x === null || x === undefined ? '—' : Math.abs(x) >= 1e4 || (Math.abs(x) < 1e-3 && x !== 0) ? x.toExponential(3) : x.toFixed(4));

// ---- search, fit ---------------------------------------------------------
$('search').addEventListener('input', (e) => {
  const n = view.search(e.target.value);
  $('search-count').textContent = e.target.value.trim() ? `${n} match${n === 1 ? '' : 'es'}` : '';
});
$('search').addEventListener('keydown', (e) => { if (e.key === 'Enter') view.nextMatch(); });
$('fit').onclick = () => view.fit();
document.addEventListener('keydown', (e) => { if (e.key === 'f' && document.activeElement === $('graph')) view.fit(); });

// ---- optimize ------------------------------------------------------------
$('optimize').onclick = async () => {
  if (!state.current) return;
  try {
    clearError();
    status('Optimizing…');
    const r = await call('optimize');
    state.report = r.report;
    state.after = r;
    state.showing = 'after';
    $('view-toggle').hidden = false;
    toggleButtons();
    await showDescribed(r);
    showReport();
    selectTab('report');
    status(`Optimized: ${r.report.nodes_before} → ${r.report.nodes_after} nodes in ${r.report.sweeps} sweeps.`);
  } catch (e) {
    showError(`${e.code ?? 'error'}: ${e.message}`);
  }
};
function toggleButtons() {
  $('show-before').classList.toggle('on', state.showing === 'before');
  $('show-after').classList.toggle('on', state.showing === 'after');
}
$('show-before').onclick = async () => { state.showing = 'before'; toggleButtons(); await showDescribed(state.before); };
$('show-after').onclick = async () => { if (state.after) { state.showing = 'after'; toggleButtons(); await showDescribed(state.after); } };
function showReport() {
  const r = state.report;
  $('tab-report').innerHTML = `
    <h2>Default pipeline</h2>
    <table class="kv" id="report-summary">
      <tr><th>nodes</th><td class="num">${r.nodes_before} → ${r.nodes_after}</td></tr>
      <tr><th>values</th><td class="num">${r.values_before} → ${r.values_after}</td></tr>
      <tr><th>sweeps</th><td class="num">${r.sweeps}${r.converged ? ' (converged)' : ''}</td></tr>
    </table>
    <h3>Transforms</h3>
    <table class="kv"><tr><th>transform</th><th class="num">runs</th><th class="num">rewrites</th><th class="num">ms</th></tr>
    ${r.transforms.map((t) => `<tr><td><code>${escapeXml(t.name)}</code></td><td class="num">${t.runs}</td><td class="num">${t.rewrites}</td><td class="num">${t.milliseconds.toFixed(1)}</td></tr>`).join('')}</table>
    <p class="muted">Before / After in the toolbar switch the graph shown.</p>`;
}

// ---- run -----------------------------------------------------------------
if (globalThis.crossOriginIsolated) for (const t of [2, 4]) $('run-threads').append(new Option(String(t)));
$('run-input').addEventListener('change', (e) => { if (e.target.value === 'image') $('run-image').click(); });
$('run-image').addEventListener('change', () => { if ($('run-image').files.length) status(`Image: ${$('run-image').files[0].name}`); });

function parseShapes(text) {
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
export function readSafetensors(buffer) {
  const view8 = new DataView(buffer);
  const n = Number(view8.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, n)));
  const out = {};
  for (const [k, v] of Object.entries(header)) {
    if (k === '__metadata__' || v.dtype !== 'F32') continue;
    const [a, b] = v.data_offsets;
    out[k] = { shape: v.shape, data: new Float32Array(buffer.slice(8 + n + a, 8 + n + b)) };
  }
  return out;
}
async function imageInput(shape) {
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
  const mean = [0.485, 0.456, 0.406];
  const std = [0.229, 0.224, 0.225];
  for (let i = 0; i < hw; ++i) for (let ch = 0; ch < 3; ++ch) data[ch * hw + i] = (px[4 * i + ch] / 255 - mean[ch]) / std[ch];
  return data;
}

$('run').onclick = async () => {
  if (!state.current) return;
  const button = $('run');
  button.disabled = true;
  $('run-result').replaceChildren();  // the last result goes: what shows next is this run's
  try {
    clearError();
    const how = $('run-input').value;
    const threads = Number($('run-threads').value);
    const profile = $('run-profile').checked;
    let inputs;
    let expected = null;
    let prepared = { finalizeMs: 0 };
    if (how === 'test' && state.sample) {
      const io = readSafetensors(await (await fetch(`/models/${state.sample}/${state.sample}.io.safetensors`)).arrayBuffer());
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
      status('Preparing the model for these shapes…');
      prepared = await call('prepare', { shapes, threads, profile });
      inputs = [];
      for (const s of shapes) inputs.push({ shape: s, data: how === 'image' ? await imageInput(s) : randomNormal(s.reduce((a, b) => a * b, 1)) });
    }
    status('Running in the worker…');
    const r = await call('run', { inputs, warm: Math.max(1, Math.min(200, Number($('run-count').value) || 5)), threads, profile });
    r.finalizeMs ||= prepared.finalizeMs;
    view.overlayTimes(profile ? r.profile : null);
    showRun(r, expected);
    status(`Ran: first ${r.firstMs.toFixed(1)} ms, warm median ${r.medianMs.toFixed(1)} ms.`);
  } catch (e) {
    showError(`${e.code ?? 'error'}: ${e.message}`);
  } finally {
    button.disabled = false;
  }
};

function stats(data) {
  let lo = Infinity, hi = -Infinity, sum = 0;
  for (const x of data) { lo = Math.min(lo, x); hi = Math.max(hi, x); sum += x; }
  return { min: lo, max: hi, mean: sum / data.length };
}
function relativeError(got, want) {
  let err = 0, scale = 1e-12;
  for (let i = 0; i < want.length; ++i) { err = Math.max(err, Math.abs(got[i] - want[i])); scale = Math.max(scale, Math.abs(want[i])); }
  return err / scale;
}
const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
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
    <tr><th>on portable kernels</th><td class="num" id="run-portable-share">${(100 * share('portable')).toFixed(1)}% (${count('portable')} nodes)</td></tr>`;
}

function showRun(r, expected) {
  const box = $('run-result');
  box.innerHTML = `<h2>Result</h2>
    <table class="kv">
      <tr><th>first run</th><td class="num" id="run-first">${r.firstMs.toFixed(2)} ms</td></tr>
      <tr><th>warm median</th><td class="num" id="run-median">${r.medianMs.toFixed(2)} ms</td></tr>
      ${r.finalizeMs ? `<tr><th>finalize (pack weights)</th><td class="num">${r.finalizeMs.toFixed(1)} ms</td></tr>` : ''}
      <tr><th>threads</th><td class="num" id="run-threads-used">${r.threads}</td></tr>
      ${r.profile ? engineShares(r.profile) : ''}
    </table>`;
  r.outputs.forEach((o, i) => {
    const s = stats(o.data);
    const err = expected && expected[i] ? relativeError(o.data, expected[i].data) : null;
    const section = document.createElement('div');
    section.innerHTML = `<h3>Output ${i}</h3><table class="kv">
      <tr><th>shape</th><td class="mono output-shape">${shapeStr(o.shape)} ${o.dtype}</td></tr>
      <tr><th>min / max</th><td class="num">${fmt(s.min)} / ${fmt(s.max)}</td></tr>
      <tr><th>mean</th><td class="num">${fmt(s.mean)}</td></tr>
      ${err !== null ? `<tr><th>vs LibTorch</th><td class="num"><span class="pill ${err <= 1e-4 ? 'good' : 'warn'}" id="run-error-${i}" data-error="${err}">max rel. error ${err.toExponential(2)}</span></td></tr>` : ''}
    </table>`;
    box.appendChild(section);
    const sh = o.shape;
    if (sh.length === 4 || sh.length === 5) {
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
        const offset = ((c * D) + d) * H * W;
        pic.replaceChildren(heatmap(o.data, offset, H, W, s.min, s.max));
        pic.title = `channel ${c}${D > 1 ? `, slice ${d}` : ''}; ${fmt(s.min)} … ${fmt(s.max)}`;
      };
      controls.addEventListener('input', draw);
      section.append(controls, pic);
      draw();
    } else if (sh.length === 2 && sh[1] > 1) {
      const row = Array.from(o.data.slice(0, sh[1]));
      const top = row.map((v, k) => [v, k]).sort((a, b) => b[0] - a[0]).slice(0, 5);
      const max = Math.max(...top.map((t) => Math.abs(t[0])), 1e-9);
      const list = document.createElement('table');
      list.className = 'kv';
      list.innerHTML = '<tr><th>top classes</th><td></td></tr>' + top.map(([v, k]) => `<tr><th>class ${k}</th><td><div class="bar" style="width:${Math.max(2, (100 * Math.abs(v)) / max)}%"></div>${fmt(v)}</td></tr>`).join('');
      section.appendChild(list);
    }
  });
  selectTab('run');
}

// Open a sample named in the URL (?sample=unet2d), for links and the tests.
const initial = new URLSearchParams(location.search).get('sample');
if (initial) openSample(initial);
window.__tracegraph.ready = true;

// The page's controller: the state, the status line, errors and progress, the
// tabs, and the parts that do the work, each its own module: the worker client
// (worker_client.mjs), opening models (opener.mjs), the graph (graph_view.mjs,
// folded by hierarchy.mjs; a second view for two graphs side by side), the
// panels (panels/: summary, node, optimize, run, numerics, diff, and the
// breadcrumb over the graph), exporting the view (export.mjs) and the link
// to a place in a model (place.mjs).
import { download, pngOfSvg, svgOfView } from './export.mjs';
import { GraphView } from './graph_view.mjs';
import { $ } from './format.mjs';
import { Breadcrumb } from './panels/breadcrumb.mjs';
import { DiffPanel } from './panels/diff.mjs';
import { ModelOpener } from './opener.mjs';
import { NodePanel } from './panels/node.mjs';
import { NumericsPanel } from './panels/numerics.mjs';
import { OptimizePanel } from './panels/optimize.mjs';
import { parsePlace, placeHash, restorePlace } from './place.mjs';
import { parseShapes, readSafetensors, RunPanel } from './panels/run.mjs';
import { SummaryPanel } from './panels/summary.mjs';
import { WorkerClient } from './worker_client.mjs';

class App {
  constructor(samples) {
    // before/after: what the worker described as read and as optimized; current: what is shown.
    this.state = { name: '', loaded: null, current: null, before: null, after: null, report: null, sample: null, showing: 'after', lastLayout: null };
    this.worker = new WorkerClient(new URL('./worker.mjs', import.meta.url), (message) => this.error(message));
    this.view = new GraphView($('graph'), {
      onSelect: (meta) => {
        this.nodePanel.show(meta, this.state.current, this.view.hierarchy, this.numerics.errors);
        this.selectTab('node');
        this.diffPanel.follow('a', meta);
        this.keepPlace();
      },
      onLocate: (chain) => this.breadcrumb.show(chain, this.view.hierarchy, this.state.name),
      onOverlay: (kind, legend) => { $('overlay').value = kind; $('legend').innerHTML = legend; },
      onLayout: () => this.keepPlace(),
    });
    // The second graph of the side-by-side view (panels/diff.mjs).
    this.viewB = new GraphView($('graph-b'), {
      onSelect: (meta) => {
        if (!this.diffPanel.open) return;
        this.nodePanel.show(meta, this.diffPanel.other, this.viewB.hierarchy);
        this.selectTab('node');
        this.diffPanel.follow('b', meta);
      },
    });
    this.breadcrumb = new Breadcrumb((g) => this.view.centerOnGroup(g));
    this.summary = new SummaryPanel();
    this.nodePanel = new NodePanel();
    this.optimizer = new OptimizePanel(this);
    this.runner = new RunPanel(this);
    this.opener = new ModelOpener(this, samples);
    this.numerics = new NumericsPanel(this);
    this.diffPanel = new DiffPanel(this);
    this.pendingPlace = null;  // a link's place, waiting for its file
    $('export-svg').onclick = () => this.guarded(async () => download(new Blob([this.exportSvg()], { type: 'image/svg+xml' }), `${this.state.name || 'graph'}.svg`));
    $('export-png').onclick = () => this.guarded(async () => download(await pngOfSvg(this.exportSvg()), `${this.state.name || 'graph'}.png`));
    $('copy-link').onclick = () => this.guarded(async () => {
      this.keepPlace();
      try { await navigator.clipboard.writeText(location.href); } catch { /* no clipboard here: the address bar has it */ }
      this.status(`The link to this place (in the address bar): ${location.href}`);
    });
    $('asks-for-file').addEventListener('change', (e) => { if (e.target.files.length) this.opener.openFiles(e.target.files); e.target.value = ''; });
    $('error-close').onclick = () => this.clearError();
    for (const b of document.querySelectorAll('#panel nav .tab')) b.onclick = () => this.selectTab(b.dataset.tab);
    $('search').addEventListener('input', (e) => {
      const n = this.view.search(e.target.value);
      $('search-count').textContent = e.target.value.trim() ? `${n} match${n === 1 ? '' : 'es'}` : '';
    });
    $('search').addEventListener('keydown', (e) => { if (e.key === 'Enter') this.view.nextMatch().catch((err) => this.error(String(err.message ?? err))); });
    $('overlay').addEventListener('change', (e) => { if (this.view.model) this.view.setOverlay(e.target.value); });
    $('fit').onclick = () => this.view.fit();
    document.addEventListener('keydown', (e) => { if (e.key === 'f' && document.activeElement === $('graph')) this.view.fit(); });
  }

  status(text) { $('status').textContent = text; }
  // Runs `fn`, reporting what it throws on the page.
  async guarded(fn) {
    try {
      this.clearError();
      await fn();
    } catch (e) {
      this.error(e.code ? `${e.code}: ${e.message}` : String(e.message ?? e));
    } finally {
      this.progress(null);
    }
  }

  exportSvg() {
    if (!this.view.layout) throw new Error('Open a model first.');
    return svgOfView(this.view);
  }

  // The address bar holds the link to what is shown: the file, the unfolded groups, the selection.
  keepPlace() {
    const { state } = this;
    if (!state.loaded || this.restoring) return;
    const sel = this.view.selected;
    const node = sel?.startsWith('n:') ? this.view.info.get(sel)?.node?.name : null;
    history.replaceState(null, '', placeHash({ sample: state.sample, file: state.fileName, hierarchy: this.view.hierarchy, selected: sel, nodeName: node }));
  }

  // Opens a link's place: a sample at once; a user's file once they open it (the page asks by name).
  async goToPlace(place) {
    if (place.sample) {
      this.pendingPlace = place;
      await this.opener.openSample(place.sample);
      return;
    }
    this.pendingPlace = place;
    $('asks-for-text').textContent = `This link is to a place in ${place.file}, a file on your computer: open it to go there.`;
    $('asks-for').hidden = false;
    $('empty').hidden = true;
  }

  // After a model opened: the link's place, when it is this file's.
  async placeAfterOpen() {
    const place = this.pendingPlace;
    if (!place || (place.sample ? place.sample !== this.state.sample : place.file !== this.state.fileName)) return;
    this.pendingPlace = null;
    $('asks-for').hidden = true;
    this.restoring = true;
    try {
      await restorePlace(this.view, place);
    } finally {
      this.restoring = false;
    }
    this.keepPlace();
  }
  error(message) {
    $('error-text').textContent = message;
    $('error').hidden = false;
    this.status('Error.');
  }
  clearError() { $('error').hidden = true; }
  progress(fraction, text) {
    $('progress').hidden = fraction === null;
    if (fraction !== null) {
      $('progress-bar').style.width = `${Math.round(Math.min(1, fraction) * 100)}%`;
      $('progress-text').textContent = text;
    }
  }
  selectTab(name) {
    for (const b of document.querySelectorAll('#panel nav .tab')) b.classList.toggle('on', b.dataset.tab === name);
    for (const t of document.querySelectorAll('.tab-body')) t.hidden = t.id !== `tab-${name}`;
  }

  // The input shapes a model is read for: the test input's, else the Run
  // panel's shape field when a person typed shapes there; undefined
  // otherwise (the shapes the field shows for the model opened before are not
  // the next one's: read for them, a .pt2's inner shapes and FLOPs were lost).
  inputShapesFor(testIo) {
    if (testIo) {
      const io = readSafetensors(testIo.slice(0));
      const shapes = [];
      for (let i = 0; `input.${i}` in io; ++i) shapes.push(io[`input.${i}`].shape);
      if (shapes.length) return shapes;
    }
    if (!this.runner.typedShapes) return undefined;
    const typed = parseShapes($('run-shape').value);
    return typed.length && typed.every((s) => s.length && s.every((d) => Number.isInteger(d) && d > 0)) ? typed : undefined;
  }

  // A model's bytes, read: the worker loads them (a bad file leaves the model
  // shown before in place), and every panel starts over.
  // `testIo`: the bytes of an .io.safetensors opened with the model.
  async open(json, weights, jsonName, weightsName, sample = null, testIo = null) {
    const { state } = this;
    this.clearError();
    this.status(`Reading ${jsonName}…`);
    const t = performance.now();
    // `weights` is null for a model in one file (a .pt2, a .ts). A scripted
    // TorchScript file whose code branches on its input shapes is read for
    // the test input's shapes, or those typed in the Run panel's shape field.
    const inputShapes = this.inputShapesFor(testIo);
    let described;
    const tw = performance.now();
    try {
      described = await this.worker.call('load', { json, weights, jsonName, weightsName, inputShapes }, [json, weights].filter(Boolean));
    } catch (e) {
      if (e.code === 'needs_input_shapes') {
        e.message += '. Type its input shapes in the Run panel (dims like 1,3,224,224; inputs separated by ;) and open it again, or open its .io.safetensors with it.';
      }
      throw e;
    }
    const workerMs = performance.now() - tw;
    state.loaded = null;  // set again once the new graph is drawn
    state.name = jsonName.replace(/\.(json|pt2|ts|pt)$/, '');
    state.fileName = jsonName;
    state.sample = sample;
    state.testIo = testIo;
    state.before = described;
    state.after = null;
    state.report = null;
    state.showing = 'before';
    $('model-name').textContent = state.name;
    this.optimizer.reset();
    this.numerics.reset();
    this.runner.reset(described, sample || testIo);
    await this.show(described);
    const drawn = state.lastLayout;
    // From the bytes in hand to the graph fitted on the screen (the end-to-end test reads it).
    state.openMs = performance.now() - t;
    const { readMs = 0, describeMs = 0 } = described.timings ?? {};
    state.openTimes = { readMs, describeMs, transferMs: workerMs - readMs - describeMs, layoutMs: drawn.layoutMs, drawMs: drawn.drawMs };
    this.status(`Read ${state.name} and fitted it in ${state.openMs.toFixed(0)} ms: ${described.document.graph.nodes.length} nodes${drawn.groups ? ` (${drawn.groups} folded modules shown)` : ''}, laid out in ${drawn.layoutMs.toFixed(0)} ms, drawn in ${drawn.drawMs.toFixed(0)} ms.`);
    state.loaded = state.name;
    this.keepPlace();
    await this.placeAfterOpen();
  }

  // Draws a described graph and its summary.
  async show(described) {
    const { state } = this;
    state.current = described;
    $('empty').hidden = true;
    this.diffPanel.reset();  // a comparison is of the graphs shown before
    const drawn = await this.view.show(described.document, described.canonical, { flops: described.flops, tree: described.moduleTree });
    state.lastLayout = drawn;
    this.summary.show(described, state.name);
    this.selectTab('summary');
    this.status(`${described.document.graph.nodes.length} nodes${drawn.groups ? ` (${drawn.groups} folded modules shown)` : ''}; laid out in ${drawn.layoutMs.toFixed(0)} ms, drawn in ${drawn.drawMs.toFixed(0)} ms.`);
  }
}

const samples = await (await fetch(new URL('./samples.json', import.meta.url))).json();
const app = new App(samples);
window.__tracegraph = { state: app.state, view: app.view, viewB: app.viewB, app };  // for the end-to-end tests
// Open a sample named in the URL (?sample=unet2d), or a link's place (#sample=... or #file=...).
const initial = new URLSearchParams(location.search).get('sample');
const place = parsePlace(location.hash);
if (place) app.goToPlace(place);
else if (initial) app.opener.openSample(initial);
window.__tracegraph.ready = true;

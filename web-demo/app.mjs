// The page's controller: the state, the status line, errors and progress, the
// tabs, and the parts that do the work, each its own module: the worker client
// (worker_client.mjs), opening models (opener.mjs), the graph (graph_view.mjs,
// folded by hierarchy.mjs), and the panels (panels/: summary, node, optimize,
// run, and the breadcrumb over the graph).
import { GraphView } from './graph_view.mjs';
import { $ } from './format.mjs';
import { Breadcrumb } from './panels/breadcrumb.mjs';
import { ModelOpener } from './opener.mjs';
import { NodePanel } from './panels/node.mjs';
import { OptimizePanel } from './panels/optimize.mjs';
import { parseShapes, readSafetensors, RunPanel } from './panels/run.mjs';
import { SummaryPanel } from './panels/summary.mjs';
import { WorkerClient } from './worker_client.mjs';

class App {
  constructor(samples) {
    // before/after: what the worker described as read and as optimized; current: what is shown.
    this.state = { name: '', loaded: null, current: null, before: null, after: null, report: null, sample: null, showing: 'after', lastLayout: null };
    this.worker = new WorkerClient(new URL('./worker.mjs', import.meta.url), (message) => this.error(message));
    this.view = new GraphView($('graph'), {
      onSelect: (meta) => { this.nodePanel.show(meta, this.state.current, this.view.hierarchy); this.selectTab('node'); },
      onLocate: (chain) => this.breadcrumb.show(chain, this.view.hierarchy, this.state.name),
      onOverlay: (kind, legend) => { $('overlay').value = kind; $('legend').innerHTML = legend; },
    });
    this.breadcrumb = new Breadcrumb((g) => this.view.centerOnGroup(g));
    this.summary = new SummaryPanel();
    this.nodePanel = new NodePanel();
    this.optimizer = new OptimizePanel(this);
    this.runner = new RunPanel(this);
    this.opener = new ModelOpener(this, samples);
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
    state.sample = sample;
    state.testIo = testIo;
    state.before = described;
    state.after = null;
    state.report = null;
    state.showing = 'before';
    $('model-name').textContent = state.name;
    this.optimizer.reset();
    this.runner.reset(described, sample || testIo);
    await this.show(described);
    const drawn = state.lastLayout;
    // From the bytes in hand to the graph fitted on the screen (the end-to-end test reads it).
    state.openMs = performance.now() - t;
    const { readMs = 0, describeMs = 0 } = described.timings ?? {};
    state.openTimes = { readMs, describeMs, transferMs: workerMs - readMs - describeMs, layoutMs: drawn.layoutMs, drawMs: drawn.drawMs };
    this.status(`Read ${state.name} and fitted it in ${state.openMs.toFixed(0)} ms: ${described.document.graph.nodes.length} nodes${drawn.groups ? ` (${drawn.groups} folded modules shown)` : ''}, laid out in ${drawn.layoutMs.toFixed(0)} ms, drawn in ${drawn.drawMs.toFixed(0)} ms.`);
    state.loaded = state.name;
  }

  // Draws a described graph and its summary.
  async show(described) {
    const { state } = this;
    state.current = described;
    $('empty').hidden = true;
    const drawn = await this.view.show(described.document, described.canonical, { flops: described.flops, tree: described.moduleTree });
    state.lastLayout = drawn;
    this.summary.show(described, state.name);
    this.selectTab('summary');
    this.status(`${described.document.graph.nodes.length} nodes${drawn.groups ? ` (${drawn.groups} folded modules shown)` : ''}; laid out in ${drawn.layoutMs.toFixed(0)} ms, drawn in ${drawn.drawMs.toFixed(0)} ms.`);
  }
}

const samples = await (await fetch(new URL('./samples.json', import.meta.url))).json();
const app = new App(samples);
window.__tracegraph = { state: app.state, view: app.view };  // for the end-to-end tests
// Open a sample named in the URL (?sample=unet2d), for links and the tests.
const initial = new URLSearchParams(location.search).get('sample');
if (initial) app.opener.openSample(initial);
window.__tracegraph.ready = true;

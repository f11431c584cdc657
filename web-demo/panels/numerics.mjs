// The numerics comparison: a reference dump (tracegraph run --dump-nodes:
// LibTorch's value of every node for an input the file holds) is opened, the
// model runs in the worker on that input keeping every node's value, and
// each node is coloured by its error (the graph's "error" overlay); the
// panel names the first node, in execution order, past the tolerance: where
// the two runs part.
import { $, escapeXml } from '../format.mjs';
import { firstPast, nodeErrors } from '../numerics.mjs';
import { readSafetensors } from './run.mjs';

const sci = (x) => (Number.isNaN(x) ? 'NaN (shapes differ)' : x.toExponential(2));

export class NumericsPanel {
  constructor(app) {
    this.app = app;
    $('reference-file').addEventListener('change', (e) => {
      const file = e.target.files[0];
      e.target.value = '';
      if (file) this.app.guarded(async () => this.compare(await file.arrayBuffer(), file.name));
    });
    $('numerics-tolerance').addEventListener('change', () => { if (this.errors) this.show(); });
    $('numerics-result').addEventListener('click', (e) => {
      const link = e.target.closest('[data-node]');
      if (link) this.app.view.reveal(link.dataset.node);
    });
    this.reset();
  }

  // A model was opened: no reference yet.
  reset() {
    this.errors = null;
    this.name = null;
    $('numerics-result').innerHTML = '<p class="muted">No reference opened.</p>';
  }

  // `bytes`: the reference's .safetensors.
  async compare(bytes, name) {
    const { app } = this;
    if (!app.state.current) throw new Error('Open a model first, then its reference.');
    const reference = readSafetensors(bytes);
    const inputs = [];
    for (let i = 0; `@input.${i}` in reference; ++i) inputs.push(reference[`@input.${i}`]);
    if (!inputs.length) throw new Error(`${name} holds no inputs ("@input.0", ...): write it with tracegraph run MODEL -i x.npy --dump-nodes ${name}`);
    app.status(`Running ${app.state.name} on ${name}'s input, keeping every node's value…`);
    const t = performance.now();
    const r = await app.worker.call('runNodes', { inputs });
    this.errors = nodeErrors(reference, r.kept, r.outputs);
    this.name = name;
    this.ms = performance.now() - t;
    if (!this.errors.size) throw new Error(`${name} holds none of this graph's node names: was it written from this model?`);
    this.show();
    app.selectTab('compare');
  }

  tolerance() {
    const t = Number($('numerics-tolerance').value);
    return Number.isFinite(t) && t >= 0 ? t : 1e-4;
  }

  show() {
    const { app } = this;
    const tolerance = this.tolerance();
    const nodes = app.state.current.document.graph.nodes;
    const first = firstPast(nodes, this.errors, tolerance);
    let worst = 0;
    for (const e of this.errors.values()) worst = Number.isNaN(e.rel) || Number.isNaN(worst) ? NaN : Math.max(worst, e.rel);
    const past = [...this.errors.values()].filter((e) => !(e.rel <= tolerance)).length;
    app.view.setErrors(this.errors, tolerance);
    const module = (n) => app.view.hierarchy?.groups[app.view.hierarchy.groupOf.get(n.id)]?.path || '—';
    const e = first && this.errors.get(first.name);
    $('numerics-result').innerHTML = `<table class="kv">
      <tr><th>reference</th><td><code>${escapeXml(this.name)}</code></td></tr>
      <tr><th>nodes compared</th><td class="num" id="numerics-compared">${this.errors.size} of ${nodes.length}</td></tr>
      <tr><th>largest error</th><td class="num" id="numerics-worst">${sci(worst)}</td></tr>
      <tr><th>past ${escapeXml(String(tolerance))}</th><td class="num" id="numerics-past">${past} nodes</td></tr>
      <tr><th>first past it</th><td>${first
    ? `<a href="#" id="numerics-first" data-node="${escapeXml(first.name)}"><code>${escapeXml(first.name)}</code></a>
         <br><code>${escapeXml(first.op)}</code> in <code>${escapeXml(module(first))}</code>
         <br>max abs. error ${sci(e.abs)}, relative ${sci(e.rel)}`
    : '<span class="pill good" id="numerics-first-none">none: every node within the tolerance</span>'}</td></tr>
    </table>
    <p class="muted">Colour › error vs reference shows every node's error; a click on the node goes to it. Run with every node kept: ${this.ms.toFixed(0)} ms.</p>`;
    app.status(first ? `The runs part first at ${first.name} (${first.op}): max rel. error ${sci(e.rel)}.` : `Every node within ${tolerance} of ${this.name}.`);
  }
}

// Two graphs side by side: the graph before and after Optimize, or the file
// shown and another (read in the worker and described, not kept). The
// second graph is drawn in a view of its own beside the first; diff.mjs
// matches their nodes by module path and op, and both views mark what was
// added, removed and changed.
import { diffGraphs, diffNodes } from '../diff.mjs';
import { $, escapeXml } from '../format.mjs';

export class DiffPanel {
  constructor(app) {
    this.app = app;
    this.open = false;
    $('compare-file').addEventListener('change', (e) => {
      const files = [...e.target.files];
      e.target.value = '';
      if (files.length) this.app.guarded(() => this.compareFiles(files));
    });
    $('compare-optimized').onclick = () => this.app.guarded(() => this.compareOptimized());
    $('compare-close').onclick = () => this.close();
  }

  // A model was opened (or optimized): the second view goes.
  reset() {
    this.close();
    $('compare-optimized').disabled = !this.app.state.after;
  }

  async compareFiles(files) {
    const { app } = this;
    if (!app.state.current) throw new Error('Open a model first, then the one to compare it with.');
    const m = await app.opener.readModel(files);
    app.status(`Reading ${m.jsonName} to compare…`);
    const other = await app.worker.call('describeOther', { json: m.json, weights: m.weights, jsonName: m.jsonName, weightsName: m.weightsName });
    await this.show(app.state.current, other, app.state.name, m.jsonName.replace(/\.(json|pt2|ts|pt)$/, ''));
  }

  async compareOptimized() {
    const { state } = this.app;
    if (!state.after) throw new Error('Press Optimize first.');
    if (state.current !== state.before) await this.app.optimizer.showing('before');
    await this.show(state.before, state.after, `${state.name} as read`, `${state.name} optimized`);
  }

  // `a` is what the main view shows; `b` goes beside it.
  async show(a, b, titleA, titleB) {
    const { app } = this;
    $('view-b').hidden = false;
    $('canvas').classList.add('split');
    $('title-a').hidden = false;
    $('title-a').textContent = titleA;
    $('title-b').textContent = titleB;
    $('compare-close').hidden = false;
    this.open = true;
    this.other = b;
    app.view.fit();  // the view is half as wide now
    await app.viewB.show(b.document, b.canonical, { flops: b.flops, tree: b.moduleTree });
    const d = diffGraphs(diffNodes(a.document, a.canonical), diffNodes(b.document, b.canonical));
    app.view.setDiff(d.a);
    app.viewB.setDiff(d.b);
    // Node names by id on each side, and each matched node's partner: a selection on one side follows on the other.
    const names = (desc) => new Map(desc.document.graph.nodes.map((n) => [n.id, n.name]));
    const [na, nb] = [names(a), names(b)];
    this.partner = { a: new Map(d.pairs.map(([x, y]) => [x, nb.get(y)])), b: new Map(d.pairs.map(([x, y]) => [y, na.get(x)])) };
    this.counts = d.counts;
    const pill = (kind, n, what) => `<span class="pill ${kind}" id="diff-${kind}" data-count="${n}">${n} ${what}</span>`;
    $('diff-result').innerHTML = `<table class="kv">
      <tr><th>left</th><td><code>${escapeXml(titleA)}</code>: ${a.document.graph.nodes.length} nodes</td></tr>
      <tr><th>right</th><td><code>${escapeXml(titleB)}</code>: ${b.document.graph.nodes.length} nodes</td></tr>
      <tr><th>matched</th><td><span id="diff-same" data-count="${d.counts.same}">${d.counts.same} the same</span>, ${pill('changed', d.counts.changed, 'changed')}</td></tr>
      <tr><th>only left</th><td>${pill('removed', d.counts.removed, 'removed')}</td></tr>
      <tr><th>only right</th><td>${pill('added', d.counts.added, 'added')}</td></tr>
    </table>
    <p class="muted">Matched within each module by op, in order; a pair whose shapes, weights or attributes differ, or whose op was swapped, is changed. A folded module says what changed inside it (+added −removed ~changed).</p>`;
    app.selectTab('compare');
    app.status(`Side by side: ${d.counts.added} added, ${d.counts.removed} removed, ${d.counts.changed} changed, ${d.counts.same} the same.`);
  }

  // A node was selected in view `side` ('a' or 'b'): its match is selected in the other view.
  follow(side, meta) {
    if (!this.open || meta?.kind !== 'op') return;
    const name = this.partner?.[side].get(meta.node.id);
    if (name !== undefined) (side === 'a' ? this.app.viewB : this.app.view).reveal(name, { quiet: true });
  }

  close() {
    if (!this.open) return;
    this.open = false;
    $('view-b').hidden = true;
    $('canvas').classList.remove('split');
    $('title-a').hidden = true;
    $('compare-close').hidden = true;
    $('diff-result').replaceChildren();
    this.app.view.setDiff(null);
    this.app.view.fit();
  }
}

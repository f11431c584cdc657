// Optimize: runs the default pipeline in the worker, shows its report, and
// switches the graph shown between before and after.
import { $, escapeXml } from '../format.mjs';

export class OptimizePanel {
  constructor(app) {
    this.app = app;
    $('optimize').onclick = () => this.optimize();
    $('show-before').onclick = () => this.showing('before');
    $('show-after').onclick = () => this.showing('after');
  }

  // A model was opened: nothing optimized yet.
  reset() {
    $('view-toggle').hidden = true;
    $('tab-report').innerHTML = '<p class="muted">Press <b>Optimize</b> to run the default pipeline.</p>';
  }

  async optimize() {
    const { app } = this;
    const state = app.state;
    if (!state.current) return;
    try {
      app.clearError();
      app.status('Optimizing…');
      const r = await app.worker.call('optimize');
      state.report = r.report;
      state.after = r;
      $('view-toggle').hidden = false;
      await this.showing('after');
      this.showReport(r.report);
      app.selectTab('report');
      app.status(`Optimized: ${r.report.nodes_before} → ${r.report.nodes_after} nodes in ${r.report.sweeps} sweeps.`);
    } catch (e) {
      app.error(`${e.code ?? 'error'}: ${e.message}`);
    }
  }

  async showing(which) {
    const state = this.app.state;
    const described = which === 'before' ? state.before : state.after;
    if (!described) return;
    state.showing = which;
    $('show-before').classList.toggle('on', which === 'before');
    $('show-after').classList.toggle('on', which === 'after');
    await this.app.show(described);
  }

  showReport(r) {
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
}

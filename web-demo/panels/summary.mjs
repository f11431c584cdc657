// The Model panel: counts, cost, inputs, tree specs, each output's activation, ops.
import { CATEGORIES } from '../graph_view.mjs';
import { $, activationPill, escapeXml, shapeStr, specStr } from '../format.mjs';
import { human, modelCost } from '../model_stats.mjs';

export class SummaryPanel {
  show(described, name) {
    const doc = described.document;
    const cost = modelCost(doc);
    const ops = {};
    for (const n of doc.graph.nodes) ops[n.op] = (ops[n.op] ?? 0) + 1;
    const values = doc.graph.values;
    const activation = described.activation;
    $('tab-summary').innerHTML = `
      <h2>${escapeXml(name)}</h2>
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
          <td>${activationPill(activation[i])}<br><span class="muted">${activation[i].node ? `by <code>${escapeXml(activation[i].node)}</code>` : ''}</span></td></tr>`).join('')}
      </table>
      <p class="muted">${activation.some((a) => a.kind === 'sigmoid') ? 'It already ends in a sigmoid: do not apply another.' : activation.every((a) => a.kind === 'none') ? 'It returns raw values (logits): apply the activation yourself if you need one.' : ''}</p>
      <h3>Ops</h3>
      <table class="kv">${Object.entries(ops).sort((a, b) => b[1] - a[1]).map(([op, n]) => `<tr><th><code>${escapeXml(op)}</code></th><td class="num">${n}</td></tr>`).join('')}</table>`;
    $('legend').innerHTML = CATEGORIES.map((c) => `<span><i style="background:${c.fill};border:1px solid ${c.stroke}"></i>${c.name}</span>`).join('');
  }
}

// The Model panel: counts, cost, inputs, tree specs, each output's
// activation, the top-level modules, ops. FLOPs are the core's (the module
// tree's root: node_flops summed), as every front end counts them.
import { $, activationPill, escapeXml, shapeStr, specStr } from '../format.mjs';
import { human, modelParameters } from '../model_stats.mjs';

// Per output and spatial axis of its input: the input sizes the network
// accepts, where output voxel i lies (offset + stride * i, in input voxels)
// and the context cut before it; none where no input is spatial.
function geometryTable(geometry) {
  if (!geometry.length) return '';
  const row = (o, a) => `<tr><th><code>${escapeXml(o.output)}</code> from <code>${escapeXml(o.input)}</code>, dim ${a.dim}</th><td>${a.unknown
    ? `<span class="muted">unknown: ${escapeXml(a.unknown)}</span>`
    : `sizes ${escapeXml(a.valid)}, offset ${escapeXml(a.offset)}, stride ${escapeXml(a.stride)}`}</td></tr>`;
  return `<h3 title="what a blockwise run needs: the input sizes the network takes, and where each output voxel lies in the input">Geometry (per spatial axis)</h3>
      <table class="kv" id="summary-geometry">${geometry.flatMap((o) => o.axes.map((a) => row(o, a))).join('')}</table>`;
}

export class SummaryPanel {
  show(described, name) {
    const doc = described.document;
    const params = modelParameters(doc);
    const groups = described.moduleTree?.groups ?? [];
    const flops = groups[0]?.flops;
    const counted = (described.flops ?? []).some((f) => f !== null);  // some node's FLOPs are known
    const top = (groups[0]?.children ?? []).map((i) => groups[i]);
    const repeat = (g) => (g.repeatOf !== null ? `same as <code>${escapeXml(groups[g.repeatOf].path)}</code>` : g.repeats > 1 ? `first of ${g.repeats}` : '');
    const ops = {};
    for (const n of doc.graph.nodes) ops[n.op] = (ops[n.op] ?? 0) + 1;
    const values = doc.graph.values;
    const activation = described.activation;
    $('tab-summary').innerHTML = `
      <h2>${escapeXml(name)}</h2>
      <table class="kv">
        <tr><th>nodes</th><td class="num" id="summary-nodes">${doc.graph.nodes.length}</td></tr>
        <tr><th title="every constant: weights, biases, and buffers such as a batch norm's running statistics">parameters</th><td class="num">${params.toLocaleString('en-US')} (${human(params * 4, 'B')})</td></tr>
        <tr><th title="convolutions, linear layers and matrix products, two per multiply-add (the core's node_flops)">FLOPs</th><td class="num" id="summary-flops">${flops === undefined || (!flops && !counted) ? '<span class="muted" title="no node it counts has known shapes (a TorchScript file gives none inside its graph)">not known</span>' : human(flops, 'FLOP')}</td></tr>
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
      ${geometryTable(described.geometry ?? [])}
      ${top.length ? `<h3>Modules</h3>
      <table class="kv" id="summary-modules"><tr><th>module</th><th class="num">nodes</th><th class="num">FLOPs</th><th class="num">params</th></tr>
        ${top.map((g) => `<tr data-path="${escapeXml(g.path)}"><td><code>${escapeXml(g.path)}</code> <span class="muted">${escapeXml(g.type)}</span>${repeat(g) ? `<br><span class="muted">${repeat(g)}</span>` : ''}</td>
          <td class="num">${g.nodeCount}</td><td class="num">${counted ? human(g.flops, 'FLOP') : '—'}</td><td class="num">${human(g.parameters)}</td></tr>`).join('')}
      </table>` : ''}
      <h3>Ops</h3>
      <table class="kv">${Object.entries(ops).sort((a, b) => b[1] - a[1]).map(([op, n]) => `<tr><th><code>${escapeXml(op)}</code></th><td class="num">${n}</td></tr>`).join('')}</table>`;
  }
}

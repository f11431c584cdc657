// The Node panel: a graph input or output, a module (its path, class, node
// count, FLOPs, parameters, what it repeats), or a node's op, cost, module,
// values, attributes and weights (with their statistics).
import { $, escapeXml, fmt, shapeStr } from '../format.mjs';
import { human, nodeParameters } from '../model_stats.mjs';

export class NodePanel {
  // `errors`: each node's error against a reference run (panels/numerics.mjs), when there is one.
  show(meta, described, hierarchy, errors = null) {
    const doc = described.document;
    const values = doc.graph.values;
    const valueRow = (vid) => {
      const v = values[vid];
      return `<tr><th><code>${escapeXml(v.name)}</code></th><td>${v.dtype ?? '?'} ${shapeStr(v.shape)}${v.constant ? ' <span class="pill">weight</span>' : ''}</td></tr>`;
    };
    if (meta.kind === 'group' || meta.kind === 'frame') {
      const g = hierarchy.groups[meta.group];
      const rep = hierarchy.repeatText(meta.group);
      $('tab-node').innerHTML = `<h2 id="node-title">Module <code>${escapeXml(g.path)}</code></h2>
        <table class="kv">
          <tr><th>class</th><td><code id="module-type">${escapeXml(g.type)}</code></td></tr>
          <tr><th>nodes</th><td class="num" id="module-nodes">${g.nodeCount.toLocaleString('en-US')}</td></tr>
          <tr><th>FLOPs</th><td class="num">${human(g.flops, 'FLOP')}</td></tr>
          <tr><th>parameters</th><td class="num">${(g.parameters ?? 0).toLocaleString('en-US')}</td></tr>
          ${rep ? `<tr><th>repeats</th><td id="module-repeats">${escapeXml(rep)}</td></tr>` : ''}
          <tr><th>submodules</th><td>${g.children.map((c) => `<code>${escapeXml(hierarchy.label(c))}</code>`).join(', ') || '<span class="muted">none</span>'}</td></tr>
        </table>
        <p class="muted">${hierarchy.open.has(meta.group) ? 'Open: click its frame\'s title to fold it.' : 'Folded: click it to unfold.'}</p>`;
      return;
    }
    if (!meta.node) {
      $('tab-node').innerHTML = `<h2>${meta.kind === 'input' ? 'Graph input' : 'Graph output'}</h2><table class="kv">${valueRow(meta.value)}</table>`;
      return;
    }
    const n = meta.node;
    const params = nodeParameters(doc, n);
    const attrs = Object.entries(n.attributes).filter(([k]) => k !== 'arg_names');
    const argNames = n.attributes.arg_names?.value ?? [];
    const weights = n.inputs.map((vid, i) => [vid, argNames[i]]).filter(([vid]) => values[vid].constant);
    const weightTable = ([vid, arg]) => {
      const v = values[vid];
      const s = described.weightStats[v.name];
      return `<table class="kv"><tr><th>${escapeXml(arg ?? 'weight')}</th><td><code>${escapeXml(v.name)}</code></td></tr>
        <tr><th>shape, dtype</th><td>${shapeStr(v.shape)} ${v.dtype}</td></tr>
        ${s ? `<tr><th>count</th><td class="num">${s.count.toLocaleString('en-US')}</td></tr>
        <tr><th>min / max</th><td class="num">${fmt(s.min)} / ${fmt(s.max)}</td></tr>
        <tr><th>mean</th><td class="num">${fmt(s.mean)}</td></tr>` : ''}</table>`;
    };
    $('tab-node').innerHTML = `
      <h2 id="node-title"><code>${escapeXml(n.name)}</code></h2>
      <table class="kv">
        <tr><th>op</th><td><code id="node-op">${escapeXml(n.op)}</code></td></tr>
        <tr><th>canonical op</th><td><code>${escapeXml(meta.canonical ?? '—')}</code></td></tr>
        <tr><th>FLOPs</th><td class="num">${meta.flops === null || meta.flops === undefined ? '<span class="muted">not counted</span>' : human(meta.flops, 'FLOP')}</td></tr>
        <tr><th>parameters</th><td class="num">${params.toLocaleString('en-US')}</td></tr>
        ${errors?.has(n.name) ? `<tr><th>vs reference</th><td class="num" id="node-error">max abs. ${errors.get(n.name).abs.toExponential(2)}, rel. ${errors.get(n.name).rel.toExponential(2)}</td></tr>` : ''}
        <tr><th>module</th><td><code id="node-module">${escapeXml(hierarchy?.groups[hierarchy.groupOf.get(n.id)]?.path || '—')}</code></td></tr>
      </table>
      <h3>Inputs</h3><table class="kv">${n.inputs.filter((vid) => !values[vid].constant).map(valueRow).join('') || '<tr><td class="muted">none</td></tr>'}</table>
      <h3>Outputs</h3><table class="kv" id="node-outputs">${n.outputs.map(valueRow).join('')}</table>
      <h3>Attributes</h3><table class="kv">${attrs.map(([k, a]) => `<tr><th>${escapeXml(k)}</th><td><code>${escapeXml(JSON.stringify(a.value))}</code></td></tr>`).join('') || '<tr><td class="muted">none</td></tr>'}</table>
      <h3>Weights</h3>${weights.length ? weights.map(weightTable).join('') : '<p class="muted">none</p>'}`;
  }
}

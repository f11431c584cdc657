// How the panels write values: shapes, numbers, activations, tree specs.
import { escapeXml } from './graph_view.mjs';

export { escapeXml };
export const $ = (id) => document.getElementById(id);
export const shapeStr = (s) => (s ? `[${s.join(', ')}]` : '?');
export const fmt = (x) => (x === null || x === undefined ? '—' : Math.abs(x) >= 1e4 || (Math.abs(x) < 1e-3 && x !== 0) ? x.toExponential(3) : x.toFixed(4));

function activationKindStr(a) {
  if (a.kind === 'clip') return `clip(${a.min ?? '-∞'}, ${a.max ?? '∞'})`;
  if (a.kind === 'softmax' || a.kind === 'log_softmax') return `${a.kind}(dim=${a.dim})`;
  if (a.kind === 'per_channel') return `per channel: ${(a.channels ?? []).map((c) => `[${c.begin}, ${c.end}) ${c.kind}`).join(', ')}`;
  return a.kind;
}
// "sigmoid, then upsample_bilinear2d": the range-keeping ops after it too.
const activationStr = (a) => [activationKindStr(a), ...(a.after ?? [])].join(', then ');
export const activationPill = (a) => `<span class="pill ${a.kind === 'none' ? 'warn' : a.kind === 'unknown' ? '' : 'good'}">${escapeXml(activationStr(a))}</span>`;

export function specStr(spec) {
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

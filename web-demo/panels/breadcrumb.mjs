// The breadcrumb over the graph: where the selection sits in the module
// hierarchy (model › blocks › blocks.3 › attn), each step a link that
// centres the graph on that module.
import { $, escapeXml } from '../format.mjs';

export class Breadcrumb {
  constructor(onGroup) {
    $('breadcrumb').addEventListener('click', (e) => {
      const step = e.target.closest('[data-group]');
      if (step) onGroup(Number(step.dataset.group));
    });
  }

  // `chain`: group indexes below the root; `hierarchy`: the view's; `name`: the model's.
  show(chain, hierarchy, name) {
    const el = $('breadcrumb');
    if (!hierarchy) { el.hidden = true; return; }
    el.hidden = false;
    const steps = [`<a data-group="0">${escapeXml(name || 'model')}</a>`,
      ...chain.map((g) => `<a data-group="${g}" title="${escapeXml(`${hierarchy.groups[g].path} (${hierarchy.groups[g].type})`)}">${escapeXml(hierarchy.label(g))}</a>`)];
    el.innerHTML = steps.join('<span class="sep">›</span>');
  }
}

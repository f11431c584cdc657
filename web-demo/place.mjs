// A place in a model as a link: the URL's hash names the file (a sample the
// page serves, or a file of the user's by its name), the unfolded groups (by
// module path; "*" for all) and the selection (a node by name, a module by
// path): #sample=unet2d&open=layer1,layer2.0&sel=n:conv2d_3. Opening the
// link opens a sample directly; a user's file the page asks for by name,
// then goes to the place.

export function placeHash({ sample, file, hierarchy, selected, nodeName }) {
  const parts = [sample ? `sample=${encodeURIComponent(sample)}` : `file=${encodeURIComponent(file)}`];
  if (hierarchy) {
    const open = hierarchy.groups.filter((g) => g.parent !== null && hierarchy.open.has(g.index));
    parts.push(`open=${open.length === hierarchy.groups.length - 1 ? '*' : open.map((g) => encodeURIComponent(g.path)).join(',')}`);
  }
  if (selected?.startsWith('n:') && nodeName) parts.push(`sel=n:${encodeURIComponent(nodeName)}`);
  else if (selected && /^[gc]:/.test(selected) && hierarchy) parts.push(`sel=g:${encodeURIComponent(hierarchy.groups[Number(selected.slice(2))].path)}`);
  return `#${parts.join('&')}`;
}

// { sample, file, open: [paths] | '*' | null, sel: { node } | { group } | null }, or null for no place.
export function parsePlace(hash) {
  const q = new URLSearchParams(hash.replace(/^#/, ''));
  if (!q.has('sample') && !q.has('file')) return null;
  const open = q.get('open');
  const sel = q.get('sel');
  return {
    sample: q.get('sample'),
    file: q.get('file'),
    open: open === null ? null : open === '*' ? '*' : open.split(',').filter(Boolean).map(decodeURIComponent),
    sel: sel?.startsWith('n:') ? { node: sel.slice(2) } : sel?.startsWith('g:') ? { group: sel.slice(2) } : null,
  };
}

// Unfolds the groups the place names (folding the others), lays out and selects.
export async function restorePlace(view, place) {
  const h = view.hierarchy;
  if (place.open) {
    const byPath = new Map(h.groups.map((g) => [g.path, g.index]));
    h.open = new Set([0, ...(place.open === '*' ? h.groups.map((g) => g.index) : place.open.map((p) => byPath.get(p)).filter((i) => i !== undefined))]);
    await view.relayout();
  }
  if (place.sel?.node) {
    const n = view.model.doc.graph.nodes.find((x) => x.name === place.sel.node);
    if (n) view.select(view.keyOf(n.id), { center: true });
  } else if (place.sel?.group !== undefined) {
    const g = h.groups.find((x) => x.path === place.sel.group);
    if (g) view.select(view.boxes.has(`g:${g.index}`) ? `g:${g.index}` : `c:${g.index}`, { center: true });
  }
}

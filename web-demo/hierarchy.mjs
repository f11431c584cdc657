// The module hierarchy as the page folds it: the core's module tree
// (moduleTree(): each module with its node count, parameters, FLOPs and
// repeats), which of its groups are open, and what is drawn at that folding:
// a closed group is one box in place of every node under it, an open one a
// frame around what it holds. Models of more than FOLD_ABOVE nodes open
// folded to their top-level modules, so that only a few boxes are laid out;
// a group's contents are laid out when it is opened.

export const FOLD_ABOVE = 300;

export class Hierarchy {
  // `tree`: moduleTree()'s { groups } (their `nodes` lists not needed);
  // without one (a file with no module paths) the root holds every node.
  constructor(doc, tree) {
    const nodes = doc.graph.nodes;
    this.groups = tree?.groups?.length ? tree.groups : [{ index: 0, path: '', type: '', parent: null, children: [],
      nodeCount: nodes.length, parameters: null, flops: null, repeatOf: null, repeats: 1 }];
    // A node's group is its innermost module's (the document's modules table, by path); the root's where it has none.
    const byPath = new Map(this.groups.map((g) => [g.path, g.index]));
    const modules = doc.graph.modules ?? [];
    const groupOfModule = modules.map((m) => byPath.get(m.path) ?? 0);
    this.groupOf = new Map();  // node id -> the index of its innermost group
    for (const n of nodes) this.groupOf.set(n.id, n.module === undefined || n.module === null ? 0 : groupOfModule[n.module] ?? 0);
    this.open = new Set([0]);
    if (nodes.length <= FOLD_ABOVE) {
      for (const g of this.groups) this.open.add(g.index);
    } else {
      // A model wrapped in one module (model.backbone...) opens down to where it branches.
      let g = this.groups[0];
      while (g.children.length === 1 && g.nodes.length === 0) {
        g = this.groups[g.children[0]];
        this.open.add(g.index);
      }
    }
  }

  get folded() { return this.groups.some((g) => !this.open.has(g.index)); }

  // [root, ..., g]: the groups from the outermost to `g`.
  chain(g) {
    const out = [];
    for (let i = g; i !== null && i !== undefined; i = this.groups[i].parent) out.push(i);
    return out.reverse();
  }

  // The closed group that stands for `g` (its outermost closed ancestor or
  // itself), or null when `g` and every group above it are open.
  closedOwner(g) {
    for (const i of this.chain(g)) if (!this.open.has(i)) return i;
    return null;
  }

  // The key a node is drawn as: its own ("n:ID"), or a closed group's ("g:INDEX").
  keyOfNode(id) {
    const owner = this.closedOwner(this.groupOf.get(id));
    return owner === null ? `n:${id}` : `g:${owner}`;
  }

  // Opens every group around node `id`; returns whether anything opened.
  reveal(id) {
    let changed = false;
    for (const i of this.chain(this.groupOf.get(id))) if (!this.open.has(i)) { this.open.add(i); changed = true; }
    return changed;
  }

  // Closes group `g` and every group below it (opening it again shows its children closed).
  close(g) {
    const walk = (i) => { this.open.delete(i); for (const c of this.groups[i].children) walk(c); };
    if (g !== 0) walk(g);
  }

  // A group's name as its frame says it: relative to its parent
  // ("attn" in "blocks.0"), with the parent's last part before a bare index
  // ("blocks.3", not "3").
  label(g) {
    const { path, parent } = this.groups[g];
    if (parent === null) return '';
    const above = this.groups[parent].path;
    const rel = above && path.startsWith(`${above}.`) ? path.slice(above.length + 1) : path;
    return /^\d+$/.test(rel) ? `${above.split('.').pop()}.${rel}` : rel;
  }

  // What repeats: "24 × Block" on a group whose children are 24 alike,
  // "first of 24 alike" on the first of them, "same as blocks.0" on the
  // others ("20 × Cell · first of 20 alike": both).
  repeatText(g) {
    const group = this.groups[g];
    const parts = [];
    const firsts = group.children.map((c) => this.groups[c]).filter((c) => c.repeats > 1);
    if (firsts.length) {
      const most = firsts.reduce((a, b) => (b.repeats > a.repeats ? b : a));
      parts.push(`${most.repeats} × ${most.type}`);
    }
    if (group.repeatOf !== null && group.repeatOf !== undefined) parts.push(`same as ${this.label(group.repeatOf)}`);
    else if (group.repeats > 1) parts.push(`first of ${group.repeats} alike`);
    return parts.join(' · ');
  }
}

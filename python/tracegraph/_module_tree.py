"""module_tree: a graph's nodes grouped by the module whose forward made them."""
from __future__ import annotations

import dataclasses
from typing import Any

from ._geometry import _model_of


@dataclasses.dataclass(frozen=True)
class ModuleGroup:
    """One module of the tree, as a viewer folds it: its ``path``
    ("encoder.blocks.0"; "" for the root) and class ``type`` ("Block"),
    ``parent`` and ``children`` (indexes into ``ModuleTree.groups``; parent
    None for the root, children in the order of their first node), ``nodes``
    (the names of the nodes whose innermost module it is), and for it and
    every group below: ``node_count``, ``parameters`` (elements of the
    constants read, each counted once) and ``flops``. ``signature`` hashes
    the computation; ``repeat_of`` is the first earlier sibling it repeats
    (None: none), and ``repeats``, on a group that repeats none, how many
    siblings share its signature, itself included (1 otherwise)."""
    index: int
    path: str
    type: str
    parent: int | None
    children: list
    nodes: list
    node_count: int
    parameters: int
    flops: float
    signature: int
    repeat_of: int | None
    repeats: int


class ModuleTree:
    """The module tree of a graph (the core's ``module_tree``): ``groups``,
    ``groups[0]`` the root (the whole graph); ``tree["encoder.blocks.0"]``
    finds a group by its path; ``json()`` is the core's JSON form."""

    def __init__(self, groups: list[ModuleGroup], model):
        self.groups = groups
        self._model = model
        self._by_path = {g.path: g for g in groups}

    @property
    def root(self) -> ModuleGroup:
        return self.groups[0]

    def children(self, group: ModuleGroup) -> list[ModuleGroup]:
        return [self.groups[i] for i in group.children]

    def __getitem__(self, path: str) -> ModuleGroup:
        return self._by_path[path]

    def __contains__(self, path: str) -> bool:
        return path in self._by_path

    def __len__(self) -> int:
        return len(self.groups)

    def json(self, indent: int = -1) -> str:
        return self._model.module_tree_json(indent)

    def __repr__(self) -> str:
        return f"<tracegraph.ModuleTree: {len(self.groups)} groups, {self.root.node_count} nodes>"


def module_tree(model: Any) -> ModuleTree:
    """The module hierarchy of a TracedGraph (or a model file's path or
    bytes): its nodes grouped by the module whose forward made them, with node
    counts, parameters, FLOPs and repeats (24 identical blocks: the first, and
    23 that repeat it). A graph whose file names no modules is one group, the root."""
    m = _model_of(model, "module_tree")
    return ModuleTree([ModuleGroup(index=i, **g) for i, g in enumerate(m.module_tree())], m)

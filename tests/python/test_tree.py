"""TreeSpec: torch's pytree JSON read by the core, flatten and unflatten, torch's own spec back."""
from __future__ import annotations

import pytest

import tracegraph
from conftest import needs_torch


@needs_torch
def test_specs_travel_both_ways_with_torch():
    from torch.utils import _pytree
    value = ((1, [2, None]), {"b": 3, "a": (4,)})
    _, spec = _pytree.tree_flatten(value)
    ours = tracegraph.TreeSpec.from_json(_pytree.treespec_dumps(spec))
    leaves = _pytree.tree_leaves(value)  # torch 2.x: None is a leaf
    assert ours.num_leaves == len(leaves)
    assert ours.flatten(value) == leaves
    assert ours.unflatten(leaves) == value
    assert ours.to_pytree() == spec
    assert str(ours) == "((*, [*, *]), {'b': *, 'a': (*,)})"


def test_a_mismatch_names_where():
    spec = tracegraph.TreeSpec.from_json(
        '[1, {"type": "builtins.tuple", "context": "null", "children_spec": ['
        '{"type": null, "context": null, "children_spec": []},'
        '{"type": "builtins.dict", "context": "[\\"x\\"]", "children_spec": [{"type": null, "context": null, "children_spec": []}]}]}]')
    assert spec.flatten((1, {"x": 2})) == [1, 2]
    with pytest.raises(tracegraph.TreeSpecMismatchError, match=r"\[1\]: expected the keys \['x'\], missing \['x'\]"):
        spec.flatten((1, {"y": 2}))
    with pytest.raises(tracegraph.TreeSpecMismatchError, match="expected a tuple of 2, got 3"):
        spec.flatten((1, 2, 3))

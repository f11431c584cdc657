"""Tree specs: the structure of a traced model's inputs and outputs (PyTorch's pytrees)."""
from __future__ import annotations

from typing import Any, Sequence

from . import _core


class TreeSpec:
    """The structure of a nested value with its leaves taken out: a leaf, None,
    a tuple, a list, a dict (keys in order) or a named tuple; PyTorch's
    ``TreeSpec``, read from and written as ``treespec_dumps``'s JSON.

    ``flatten(value)`` takes a value of this structure apart into its leaves
    (depth first, as ``torch.utils._pytree.tree_flatten``), ``unflatten(leaves)``
    puts them back; ``to_pytree()`` gives torch's own TreeSpec (needs torch).
    """

    __slots__ = ("kind", "keys", "type_name", "children", "_json")

    def __init__(self, kind: str, keys: Sequence[str] = (), type_name: str = "",
                 children: Sequence["TreeSpec"] = (), json: str | None = None):
        self.kind = kind  # "leaf", "None", "tuple", "list", "dict", "named tuple"
        self.keys = list(keys)
        self.type_name = type_name
        self.children = list(children)
        self._json = json

    @classmethod
    def from_json(cls, text: str) -> "TreeSpec":
        """A spec from ``torch.utils._pytree.treespec_dumps``'s JSON (ParseError, SchemaError otherwise)."""
        def build(d):
            return cls(d["kind"], d["keys"], d["type_name"], [build(c) for c in d["children"]])
        spec = build(_core.tree_spec_tree(text))
        spec._json = text
        return spec

    def to_json(self) -> str:
        """``treespec_dumps``'s JSON (protocol 1)."""
        if self._json is None:
            raise ValueError("this TreeSpec was not read from JSON")
        return self._json

    def to_pytree(self):
        """torch's ``TreeSpec`` for the same structure (``treespec_loads``)."""
        from torch.utils import _pytree
        return _pytree.treespec_loads(self.to_json())

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def flatten(self, value: Any, path: str = "") -> list:
        """The leaves of ``value``, which must have this structure; a value
        that does not is a TreeSpecMismatchError naming where (``[0]['x']``)."""
        leaves: list = []
        self._flatten(value, path, leaves)
        return leaves

    def _flatten(self, value, path, leaves):
        mismatch = _core.TreeSpecMismatchError
        where = path or "the value"
        if self.kind == "leaf":
            leaves.append(value)
        elif self.kind == "None":
            if value is not None:
                raise mismatch(f"{where}: expected None, got {type(value).__name__}")
        elif self.kind == "dict":
            if not isinstance(value, dict):
                raise mismatch(f"{where}: expected a dict, got {type(value).__name__}")
            if set(value) != set(self.keys):
                missing = [k for k in self.keys if k not in value]
                extra = [k for k in value if k not in self.keys]
                raise mismatch(f"{where}: expected the keys {self.keys}"
                               + (f", missing {missing}" if missing else "") + (f", unexpected {extra}" if extra else ""))
            for k, c in zip(self.keys, self.children):
                c._flatten(value[k], f"{path}[{k!r}]", leaves)
        else:
            kinds = {"tuple": tuple, "list": list, "named tuple": tuple}
            if not isinstance(value, kinds[self.kind]) and not (self.kind != "named tuple" and isinstance(value, (tuple, list))):
                raise mismatch(f"{where}: expected a {self.kind}, got {type(value).__name__}")
            if len(value) != len(self.children):
                raise mismatch(f"{where}: expected a {self.kind} of {len(self.children)}, got {len(value)}")
            for i, (v, c) in enumerate(zip(value, self.children)):
                c._flatten(v, f"{path}[{i}]", leaves)

    def unflatten(self, leaves: Sequence[Any]) -> Any:
        """The value of this structure whose leaves are ``leaves``, in order."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise _core.TreeSpecMismatchError(f"this structure has {self.num_leaves} leaves, given {len(leaves)}")
        it = iter(leaves)
        return self._unflatten(it)

    def _unflatten(self, it):
        if self.kind == "leaf":
            return next(it)
        if self.kind == "None":
            return None
        values = [c._unflatten(it) for c in self.children]
        if self.kind == "dict":
            return dict(zip(self.keys, values))
        if self.kind == "list":
            return values
        if self.kind == "named tuple":
            import collections
            name = self.type_name.rpartition(".")[2] or "NamedTuple"
            fields = self.keys or [f"_{i}" for i in range(len(values))]
            return collections.namedtuple(name, fields)(*values)
        return tuple(values)

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.kind, self.keys, self.type_name, self.children) == (other.kind, other.keys, other.type_name, other.children)

    def __str__(self) -> str:
        if self._json is not None:
            return _core.tree_spec_str(self._json)
        return f"TreeSpec({self.kind})"

    def __repr__(self) -> str:
        return f"TreeSpec({self})"

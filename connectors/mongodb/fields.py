"""``field.exclude.list`` and ``field.renames``: fields left out of or renamed in change events, as Debezium's
``FieldSelector`` does.

A rule is ``<db>.<collection>.<field>[.<nested>...]`` (``*`` matches any database or collection), with
``:<newName>`` for a rename. Rules apply to ``before``/``after`` (nested documents, and documents inside arrays),
to ``updatedFields`` (dot-notation keys such as ``address.city`` or ``items.0.name``, and documents set whole),
to ``removedFields`` and to ``truncatedArrays[].field``; never to the key. Array indexes in dotted paths are
skipped when matching. Renaming onto a name the document already has is an error, as in Debezium.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from connect.api.errors import DataError
from connectors.mongodb.streaming.raw_events import plain

_DROP = object()


@dataclass
class _Node:
    """One path segment: what happens to a field at this path (drop, rename) and the rules below it."""

    exclude: bool = False
    rename: str | None = None
    children: dict[str, _Node] = field(default_factory=dict)


class CollectionFields:
    """The rules of one collection, applied to its change events."""

    def __init__(self, rules: Sequence[tuple[tuple[str, ...], str | None]]) -> None:
        self._root = _Node()
        for path, new_name in rules:
            node = self._root
            for segment in path:
                node = node.children.setdefault(segment, _Node())
            if new_name is None:
                node.exclude = True
            else:
                node.rename = new_name

    def document(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        """``doc`` with the rules applied (a new document; ``doc`` is unchanged)."""
        return _apply_document(doc, self._root)

    def image(self, doc: Mapping[str, Any] | bytes) -> dict[str, Any]:
        """A document image, raw or decoded (a snapshot's read), with the rules applied."""
        return self.document(plain(doc))

    def event(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """A change event with the rules applied to its images and update description."""
        out = dict(event)
        for key in ("fullDocument", "fullDocumentBeforeChange"):
            value = out.get(key)
            if isinstance(value, Mapping):
                out[key] = self.document(plain(value))  # a raw image is decoded to apply the rules
        description = out.get("updateDescription")
        if isinstance(description, Mapping):
            out["updateDescription"] = self._description(description)
        return out

    def _description(self, description: Mapping[str, Any]) -> dict[str, Any]:
        result = dict(description)
        updated = description.get("updatedFields")
        if isinstance(updated, Mapping):
            fields: dict[str, Any] = {}
            for key, value in updated.items():
                new_key, new_value = self._dotted(key, value)
                if new_key is not None:
                    if new_key in fields and new_key != key:
                        raise DataError(f"Document already contains field : {new_key}")
                    fields[new_key] = new_value
            result["updatedFields"] = fields
        removed = description.get("removedFields")
        if removed is not None:
            result["removedFields"] = [k for k in (self._dotted(name, None)[0] for name in removed) if k is not None]
        truncated = description.get("truncatedArrays")
        if truncated is not None:
            kept = []
            for item in truncated:
                new_key = self._dotted(item["field"], None)[0]
                if new_key is not None:
                    kept.append({**item, "field": new_key})
            result["truncatedArrays"] = kept
        return result

    def _dotted(self, key: str, value: Any) -> tuple[str | None, Any]:
        """A dot-notation key and its value after the rules (key None: the field is excluded)."""
        node = self._root
        segments = key.split(".")
        for index, segment in enumerate(segments):
            if segment.isdigit() and index > 0:
                continue
            child = node.children.get(segment)
            if child is None:
                return key, value
            if child.exclude:
                return None, None
            if child.rename is not None:
                segments[index] = child.rename
            node = child
        return ".".join(segments), _apply_value(value, node) if node.children else value


def _apply_value(value: Any, node: _Node) -> Any:
    if isinstance(value, Mapping):
        return _apply_document(value, node)
    if isinstance(value, list):
        return [_apply_value(item, node) for item in value]
    return value


def _apply_document(doc: Mapping[str, Any], node: _Node) -> dict[str, Any]:
    """The document with the node's rules applied; a renamed field moves to the end of its document, as
    Debezium's renamer removes it and appends it under the new name."""
    out: dict[str, Any] = {}
    renamed: list[tuple[str, Any]] = []
    for name, value in doc.items():
        child = node.children.get(name)
        if child is None:
            out[name] = value
            continue
        if child.exclude:
            continue
        new_value = _apply_value(value, child) if child.children else value
        if child.rename is not None:
            if child.rename in doc and child.rename not in node.children:
                raise DataError(f"Document already contains field : {child.rename}")
            renamed.append((child.rename, new_value))
        else:
            out[name] = new_value
    for new_name, new_value in renamed:
        if new_name in out:
            raise DataError(f"Document already contains field : {new_name}")
        out[new_name] = new_value
    return out


def _split_rule(rule: str) -> tuple[str, str, tuple[str, ...]]:
    db, coll, *path = rule.split(".")
    return db, coll, tuple(path)


class FieldSelector:
    """Every rule of the connector; :meth:`for_collection` gives one collection's (cached), or None."""

    def __init__(self, excludes: Sequence[str], renames: Sequence[tuple[str, str]]) -> None:
        self._rules: list[tuple[str, str, tuple[str, ...], str | None]] = []
        for rule in excludes:
            self._rules.append((*_split_rule(rule), None))
        for rule, new_name in renames:
            self._rules.append((*_split_rule(rule), new_name))
        self._known: dict[tuple[str, str], CollectionFields | None] = {}

    @property
    def active(self) -> bool:
        """Whether any rule exists."""
        return bool(self._rules)

    def for_collection(self, db: str, coll: str) -> CollectionFields | None:
        """The rules of ``db.coll`` or None when none applies."""
        key = (db, coll)
        if key not in self._known:
            rules = [(path, new) for r_db, r_coll, path, new in self._rules
                     if r_db in ("*", db) and r_coll in ("*", coll)]
            if len(self._known) > 10_000:
                self._known.clear()
            self._known[key] = CollectionFields(rules) if rules else None
        return self._known[key]

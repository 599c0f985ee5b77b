"""A LangGraph store backed by kenning: ``StateGraph(...).compile(store=KenningStore(mem))``.

**Namespaces and scopes.** A LangGraph namespace is a tuple of labels. When its
first label is a kenning scope (``user:alice``, ``team:platform``, ``org:acme``,
``persona:helpdesk``, ``persona_user:helpdesk/alice``) the item lives in that
scope and the remaining labels are its *path*; otherwise it lives in the store's
own scope (the bound principal's personal scope unless ``scope=`` says
otherwise) and the whole namespace is the path. An item is one kenning memory:

* ``scope``: as above; reading and writing it obey kenning's access rules, so a
  store bound to one user never sees another user's personal items;
* ``key``: ``langgraph:["label", ..., "key"]`` (or a hash of it when longer
  than the key limit), so a put is an upsert of that key in that scope;
* ``tags``: ``langgraph`` and the path's labels (filters narrow by them);
* ``metadata``: the item's value, field for field (a ``filter`` on a value
  field is a kenning metadata filter), plus ``_langgraph``: the path, the key
  and whether the item is indexed; it is the source of truth, so the mapping
  is reversible (``list_namespaces``);
* ``content``: what a ``query`` searches: the value's text at the store's
  ``text_fields`` (or the put's ``index``), else the value as JSON;
* ``created_at`` / ``updated_at``: the item's times.

A namespace is shown as its path when the item is in the store's own scope,
and as ``(scope, *path)`` otherwise (or when the request named the scope), so
every namespace the store returns reads back the same item.

``search(query=...)`` is a kenning recall (hybrid, ranked, calibrated
``score``); without a query, items come newest first. Values are JSON objects of
at most 16 KiB; the key ``_langgraph`` is reserved. TTLs are not supported.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..aio import AsyncMemory
from ..engine import Memory
from ..errors import Conflict, InvalidInput
from ..models import MemoryRecord, Principal, Scope, Status
from ._extra import MissingExtra

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        get_text_at_path,
        tokenize_path,
        validate_op_namespace,
    )
except ImportError as exc:  # pragma: no cover - exercised by a test that hides langgraph
    raise MissingExtra("langgraph", "kenning's LangGraph store") from exc

__all__ = ["KenningStore", "MARKER_TAG", "META_KEY"]

#: The tag every LangGraph item carries (with its path's labels).
MARKER_TAG = "langgraph"
#: The metadata key holding an item's path, key and index flag (reserved in values).
META_KEY = "_langgraph"
_KEY_PREFIX = "langgraph:"
_ALL_STATUSES = [s.value for s in Status]
_MAX_TAG = 64


@dataclass(frozen=True, slots=True)
class _Address:
    """Where an item lives: a scope, a path inside it, and whether it was named."""

    scope: Scope
    path: tuple[str, ...]
    explicit: bool


class KenningStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are kenning memories (module docstring).

    ``memory``: a :class:`~kenning.Memory` (or :class:`~kenning.AsyncMemory`);
    ``principal``: who the store acts for (the memory's own without one);
    ``scope``: where namespaces without a scope label live (default: the
    principal's personal scope); ``text_fields``: the value fields a query
    searches (LangGraph path syntax, e.g. ``["text", "notes[*]"]``; default: the
    whole value as JSON); ``agent_id``: recorded on every item it creates.
    """

    supports_ttl = False

    def __init__(
        self,
        memory: Memory | AsyncMemory,
        *,
        principal: Principal | None = None,
        scope: Scope | str | None = None,
        text_fields: Sequence[str] | None = None,
        agent_id: str | None = None,
    ) -> None:
        self.memory: Memory = memory.sync if isinstance(memory, AsyncMemory) else memory
        self.principal = principal
        who = self.memory.core.who(principal)
        #: Where namespaces that do not start with a scope label live.
        self.scope: Scope = self.memory.core.write_scope(scope, who)
        self.text_fields: tuple[str, ...] | None = tuple(text_fields) if text_fields else None
        self.agent_id = agent_id

    # -- the two methods LangGraph calls ------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; one result per op (puts return ``None``).

        Consecutive puts are written together: new items in one transaction.
        """
        ops = list(ops)
        results: list[Result] = []
        i = 0
        while i < len(ops):
            op = ops[i]
            validate_op_namespace(op)
            if isinstance(op, PutOp):
                run = [op]
                while i + len(run) < len(ops):
                    nxt = ops[i + len(run)]
                    if not isinstance(nxt, PutOp):
                        break
                    validate_op_namespace(nxt)
                    run.append(nxt)
                self._put_many(run)
                results.extend([None] * len(run))
                i += len(run)
                continue
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise ValueError(f"unknown operation type: {type(op).__name__}")
            i += 1
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (the event loop never blocks)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- addresses ----------------------------------------------------------------------

    def _address(self, namespace: Sequence[str]) -> _Address:
        named = _as_scope(namespace[0]) if namespace else None
        if named is not None:
            return _Address(named, tuple(namespace[1:]), True)
        return _Address(self.scope, tuple(namespace), False)

    def _shown(self, scope: Scope, path: tuple[str, ...], explicit: bool) -> tuple[str, ...]:
        """The namespace an item is shown under (it reads back the same item)."""
        if scope == self.scope and path and not explicit:
            return path
        return (scope.key, *path)

    def _find(self, address: _Address, key: str) -> MemoryRecord | None:
        page = self.memory.list(
            scopes=[address.scope],
            filters={"key": self._memory_key(address.path, key), "statuses": _ALL_STATUSES},
            limit=1,
            principal=self.principal,
        )
        return page.items[0] if page.items else None

    # -- get / put ----------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        address = self._address(op.namespace)
        record = self._find(address, str(op.key))
        if record is None or _meta(record) is None:
            return None
        return _item(record, tuple(op.namespace))

    def _put_many(self, ops: Sequence[PutOp]) -> None:
        last: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if not op.namespace:
                raise InvalidNamespaceError("Namespace cannot be empty.")
            if op.ttl is not None:
                raise NotImplementedError("TTL is not supported by KenningStore; set ttl=None")
            last[(tuple(op.namespace), str(op.key))] = op
        creates: list[dict[str, Any]] = []
        for (namespace, key), op in last.items():
            address = self._address(namespace)
            existing = self._find(address, key)
            if op.value is None:
                if existing is not None:
                    self.memory.forget(existing.id, principal=self.principal)
            elif existing is not None:
                fields = self._fields(address, key, op)
                self.memory.update(existing.id, principal=self.principal, **fields)
            else:
                creates.append(self._new(address, key, op))
        if not creates:
            return
        try:
            self.memory.write(creates, reconcile=False, principal=self.principal)
        except Conflict:
            # another writer created one of these keys meanwhile: put them one by one
            for op in last.values():
                if op.value is not None:
                    self._put_one(op)

    def _put_one(self, op: PutOp) -> None:
        address = self._address(op.namespace)
        key = str(op.key)
        for _ in range(3):
            existing = self._find(address, key)
            try:
                if existing is None:
                    new = self._new(address, key, op)
                    self.memory.write([new], reconcile=False, principal=self.principal)
                else:
                    fields = self._fields(address, key, op)
                    self.memory.update(existing.id, principal=self.principal, **fields)
                return
            except Conflict:
                continue
        raise Conflict(f"item {key!r} kept changing under concurrent writers; try again")

    def _new(self, address: _Address, key: str, op: PutOp) -> dict[str, Any]:
        """A new memory for a put: its scope, kenning key, provenance and fields."""
        return {
            "scope": address.scope,
            "key": self._memory_key(address.path, key),
            "source": "langgraph",
            "agent_id": self.agent_id,
            **self._fields(address, key, op),
        }

    def _fields(self, address: _Address, key: str, op: PutOp) -> dict[str, Any]:
        """The memory fields a put sets: content, tags, metadata."""
        assert op.value is not None
        value = dict(op.value)
        if META_KEY in value:
            raise InvalidInput(f"the value key {META_KEY!r} is reserved by kenning", field="value")
        indexed = op.index is not False
        fields = list(op.index) if isinstance(op.index, list) else self.text_fields
        max_tags = self.memory.settings.max_tags
        meta = {"path": list(address.path), "key": key, "indexed": indexed}
        return {
            "content": _content(value, fields if indexed else None),
            "tags": [MARKER_TAG, *_tag_labels(address.path, max_tags)],
            "metadata": {**value, META_KEY: meta},
        }

    def _memory_key(self, path: Sequence[str], key: str) -> str:
        """The kenning key of an item: readable when it fits, a digest otherwise."""
        text = json.dumps([*path, key], ensure_ascii=False, separators=(",", ":"))
        readable = _KEY_PREFIX + text
        if len(readable) <= self.memory.settings.max_key_chars and readable == " ".join(
            readable.split()
        ):
            return readable
        return "langgraph#" + hashlib.sha256(text.encode()).hexdigest()

    # -- search -------------------------------------------------------------------------

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        address = self._address(prefix) if prefix else None
        scopes: Any = [address.scope] if address is not None else "all"
        path = address.path if address is not None else ()
        flt: dict[str, Any] = {
            "tags_all": [MARKER_TAG, *_tag_labels(path, self.memory.settings.max_tags)],
            "statuses": _ALL_STATUSES,
            "metadata": _pushdown(op.filter or {}),
        }
        explicit = address.explicit if address is not None else False
        wanted = max(op.offset, 0) + max(op.limit, 0)
        if wanted == 0:
            return []

        def keep(record: MemoryRecord) -> bool:
            meta = _meta(record)
            if meta is None or tuple(meta["path"])[: len(path)] != path:
                return False
            if address is not None and record.scope != address.scope:
                return False
            return _matches(_value(record), op.filter or {})

        query = (op.query or "").strip()
        if query:
            found = self._ranked(query, scopes, flt, keep, wanted)
        else:
            found = [(r, None) for r in self._listed(scopes, flt, keep, wanted)]
        return [
            _search_item(r, self._shown(r.scope, tuple(_meta_of(r)["path"]), explicit), score)
            for r, score in found[op.offset : op.offset + op.limit]
        ]

    def _ranked(
        self, query: str, scopes: Any, flt: dict[str, Any], keep: Any, wanted: int
    ) -> list[tuple[MemoryRecord, float | None]]:
        """Recall's best hits that ``keep`` accepts (indexed items only), asking for
        more hits while the filter leaves too few."""
        max_k = self.memory.settings.max_k
        k = min(max_k, wanted)
        while True:
            hits = self.memory.recall(
                query, k, scopes=scopes, filters=flt, principal=self.principal
            )
            found = [
                (h.memory, h.score)
                for h in hits
                if keep(h.memory) and _meta_of(h.memory).get("indexed", True)
            ]
            if len(found) >= wanted or len(hits) < k or k >= max_k:
                return found
            k = min(max_k, k * 4)

    def _listed(
        self, scopes: Any, flt: dict[str, Any], keep: Any, wanted: int | None
    ) -> Iterator[MemoryRecord]:
        """Matching items newest first (all of them when ``wanted`` is None)."""
        out = 0
        for record in self._pages(scopes, flt):
            if keep(record):
                yield record
                out += 1
                if wanted is not None and out >= wanted:
                    return

    def _pages(self, scopes: Any, flt: dict[str, Any]) -> Iterator[MemoryRecord]:
        cursor: str | None = None
        limit = min(self.memory.settings.max_k, 200)
        while True:
            page = self.memory.list(
                scopes=scopes, filters=flt, limit=limit, cursor=cursor, principal=self.principal
            )
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    # -- list_namespaces ----------------------------------------------------------------

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = tuple(op.match_conditions or ())
        prefixes = [c.path for c in conditions if c.match_type == "prefix"]
        head = prefixes[0][0] if prefixes and prefixes[0] and prefixes[0][0] != "*" else None
        scopes: Any = "all"
        explicit = False
        path: tuple[str, ...] = ()
        if head is not None:
            address = self._address([head, *prefixes[0][1:]])
            scopes, explicit = [address.scope], address.explicit
            path = tuple(address.path)
        max_tags = self.memory.settings.max_tags
        labels = [p for p in path[: max_tags - 1] if p != "*"]
        flt = {"tags_all": [MARKER_TAG, *_tag_labels(labels, max_tags)], "statuses": _ALL_STATUSES}
        seen: set[tuple[str, ...]] = set()
        for record in self._listed(scopes, flt, lambda r: _meta(r) is not None, None):
            shown = self._shown(record.scope, tuple(_meta_of(record)["path"]), explicit)
            if all(_does_match(c, shown) for c in conditions):
                seen.add(shown[: op.max_depth] if op.max_depth is not None else shown)
        return sorted(seen)[op.offset : op.offset + op.limit]


# -- helpers ----------------------------------------------------------------------------


def _as_scope(label: str) -> Scope | None:
    """The scope a namespace label names, or None for an ordinary label."""
    if ":" not in label:
        return None
    try:
        return Scope.parse(label)
    except (InvalidInput, ValueError):
        return None


def _tag_labels(path: Sequence[str], max_tags: int) -> list[str]:
    """The path labels a put tags (cleaned as tags are), for narrowing a read."""
    return [p.strip() for p in path[: max_tags - 1] if p.strip() and len(p.strip()) <= _MAX_TAG]


def _content(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """The searchable text of a value: its text at ``fields``, else its JSON."""
    if fields:
        texts = [t for f in fields for t in get_text_at_path(value, tokenize_path(f)) if t.strip()]
        if texts:
            return "\n".join(texts)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _meta(record: MemoryRecord) -> dict[str, Any] | None:
    meta = record.metadata.get(META_KEY)
    if isinstance(meta, dict) and isinstance(meta.get("path"), list) and "key" in meta:
        return meta
    return None


def _meta_of(record: MemoryRecord) -> dict[str, Any]:
    meta = _meta(record)
    assert meta is not None, "a LangGraph item without its bookkeeping"
    return meta


def _value(record: MemoryRecord) -> dict[str, Any]:
    return {k: v for k, v in record.metadata.items() if k != META_KEY}


def _item(record: MemoryRecord, namespace: tuple[str, ...]) -> Item:
    return Item(
        value=_value(record),
        key=str(_meta_of(record)["key"]),
        namespace=namespace,
        created_at=record.created_at,
        updated_at=record.updated_at,
    )


def _search_item(
    record: MemoryRecord, namespace: tuple[str, ...], score: float | None
) -> SearchItem:
    return SearchItem(
        namespace=namespace,
        key=str(_meta_of(record)["key"]),
        value=_value(record),
        created_at=record.created_at,
        updated_at=record.updated_at,
        score=score,
    )


def _pushdown(filter: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a LangGraph filter kenning's metadata filter can check (scalar
    equality); every condition is checked again in Python (:func:`_matches`)."""
    out: dict[str, Any] = {}
    for key, cond in filter.items():
        if isinstance(cond, dict) and set(cond) == {"$eq"}:
            cond = cond["$eq"]
        if key != META_KEY and (cond is None or isinstance(cond, str | int | float)):
            out[key] = cond
    return out


def _matches(value: Mapping[str, Any], filter: Mapping[str, Any]) -> bool:
    return all(_compare(value.get(k), cond) for k, cond in filter.items())


def _compare(have: Any, want: Any) -> bool:
    """LangGraph's filter semantics: equality, nested objects, lists, ``$`` operators."""
    if isinstance(want, dict):
        if any(k.startswith("$") for k in want):
            return all(_operator(have, op, arg) for op, arg in want.items())
        return isinstance(have, dict) and all(_compare(have.get(k), v) for k, v in want.items())
    if isinstance(want, list | tuple):
        return (
            isinstance(have, list | tuple)
            and len(have) == len(want)
            and all(_compare(h, w) for h, w in zip(have, want, strict=True))
        )
    return bool(have == want)


def _operator(have: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(have == arg)
    if op == "$ne":
        return bool(have != arg)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        try:
            a, b = float(have), float(arg)
        except (TypeError, ValueError):
            return False
        return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
    raise ValueError(f"unsupported filter operator: {op}")


def _does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """A namespace against a prefix or suffix pattern (``*`` matches any label)."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    if not path:
        return True
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))

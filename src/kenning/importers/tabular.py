"""Import JSON lines or CSV through a column mapping.

A mapping names, for each kenning field, the input column that holds it::

    content=text,user=uid,created_at=ts,id=row_id,metadata.channel=chan

Targets (:data:`TARGETS`):

* ``content`` (required), ``id`` (the row's id in its origin: a re-import
  skips rows it already holds; without one, a row is identified by its
  content, so an unchanged row is skipped and a changed one is added anew);
* the scope: ``scope`` (a whole scope string such as ``team:eng``), or
  ``user`` / ``agent`` / ``team`` (as mem0's ids: ``user`` and ``agent``
  together give ``persona_user:AGENT/USER``, ``user`` alone ``user:USER``,
  ``agent`` alone ``persona:AGENT`` (and ``agent_id``), ``team`` alone
  ``team:TEAM``); none of them: the ``scope=`` argument, else the
  importer's own personal scope;
* times, ISO-8601 or Unix seconds: ``created_at``, ``updated_at``,
  ``event_at``, ``valid_from``, ``valid_to``;
* ``session_id``, ``episode_id``, ``agent_id``, ``source`` (default
  ``import``), ``key``, ``memory_type``, ``importance``, ``confidence``,
  ``tags`` (a list, or text separated by commas), ``metadata`` (an object,
  or its JSON text);
* ``metadata.NAME``: that column goes to ``metadata[NAME]``.

A target the mapping does not name reads the column of the same name when
there is one (a file whose columns are kenning's names needs no mapping), and
every column no target reads is kept in ``metadata`` under its own name. In
CSV an empty cell is a missing value.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..audit import audited
from ..errors import InvalidInput
from ..models import Principal, Scope
from ..validation import clean_time
from .base import ImportReport, Incoming, digest, owner_scope, run_import

if TYPE_CHECKING:
    from ..engine import Memory

__all__ = ["FORMATS", "TARGETS", "import_table", "parse_mapping", "read_table"]

#: The tabular formats.
FORMATS = ("jsonl", "csv")
Format = Literal["jsonl", "csv"]
_OWNERS = ("user", "agent", "team")
_TIMES = ("created_at", "updated_at", "event_at", "valid_from", "valid_to")
_PLAIN = ("session_id", "episode_id", "agent_id", "source", "key", "memory_type")
#: The fields a mapping may name (besides ``metadata.NAME``).
TARGETS = (
    "content",
    "id",
    "scope",
    *_OWNERS,
    *_TIMES,
    *_PLAIN,
    "importance",
    "confidence",
    "tags",
    "metadata",
)
_META = "metadata."
#: The ``source`` of an imported row that names none.
DEFAULT_SOURCE = "import"

TableSource = str | os.PathLike[str] | Iterable[str]


def parse_mapping(spec: str | Sequence[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``"content=text,user=uid"`` (or several such strings, or a dict) as
    ``{target: column}``; an unknown target or a target named twice is an error."""
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        pairs = [(str(k), str(v)) for k, v in spec.items()]
    else:
        parts = [spec] if isinstance(spec, str) else list(spec)
        pairs = []
        for part in parts:
            for pair in part.split(","):
                if not pair.strip():
                    continue
                target, sep, column = pair.partition("=")
                if not sep or not target.strip() or not column.strip():
                    raise InvalidInput(
                        f"a mapping is TARGET=COLUMN pairs separated by commas; got {pair!r}",
                        field="map",
                    )
                pairs.append((target.strip(), column.strip()))
    out: dict[str, str] = {}
    for target, column in pairs:
        if target not in TARGETS and not (target.startswith(_META) and len(target) > len(_META)):
            raise InvalidInput(
                f"unknown mapping target {target!r}; expected one of "
                f"{', '.join(TARGETS)} or metadata.NAME",
                field="map",
            )
        if target in out:
            raise InvalidInput(f"mapping target {target!r} is given twice", field="map")
        out[target] = column
    return out


def read_table(
    source: TableSource,
    fmt: Format,
    mapping: str | Sequence[str] | Mapping[str, str] | None = None,
    *,
    scope: Scope | str | None = None,
) -> list[Incoming]:
    """Rows of a JSONL or CSV file (a path, or its lines) as items to import
    (nothing stored). Errors name the line or row and the field (and column)."""
    if fmt not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}", field="from")
    fields = parse_mapping(mapping)
    target = None if scope is None else scope if isinstance(scope, Scope) else Scope.parse(scope)
    rows = _jsonl_rows(source) if fmt == "jsonl" else _csv_rows(source)
    return [_row(row, where, fields, target, fmt) for where, row in rows]


def _lines(source: TableSource) -> Iterator[str]:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        try:
            with path.open(encoding="utf-8", newline="") as fh:
                yield from fh
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"cannot read {path}: {exc}", field="file") from None
        return
    yield from source


def _jsonl_rows(source: TableSource) -> Iterator[tuple[str, dict[str, Any]]]:
    for n, line in enumerate(_lines(source), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise InvalidInput(f"line {n}: not valid JSON ({exc})", field="file") from None
        if not isinstance(row, dict):
            raise InvalidInput(f"line {n}: expected a JSON object", field="file")
        yield f"line {n}", row


def _csv_rows(source: TableSource) -> Iterator[tuple[str, dict[str, Any]]]:
    reader = csv.reader(_lines(source))
    try:
        header = next(reader, None)
        if header is None:
            raise InvalidInput("the CSV file is empty (no header row)", field="file")
        names = [h.strip() for h in header]
        twice = sorted({h for h in names if names.count(h) > 1})
        if twice or "" in names:
            raise InvalidInput(
                f"line 1: the header needs distinct, non-empty column names "
                f"(repeated: {twice}, empty: {names.count('')})",
                field="file",
            )
        for n, values in enumerate(reader, 1):
            where = f"row {n} (line {reader.line_num})"
            if not any(v.strip() for v in values):
                continue
            if len(values) > len(names):
                raise InvalidInput(
                    f"{where}: {len(values)} values for {len(names)} columns", field="file"
                )
            yield where, {k: v for k, v in zip(names, values, strict=False) if v != ""}
    except csv.Error as exc:
        raise InvalidInput(f"line {reader.line_num}: not valid CSV ({exc})", field="file") from None


def _row(
    row: Mapping[str, Any],
    where: str,
    mapping: Mapping[str, str],
    target: Scope | None,
    fmt: str,
) -> Incoming:
    columns = {t: mapping.get(t, t) for t in TARGETS} | {
        t: c for t, c in mapping.items() if t.startswith(_META)
    }
    used = {c for t, c in columns.items() if c in row}

    def value(name: str) -> Any:
        got = row.get(columns[name])
        return None if got is None or got == "" else got

    try:
        fields, times, meta = _fields(row, value, columns, target, fmt)
    except InvalidInput as exc:
        column = columns.get(exc.field or "")
        named = f" (column {column!r})" if column else ""
        raise InvalidInput(f"{where}: {exc}{named}", field=exc.field) from None
    meta.update({k: v for k, v in row.items() if k not in used})
    fields["metadata"] = meta
    row_id = value("id")
    return Incoming(
        where=where,
        fields=fields,
        origin=fmt,
        origin_id=str(row_id) if row_id is not None else digest(row),
        digest=digest(row),
        created_at=times.get("created_at"),
        updated_at=times.get("updated_at"),
        names={t: c for t, c in columns.items() if c != t},
    )


def _fields(
    row: Mapping[str, Any],
    value: Callable[[str], Any],
    columns: Mapping[str, str],
    target: Scope | None,
    fmt: str,
) -> tuple[dict[str, Any], dict[str, datetime | None], dict[str, Any]]:
    owners = {name: _text(value(name), name) for name in _OWNERS}
    scope_text = _text(value("scope"), "scope")
    scope: Scope | str | None = target
    if scope_text is not None and any(owners.values()):
        raise InvalidInput("give the scope or user/agent/team, not both", field="scope")
    if target is None:
        scope = scope_text or owner_scope(owners["user"], owners["agent"], owners["team"], names={})
    fields: dict[str, Any] = {"content": value("content"), "scope": scope}
    if fields["content"] is None:
        raise InvalidInput("content is missing", field="content")
    if owners["agent"] is not None:
        fields["agent_id"] = owners["agent"]
    for name in _PLAIN:
        if value(name) is not None:
            fields[name] = _text(value(name), name)
    fields.setdefault("source", DEFAULT_SOURCE)
    if value("importance") is not None:
        fields["importance"] = _number(value("importance"), "importance", int)
    if value("confidence") is not None:
        fields["confidence"] = _number(value("confidence"), "confidence", float)
    if value("tags") is not None:
        fields["tags"] = _tags(value("tags"))
    times = {name: _time(value(name), name) for name in _TIMES}
    for name in ("event_at", "valid_from", "valid_to"):
        if times[name] is not None:
            fields[name] = times[name]
    meta = _object(value("metadata")) if value("metadata") is not None else {}
    for name, column in columns.items():
        if name.startswith(_META) and row.get(column) not in (None, ""):
            meta[name[len(_META) :]] = row[column]
    return fields, times, meta


def _text(raw: Any, name: str) -> str | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise InvalidInput(f"{name} must be text, got {raw!r}", field=name)
    return str(raw).strip() or None


def _number(raw: Any, name: str, kind: type[int] | type[float]) -> int | float:
    if isinstance(raw, str):
        try:
            return kind(raw.strip())
        except ValueError:
            raise InvalidInput(f"{name} must be a number, got {raw!r}", field=name) from None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise InvalidInput(f"{name} must be a number, got {raw!r}", field=name)
    return raw


def _time(raw: Any, name: str) -> datetime | None:
    """ISO-8601 text, or Unix seconds (a number or its digits)."""
    if raw is None:
        return None
    seconds: float | None = None
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        seconds = float(raw)
    elif isinstance(raw, str):
        try:
            seconds = float(raw.strip())
        except ValueError:
            seconds = None
    if seconds is not None:
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            raise InvalidInput(f"{name} is out of range: {raw!r}", field=name) from None
    return clean_time(raw, name)


def _tags(raw: Any) -> list[str]:
    if isinstance(raw, list):
        return raw
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith("["):
            parsed = _json(text, "tags")
            if isinstance(parsed, list):
                return parsed
        return [t.strip() for t in text.split(",") if t.strip()]
    raise InvalidInput(f"tags must be a list or comma-separated text, got {raw!r}", field="tags")


def _object(raw: Any) -> dict[str, Any]:
    parsed = _json(raw, "metadata") if isinstance(raw, str) else raw
    if not isinstance(parsed, dict):
        raise InvalidInput(f"metadata must be a JSON object, got {raw!r}", field="metadata")
    return dict(parsed)


def _json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{name} is not valid JSON ({exc})", field=name) from None


def _count(result: object, args: tuple[Any, ...]) -> str | None:
    return f"{result.read} memories" if isinstance(result, ImportReport) else None


@audited("memory.import", target=_count)
def import_table(
    mem: Memory,
    source: TableSource,
    fmt: Format,
    mapping: str | Sequence[str] | Mapping[str, str] | None = None,
    *,
    scope: Scope | str | None = None,
    principal: Principal | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import a JSONL or CSV file (a path, or its lines) through ``mapping`` (see the
    module docstring); all rows are checked before anything is written, then
    written in one transaction. ``scope``: every row goes there.

    >>> import_table(mem, "notes.csv", "csv", "content=text,user=uid")  # doctest: +SKIP
    """
    who = mem.core.who(principal)
    items = read_table(source, fmt, mapping, scope=scope)
    return run_import(mem, items, who, fmt, progress)

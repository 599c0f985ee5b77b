"""Output of the CLI: JSON on stdout, rich tables for people, progress bars on stderr."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column, Table
from rich.text import Text

from ..migrate import CopyReport
from ..models import HistoryEntry, Hit, LayerStats, MemoryRecord, RecallResult

if TYPE_CHECKING:
    from ..stores.moves import MoveReport

__all__ = [
    "emit",
    "say",
    "show_record",
    "show_records",
    "show_recall",
    "explained_lines",
    "show_history",
    "show_stats",
    "show_migration",
    "progress",
    "Ticker",
    "table",
    "cell",
    "text_cell",
    "id_col",
    "text_col",
]


#: What recall prints when it abstained (``RecallResult.abstained``).
_NOTHING = (
    "no memory answers this: no hit scored retrieval.abstain_below "
    "(KENNING_RETRIEVAL_ABSTAIN_BELOW)"
)


def emit(data: Any) -> None:
    """One JSON document on stdout."""
    typer.echo(json.dumps(data, ensure_ascii=False))


def say(message: str, *, err: bool = False) -> None:
    """A plain line for people (no markup: user text is printed verbatim)."""
    typer.echo(message, err=err)


def _cell(value: Any, width: int | None = None) -> Text:
    if value is None:
        return Text("–", style="dim")
    if isinstance(value, float):
        return Text(f"{value:.3f}")
    if isinstance(value, dict | list | tuple):
        value = json.dumps(value, ensure_ascii=False) if value else ""
    text = str(value)
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return Text(text)


def _id_col(name: str = "id") -> Column:
    return Column(name, overflow="fold")


def _text_col(name: str) -> Column:
    return Column(name, overflow="fold")


def _table(columns: Sequence[str | Column], rows: Sequence[Sequence[Any]]) -> None:
    table = Table(*columns)
    for row in rows:
        table.add_row(*(c if isinstance(c, Text) else _cell(c) for c in row))
    Console(highlight=False).print(table)


def table(columns: Sequence[str | Column], rows: Sequence[Sequence[Any]]) -> None:
    """A rich table on stdout (cells: values or :class:`~rich.text.Text`)."""
    _table(columns, rows)


def cell(value: Any, width: int | None = None) -> Text:
    """One table cell, cut to ``width`` characters."""
    return _cell(value, width)


def text_cell(value: str) -> Text:
    """A cell of plain text (no markup)."""
    return Text(value)


def id_col(name: str = "id") -> Column:
    """A column for ids (folded, never cut)."""
    return _id_col(name)


def text_col(name: str) -> Column:
    """A column for free text."""
    return _text_col(name)


def show_record(record: MemoryRecord) -> None:
    """Every field of one memory, one per row."""
    _table(("field", _text_col("value")), list(record.to_dict().items()))


def show_records(records: Sequence[MemoryRecord]) -> None:
    """A listing: one memory per row."""
    if not records:
        say("no memories")
        return
    rows = [
        (
            r.id,
            r.created_at.strftime("%Y-%m-%d"),
            r.scope.key,
            r.memory_type.value,
            r.status.value,
            r.confidence,
            r.key,
            ", ".join(r.tags),
            _cell(r.content, 160),
        )
        for r in records
    ]
    cols = (_id_col(), "created", "scope", "type", "status", "conf", "key", "tags")
    _table((*cols, _text_col("content")), rows)


def show_recall(result: RecallResult, explain: bool, width: int | None = None) -> None:
    """Ranked hits as a table; with ``explain`` one block per hit instead (rank,
    score, id, scope, when, the content shortened, then the score breakdown as
    ``name=value`` pairs), then the per-stage timings, every line wrapped to
    ``width`` (default: the terminal's)."""
    if explain:
        for line in explained_lines(result, width or Console().width):
            say(line)
        return
    if not result.hits:
        say(_NOTHING if result.abstained else "no memories found")
        return
    cols: list[str | Column] = ["#", "score", _id_col(), "scope", "when", _text_col("content")]
    rows: list[list[Any]] = []
    for n, hit in enumerate(result.hits, 1):
        m = hit.memory
        related = f" (+{len(hit.related)} linked)" if hit.related else ""
        when = m.said_at.date().isoformat()
        rows.append([n, hit.score, m.id, m.scope.key, when, _cell(m.content + related, 160)])
    _table(cols, rows)


def _num(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _wrap(label: str, pairs: Sequence[str], width: int, indent: str = "    ") -> list[str]:
    """``label pair pair ...`` wrapped to ``width``, continuation lines indented."""
    lead = f"{indent}{label} " if label else indent
    return textwrap.wrap(
        " ".join(pairs),
        width=max(width, 20),
        initial_indent=lead,
        subsequent_indent=indent + "  ",
        break_long_words=True,
        break_on_hyphens=False,
    )


def _hit_block(n: int, hit: Hit, width: int) -> list[str]:
    m = hit.memory
    head = [f"#{n}", f"score={hit.score:.3f}", f"id={m.id}", f"scope={m.scope.key}"]
    head.append(f"when={m.said_at.date().isoformat()}")
    lines = _wrap("", head, width, indent="")
    related = f" (+{len(hit.related)} linked)" if hit.related else ""
    lines += textwrap.wrap(
        " ".join((m.content + related).split()),
        width=max(width, 20),
        initial_indent="    ",
        subsequent_indent="    ",
        max_lines=2,
        placeholder=" …",
    )
    e = hit.explain
    if e is None:
        return lines
    rank = [
        ("priority", e.final if e.priority is None else e.priority),
        ("relevance", e.relevance),
        ("confidence", e.confidence),
        ("temporal", e.temporal),
        ("strength", e.strength),
    ]
    if e.learned is not None:  # the learned relevance's raw score, when it ran
        rank.insert(2, ("learned", e.learned))
    lines += _wrap("ranking:", [f"{k}={_num(v)}" for k, v in rank], width)
    found = ("dense", e.dense), ("keyword", e.keyword), ("fused", e.fused)
    lines += _wrap("match:", [f"{k}={_num(v)}" for k, v in found], width)
    signals = e.signals or {
        "graph": e.graph,
        "context": e.context,
        "time": e.time,
        "layer": e.layer_boost,
        "persona": e.scope_boost,
    }
    lines += _wrap("signals:", [f"{k}={_num(v)}" for k, v in signals.items()], width)
    inputs = e.calibration.get("inputs")
    if isinstance(inputs, Mapping) and inputs:
        pairs = [f"{k}={_num(v)}" for k, v in inputs.items()]
        pairs.append(f"logit={_num(e.calibration.get('logit'))}")
        lines += _wrap("score from:", pairs, width)
    return lines


def explained_lines(result: RecallResult, width: int) -> list[str]:
    """The lines ``recall --explain`` prints, none longer than ``width``."""
    lines: list[str] = []
    if not result.hits:
        lines.append(_NOTHING if result.abstained else "no memories found")
    for n, hit in enumerate(result.hits, 1):
        if n > 1:
            lines.append("")
        lines += _hit_block(n, hit, width)
    lines.append("")
    lines += _wrap(
        "timings (ms):", [f"{k}={v:.1f}" for k, v in result.timings_ms.items()], width, ""
    )
    lines += _wrap("candidates:", [f"{k}={v}" for k, v in result.candidates.items()], width, "")
    if result.time_window:
        window = f"{result.time_window.get('start')} .. {result.time_window.get('end')}"
        lines += _wrap("time window:", [window], width, "")
    for path in result.paths[:10]:
        hops = [
            f"-{rel}{'->' if fwd else '<-'} {node[:8]}"
            for rel, fwd, node in zip(path.relations, path.forward, path.nodes[1:], strict=False)
        ]
        lines += _wrap(
            f"path {path.nodes[0][:8]}", [*hops, f"(strength {path.strength:.2f})"], width, ""
        )
    return lines


def show_history(entries: Sequence[HistoryEntry]) -> None:
    """Changes of one memory, oldest first."""
    rows = [
        (
            h.seq,
            h.at.strftime("%Y-%m-%d %H:%M:%S"),
            h.op,
            h.actor,
            h.version,
            _cell(h.changes, 120),
            _cell(h.content, 120),
        )
        for h in entries
    ]
    cols = ("seq", "at", "op", "actor", "version", _text_col("changes"), _text_col("content"))
    _table(cols, rows)


def _pairs(counts: Mapping[str, int]) -> str:
    return "\n".join(f"{k}={v}" for k, v in counts.items())


def show_stats(layers: Sequence[LayerStats]) -> None:
    """One row per layer: totals, statuses, types, confidence and age distributions."""
    if not layers:
        say("no memories")
        return
    rows = [
        (
            s.layer,
            s.total_memories,
            _pairs(s.by_status),
            _pairs(s.by_type),
            s.avg_confidence,
            _pairs(s.confidence_distribution),
            _pairs(s.age_distribution),
        )
        for s in layers
    ]
    _table(("layer", "total", "by status", "by type", "avg conf", "confidence", "age"), rows)


def show_migration(report: CopyReport) -> None:
    """One row per organization copied: counts and the sha256 both sides agree on."""
    if not report.organizations:
        say("no memories to copy")
        return
    rows = [(o.org_id, o.memories, o.history, o.checksum) for o in report.organizations]
    _table((_id_col("organization"), "memories", "history", _id_col("sha256")), rows)


def show_org_move(report: MoveReport) -> None:
    """One row per table moved (rows and the md5 both databases agree on), then a summary."""
    rows = [(name, n, digest) for name, (n, digest) in report.tables.items()]
    _table(("table", "rows", _id_col("md5")), rows)
    moved = report.to_dict()
    say(
        f"moved organization {report.org_id!r} from {moved['from']} to {moved['to']}: "
        f"verified, {report.deleted} rows removed from the old database, "
        f"writes paused {report.paused_s:.1f} s"
    )


@contextmanager
def progress(label: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr (silent when stderr is not a terminal); yields ``advance(n)``."""
    console = Console(stderr=True)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)


class Ticker:
    """A text sink that advances a progress bar by one per line written through it."""

    def __init__(self, out: TextIO, step: Callable[[int], None]) -> None:
        self._out, self._step = out, step

    def write(self, text: str) -> int:
        """Write ``text`` and count its lines."""
        written = self._out.write(text)
        self._step(text.count("\n"))
        return written

"""``kenning bench``: the benchmark programs, printing JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import typer

from ..config import ABSTAIN_BELOW, Settings
from .overrides import set_dotted

__all__ = ["bench_app"]

bench_app = typer.Typer(
    help="Benchmarks (print JSON; figures go in BENCHMARKS.md).", no_args_is_help=True
)


StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="URL",
        help="An empty database to run on (postgresql://… or sqlite:///…); "
        "default: a temporary SQLite file.",
    ),
]


def _split(name: str) -> Literal["dev", "holdout", "all"]:
    """The ``--split`` value, checked."""
    return cast(Literal["dev", "holdout", "all"], _split_choice(name, ("dev", "holdout", "all")))


def _split_choice(name: str, choices: tuple[str, ...]) -> str:
    """``name`` if it is one of ``choices``; else the error listing them."""
    if name not in choices:
        raise typer.BadParameter(f"split must be {', '.join(choices[:-1])} or {choices[-1]}")
    return name


def _settings(overrides: list[str]) -> Settings | None:
    """``--set key=value`` overrides (``scoring.temporal=0``, ``graph.relax_gamma=0``,
    ``retrieval.time.enabled=false``, ``lifecycle.reconcile=off`` for the nested
    groups; old flat names such as ``fusion_alpha`` still work)."""
    if not overrides:
        return None
    values = Settings().model_dump()
    for item in overrides:
        name, sep, raw = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"--set expects key=value, got {item!r}")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        try:
            set_dotted(values, name, value)
        except (KeyError, TypeError) as exc:
            raise typer.BadParameter(f"--set: no setting {name!r}") from exc
    return Settings(**values)


@bench_app.command("locomo")
def locomo(
    data: Annotated[Path, typer.Option(help="Path to locomo10.json.")],
    split: Annotated[str, typer.Option(help="dev | holdout | all")] = "all",
    set_: Annotated[list[str], typer.Option("--set", help="Settings override key=value.")] = [],  # noqa: B006
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = True,
    min_score: Annotated[
        float | None,
        typer.Option(
            "--min-score",
            min=0.0,
            max=1.0,
            help="Also report the metrics over hits scoring at least this, and the share "
            "of adversarial questions with no top-10 hit at or above it.",
        ),
    ] = None,
) -> None:
    """LoCoMo retrieval: recall@k, any/all-hit, per category, latency."""
    from .locomo import run_locomo

    result = run_locomo(
        data, _split(split), settings=_settings(set_), store=store, min_score=min_score
    )
    typer.echo(json.dumps(result, indent=None if as_json else 2, default=str))


@bench_app.command("ingest")
def ingest(
    data: Annotated[Path, typer.Option(help="Path to locomo10.json.")],
    split: Annotated[str, typer.Option(help="dev | holdout | all")] = "dev",
    set_: Annotated[list[str], typer.Option("--set", help="Settings override key=value.")] = [],  # noqa: B006
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = True,
) -> None:
    """LoCoMo through ``ingest``: fact coverage of the evidence turns, and recall@k."""
    from .ingest import run_ingest_locomo

    result = run_ingest_locomo(data, _split(split), settings=_settings(set_), store=store)
    typer.echo(json.dumps(result, indent=None if as_json else 2, default=str))


@bench_app.command("scale")
def scale(
    n: Annotated[int, typer.Option(help="Number of memories.")] = 100_000,
    synthetic_vectors: Annotated[
        bool, typer.Option(help="Skip the model (synthetic vectors).")
    ] = False,
    queries: Annotated[int, typer.Option(help="Recalls to time per principal.")] = 200,
    set_: Annotated[list[str], typer.Option("--set", help="Settings override key=value.")] = [],  # noqa: B006
    store: StoreOpt = None,
    db: Annotated[
        Path | None,
        typer.Option(help="Database file to build, or to reuse (skips ingest) when it exists."),
    ] = None,
    repeat: Annotated[int, typer.Option(help="Timing passes after the one index build.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = True,
) -> None:
    """Ingest throughput and recall latency at N memories (worst case and typical)."""
    from .scale import run_scale

    result = run_scale(
        n,
        synthetic=synthetic_vectors,
        queries=queries,
        settings=_settings(set_),
        db_path=db,
        repeat=repeat,
        store=store,
    )
    typer.echo(json.dumps(result, indent=None if as_json else 2))


_SPLITS = ["dev", "holdout"]


@bench_app.command("ablation")
def ablation(
    data: Annotated[Path, typer.Option(help="Path to locomo10.json.")],
    split: Annotated[list[str], typer.Option(help="Splits (repeatable).")] = _SPLITS,
) -> None:
    """LoCoMo retrieval with each ranking component switched on in turn."""
    from .ablation import run_ablation

    result = run_ablation(data, tuple(split), progress=lambda msg: typer.echo(msg, err=True))
    typer.echo(json.dumps(result))


@bench_app.command("reconcile")
def reconcile(
    cases: Annotated[
        Path | None,
        typer.Option(help="Cases JSON file; default: the cases shipped with kenning."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on one line.")] = False,
) -> None:
    """Reconcile-on-write accuracy (add/update/noop/supersede/shadow) on hand-written cases."""
    from .reconcile import run_reconcile_bench

    result = run_reconcile_bench(cases)
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("load")
def load(
    store: StoreOpt = None,
    workers: Annotated[
        int, typer.Option(help="Server worker processes (they share the store).")
    ] = 1,
    clients: Annotated[int, typer.Option(help="Concurrent clients.")] = 16,
    duration: Annotated[float, typer.Option(help="Seconds of load.")] = 20.0,
    requests: Annotated[
        int | None, typer.Option(help="Total requests instead of --duration.")
    ] = None,
    write_ratio: Annotated[float, typer.Option(help="Share of remembers (rest: recalls).")] = 0.2,
    seed_memories: Annotated[int, typer.Option(help="Memories preloaded before the run.")] = 2000,
    port: Annotated[int | None, typer.Option(help="Server port; default: a free one.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on one line.")] = False,
) -> None:
    """Concurrent clients (recall/remember mix) against `kenning serve` on loopback:
    throughput, latency quantiles, errors, lost writes."""
    from .load import run_load

    result = run_load(
        store=store,
        workers=workers,
        clients=clients,
        duration=duration,
        requests=requests,
        write_ratio=write_ratio,
        seed_memories=seed_memories,
        port=port,
        progress=lambda msg: typer.echo(msg, err=True),
    )
    typer.echo(json.dumps(result, indent=None if as_json else 2))


def _vias(name: str) -> list[Literal["write", "ingest"]]:
    """The ``--via`` value, checked: write, ingest or both."""
    if name == "both":
        return ["write", "ingest"]
    if name not in ("write", "ingest"):
        raise typer.BadParameter("via must be write, ingest or both")
    return [cast(Literal["write", "ingest"], name)]


@bench_app.command("currency")
def currency(
    split: Annotated[
        str,
        typer.Option(
            help="dev | holdout | all (by attribute kind); tune: fifteen more kinds in their "
            "own dataset, tuned on as dev; probe: five more, a check never tuned on"
        ),
    ] = "dev",
    via: Annotated[str, typer.Option(help="write | ingest | both")] = "both",
    users: Annotated[int, typer.Option(help="Number of users.")] = 60,
    k: Annotated[int, typer.Option(help="Hits per recall.")] = 10,
    set_: Annotated[list[str], typer.Option("--set", help="Settings override key=value.")] = [],  # noqa: B006
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on one line.")] = False,
) -> None:
    """Changing facts: the current value first, stale and look-alike values below it,
    the previous value for questions about before; through write and/or ingest."""
    from .currency import run_currency

    chosen = _vias(via)
    if store and len(chosen) > 1:
        raise typer.BadParameter("--store takes one --via (each run needs an empty database)")
    chosen_split = cast(
        Literal["dev", "holdout", "tune", "probe", "all"],
        _split_choice(split, ("dev", "holdout", "tune", "probe", "all")),
    )
    results = {
        name: run_currency(
            chosen_split, name, n_users=users, k=k, settings=_settings(set_), store=store
        )
        for name in chosen
    }
    result = results[chosen[0]] if len(chosen) == 1 else results
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("abstain")
def abstain(
    locomo: Annotated[
        Path | None, typer.Option(help="Path to locomo10.json: also its questions.")
    ] = None,
    split: Annotated[str, typer.Option(help="dev | holdout | all")] = "dev",
    via: Annotated[str, typer.Option(help="How the currency users are loaded.")] = "write",
    min_score: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="Threshold to report beside the grid."),
    ] = None,
    abstain_below: Annotated[
        float,
        typer.Option(
            min=0.0, max=1.0, help="Abstention threshold to report (retrieval.abstain_below)."
        ),
    ] = ABSTAIN_BELOW,
    users: Annotated[int, typer.Option(help="Number of currency users.")] = 60,
    k: Annotated[int, typer.Option(help="Hits per recall.")] = 10,
    set_: Annotated[list[str], typer.Option("--set", help="Settings override key=value.")] = [],  # noqa: B006
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on one line.")] = False,
) -> None:
    """Unanswerable questions beside answerable ones: how a score threshold separates them."""
    from .abstain import run_abstain

    if via == "both":
        raise typer.BadParameter("via must be write or ingest")
    (chosen,) = _vias(via)
    result = run_abstain(
        _split(split),
        locomo=locomo,
        min_score=min_score,
        abstain_below=abstain_below,
        via=chosen,
        n_users=users,
        k=k,
        settings=_settings(set_),
    )
    typer.echo(json.dumps(result, indent=None if as_json else 2))

"""Writers of one SQLite file in several processes take turns (``stores/sqlite/turns.py``)."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from pathlib import Path

import pytest

from kenning.errors import StoreError
from kenning.stores.sqlite.turns import TURN_FILE_SUFFIX, WriterTurns


def test_a_turn_waits_for_the_one_before_it(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    first, second = WriterTurns(db, 30), WriterTurns(db, 30)
    first.take()
    got = threading.Event()

    def take_second() -> None:
        second.take()
        got.set()

    waiter = threading.Thread(target=take_second)
    waiter.start()
    assert not got.wait(0.3)  # held by the first writer
    first.give()
    assert got.wait(10)  # passed on once given
    waiter.join()
    second.give()
    first.close()
    second.close()
    assert os.path.exists(db + TURN_FILE_SUFFIX)


def test_a_turn_kept_too_long_is_a_clear_error(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    holder, late = WriterTurns(db, 30), WriterTurns(db, 0.2)
    holder.take()
    try:
        with pytest.raises(StoreError, match="kept the database's write turn"):
            late.take()
    finally:
        holder.close()
        late.close()


def test_in_memory_and_unwritable_places_fall_back_to_sqlites_waiting(tmp_path: Path) -> None:
    memory = WriterTurns(None, 1)
    memory.take()
    memory.take()  # nobody to take turns with: never blocks
    memory.close()
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root writes anyway: nothing to check here
            return
        turns = WriterTurns(str(locked / "k.db"), 1)
        turns.take()
        turns.give()
        turns.close()
    finally:
        locked.chmod(0o700)


def _hold(db: str, ready: object, release: object) -> None:
    turns = WriterTurns(db, 30)
    turns.take()
    ready.set()  # type: ignore[attr-defined]
    release.wait(30)  # type: ignore[attr-defined]
    turns.close()


def test_turns_pass_between_processes(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    other = ctx.Process(target=_hold, args=(db, ready, release))
    other.start()
    try:
        assert ready.wait(60)
        mine = WriterTurns(db, 0.3)
        with pytest.raises(StoreError):
            mine.take()  # the other process holds the turn
        release.set()
        mine = WriterTurns(db, 30)
        started = time.monotonic()
        mine.take()
        assert time.monotonic() - started < 30
        mine.close()
    finally:
        release.set()
        other.join(30)

"""Named, ordered schema migrations of the SQLite store.

Each migration is a function applied inside one transaction together with the
row that records it in ``_migrations``; a database is never left half-migrated.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .driver import sqlite3

__all__ = ["MIGRATIONS", "apply_migrations"]

Migration = Callable[[sqlite3.Connection], None]


def m001_core(conn: sqlite3.Connection) -> None:
    """Scopes, memories, vectors, the keyword index, history, metadata."""
    conn.executescript(
        """
        CREATE TABLE scopes (
            pk INTEGER PRIMARY KEY,
            org_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            owner_id TEXT NOT NULL,
            user_id TEXT,
            key TEXT NOT NULL,
            UNIQUE (org_id, key)
        );
        CREATE TABLE memories (
            pk INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            org_id TEXT NOT NULL,
            scope_pk INTEGER NOT NULL REFERENCES scopes(pk),
            content TEXT NOT NULL,
            key TEXT,
            memory_type TEXT NOT NULL,
            importance INTEGER NOT NULL,
            confidence REAL NOT NULL,
            status TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}',
            source TEXT NOT NULL,
            source_channel_id TEXT,
            agent_id TEXT,
            session_id TEXT,
            episode_id TEXT,
            created_by TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            event_at REAL,
            valid_from REAL,
            valid_to REAL,
            strength REAL NOT NULL,
            decay_rate REAL NOT NULL,
            access_count INTEGER NOT NULL DEFAULT 0,
            reinforcement_count INTEGER NOT NULL DEFAULT 0,
            last_accessed REAL,
            sector_id TEXT,
            supersedes TEXT,
            superseded_by TEXT,
            version INTEGER NOT NULL DEFAULT 1,
            content_hash TEXT NOT NULL
        );
        CREATE INDEX memories_scope ON memories (scope_pk, status, created_at);
        CREATE INDEX memories_org_created ON memories (org_id, created_at, id);
        CREATE UNIQUE INDEX memories_key ON memories (scope_pk, key)
            WHERE key IS NOT NULL AND status != 'superseded';
        CREATE INDEX memories_session ON memories (session_id) WHERE session_id IS NOT NULL;
        CREATE INDEX memories_channel ON memories (source_channel_id)
            WHERE source_channel_id IS NOT NULL;
        CREATE TABLE vectors (
            pk INTEGER PRIMARY KEY REFERENCES memories(pk) ON DELETE CASCADE,
            model_id TEXT NOT NULL,
            vector BLOB NOT NULL
        );
        CREATE VIRTUAL TABLE memories_fts USING fts5 (
            content, key, tags, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TABLE history (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            org_id TEXT NOT NULL,
            scope_pk INTEGER NOT NULL,
            op TEXT NOT NULL,
            actor TEXT,
            at REAL NOT NULL,
            version INTEGER,
            content TEXT,
            changes TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX history_memory ON history (memory_id, seq);
        CREATE INDEX history_scope ON history (scope_pk, seq);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE INDEX memories_hash ON memories (content_hash);
        """
    )


def m002_term_stats(conn: sqlite3.Connection) -> None:
    """Per-term document counts of the keyword index (``fts5vocab``)."""
    conn.execute("CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, row)")


def m003_graph(conn: sqlite3.Connection) -> None:
    """The memory graph: entities (+ aliases), mentions, memory-to-memory links.

    ``mentions`` repeat the memory's scope and status (kept in step by every
    write), so entity reads filter on the index alone. ``links`` join two
    memories of one scope (``scope_pk`` is that scope); reads join both
    endpoints back to ``memories`` for their scope and status. Deleting a
    memory cascades to its mentions and links (the store also deletes them
    explicitly, and the entities left without a mention).
    """
    conn.executescript(
        """
        CREATE TABLE entities (
            id TEXT PRIMARY KEY,
            org_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            norm TEXT NOT NULL,
            label TEXT NOT NULL,
            entity_type TEXT,
            created_at REAL NOT NULL,
            UNIQUE (org_id, kind, norm)
        );
        CREATE INDEX entities_norm ON entities (org_id, norm);
        CREATE TABLE entity_aliases (
            org_id TEXT NOT NULL,
            alias_norm TEXT NOT NULL,
            entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            PRIMARY KEY (org_id, alias_norm, entity_id)
        );
        CREATE INDEX entity_aliases_entity ON entity_aliases (entity_id);
        CREATE TABLE mentions (
            memory_pk INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
            entity_id TEXT NOT NULL REFERENCES entities(id),
            scope_pk INTEGER NOT NULL,
            status TEXT NOT NULL,
            created_at REAL NOT NULL,
            label TEXT NOT NULL,
            entity_type TEXT,
            PRIMARY KEY (memory_pk, entity_id)
        );
        CREATE INDEX mentions_entity ON mentions (entity_id, status, created_at);
        CREATE TABLE links (
            src_pk INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
            dst_pk INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
            relation TEXT NOT NULL,
            weight REAL NOT NULL,
            org_id TEXT NOT NULL,
            scope_pk INTEGER NOT NULL,
            origin TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (src_pk, dst_pk, relation),
            CHECK (src_pk <> dst_pk)
        );
        CREATE INDEX links_dst ON links (dst_pk);
        CREATE INDEX links_scope ON links (scope_pk);
        CREATE INDEX memories_episode ON memories (episode_id) WHERE episode_id IS NOT NULL;
        """
    )


def m004_said_at(conn: sqlite3.Connection) -> None:
    """An index on when a memory happened (event time, else creation), so a recall
    for "last May" finds that window's memories without reading every row."""
    conn.execute(
        "CREATE INDEX memories_said_at ON memories (COALESCE(event_at, created_at), scope_pk)"
    )


def m005_lifecycle(conn: sqlite3.Connection) -> None:
    """The access log (seed 003), sectors per scope, and retention/capacity/review
    policies; an index for sector sizes."""
    conn.executescript(
        """
        CREATE TABLE access_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            org_id TEXT NOT NULL,
            scope_pk INTEGER NOT NULL,
            access_type TEXT NOT NULL,
            query_context TEXT,
            strength_before REAL NOT NULL,
            strength_after REAL NOT NULL,
            at REAL NOT NULL
        );
        CREATE INDEX access_log_memory ON access_log (memory_id, seq);
        CREATE INDEX access_log_time ON access_log (org_id, at);
        CREATE TABLE sectors (
            id TEXT PRIMARY KEY,
            org_id TEXT NOT NULL,
            scope_pk INTEGER NOT NULL REFERENCES scopes(pk),
            name TEXT NOT NULL,
            parent_id TEXT REFERENCES sectors(id),
            decay_multiplier REAL NOT NULL,
            topics TEXT NOT NULL DEFAULT '[]',
            centroid BLOB,
            max_size INTEGER NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX sectors_scope ON sectors (scope_pk);
        CREATE INDEX memories_sector ON memories (sector_id, status) WHERE sector_id IS NOT NULL;
        CREATE TABLE policies (
            org_id TEXT NOT NULL,
            target TEXT NOT NULL,
            memory_type TEXT NOT NULL,
            retention_days REAL,
            capacity INTEGER,
            review INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL,
            PRIMARY KEY (org_id, target, memory_type)
        );
        """
    )


def m006_directory(conn: sqlite3.Connection) -> None:
    """The directory: organizations, users, teams and personas as JSON documents,
    API keys (only the secret's hash), and the append-only audit log."""
    conn.executescript(
        """
        CREATE TABLE directory (
            org_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            id TEXT NOT NULL,
            doc TEXT NOT NULL DEFAULT '{}',
            updated_at REAL NOT NULL,
            PRIMARY KEY (org_id, kind, id)
        );
        CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            org_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            name TEXT NOT NULL,
            secret_hash TEXT NOT NULL,
            persona TEXT,
            created_at REAL NOT NULL,
            created_by TEXT NOT NULL,
            revoked_at REAL
        );
        CREATE INDEX api_keys_user ON api_keys (org_id, user_id);
        CREATE TABLE audit_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            org_id TEXT NOT NULL,
            at REAL NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT,
            outcome TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '{}',
            request_id TEXT
        );
        CREATE INDEX audit_log_org ON audit_log (org_id, seq DESC);
        """
    )


def m007_secure_delete(conn: sqlite3.Connection) -> None:
    """Erase a deleted memory's terms from the keyword index at once (FTS5's
    ``secure-delete``, SQLite 3.44+; a setting the index keeps), and merge the
    index once so the terms of memories deleted before this leave its segments.

    Afterwards SQLite older than 3.44 cannot read the keyword index (see
    :mod:`kenning.stores.sqlite.driver`).
    """
    conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1)")
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")


MIGRATIONS: list[tuple[str, Migration]] = [
    ("001_core", m001_core),
    ("002_term_stats", m002_term_stats),
    ("003_graph", m003_graph),
    ("004_said_at", m004_said_at),
    ("005_lifecycle", m005_lifecycle),
    ("006_directory", m006_directory),
    ("007_secure_delete", m007_secure_delete),
]


def apply_migrations(conn: sqlite3.Connection) -> list[str]:
    """Apply every pending migration, each in its own transaction; return their names."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    applied: list[str] = []
    for name, migration in MIGRATIONS:
        conn.execute("BEGIN IMMEDIATE")
        try:
            done = conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone()
            if done is None:
                # executescript would COMMIT the open transaction; run statements one by one.
                _run_in_transaction(conn, migration)
                conn.execute(
                    "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, time.time())
                )
                applied.append(name)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return applied


class _NoScriptConnection:
    """Lets a migration call ``executescript`` without committing the transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def executescript(self, script: str) -> None:
        for statement in _split_sql(script):
            self._conn.execute(statement)

    def execute(self, sql: str, params: tuple[object, ...] = ()) -> sqlite3.Cursor:
        return self._conn.execute(sql, params)


def _split_sql(script: str) -> list[str]:
    statements: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                statements.append(buf.strip())
            buf = ""
    if buf.strip():
        statements.append(buf.strip())
    return statements


def _run_in_transaction(conn: sqlite3.Connection, migration: Migration) -> None:
    migration(_NoScriptConnection(conn))  # type: ignore[arg-type]

"""Named, ordered schema migrations of the PostgreSQL store.

Keyword search reads ``postings`` (one row per memory and English stem, with
its term frequency), not a GIN index on the ``tsv`` column: under row-level
security PostgreSQL may only use *leakproof* operators as index conditions,
and the text-search match operator ``@@`` is not leakproof, so every ``@@``
query on ``memories`` became a full scan. Equality on a stem is leakproof, so
the postings' B-tree serves df counts and BM25 scoring inside the policies.

Each migration runs in one transaction together with the row recording it in
``kenning_migrations``, under an advisory lock, so several workers starting at
once apply each migration exactly once and never see a half-built schema.

Row-level security (seed 000's second wall; the graph tables: see :func:`m003_graph`;
the directory, API keys and audit log: see :func:`m007_directory_rls`):
``memories``, ``postings`` and ``history`` are
readable and writable only through :func:`kenning_visible`, which compares each
row's organization and scope with the principal context the store sets per
transaction (``set_config(..., true)``, i.e. ``SET LOCAL``):

* ``kenning.org_id`` + ``kenning.kinds``: every scope of these kinds in the org
  (an admin's wildcard);
* ``kenning.scopes``: explicit ``org|scope_key`` pairs.

``FORCE ROW LEVEL SECURITY`` makes the policies bind the table owner too; the
store refuses to run as a superuser or a ``BYPASSRLS`` role (those skip
policies), so no connection kenning makes can read past them.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from ...errors import ConfigError

__all__ = ["MIGRATIONS", "BULK_INDEXES", "apply_migrations", "ensure_extension"]

Migration = Callable[[psycopg.Connection, int], None]

#: Any constant works; it only has to be the same for every kenning process.
_MIGRATION_LOCK = 0x6B656E6E


def m001_core(conn: psycopg.Connection, dim: int) -> None:
    """Memories (with vector and tsvector), postings, history, embedding cache, metadata, RLS."""
    conn.execute(
        """
        CREATE TABLE kenning_meta (key text PRIMARY KEY, value text NOT NULL);

        -- array_to_string is STABLE in general but immutable for text[]; generated
        -- columns need an IMMUTABLE expression.
        CREATE FUNCTION kenning_join(text[]) RETURNS text
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT array_to_string($1, ' ') $$;
        """
    )
    conn.execute(
        f"""
        CREATE TABLE memories (
            pk bigserial PRIMARY KEY,
            id text NOT NULL UNIQUE,
            org_id text NOT NULL,
            scope_kind text NOT NULL,
            scope_owner text NOT NULL,
            scope_user text,
            scope_key text NOT NULL,
            content text NOT NULL,
            key text,
            memory_type text NOT NULL,
            importance integer NOT NULL,
            confidence double precision NOT NULL,
            status text NOT NULL,
            tags text[] NOT NULL DEFAULT '{{}}',
            metadata jsonb NOT NULL DEFAULT '{{}}',
            source text NOT NULL,
            source_channel_id text,
            agent_id text,
            session_id text,
            episode_id text,
            created_by text,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            event_at timestamptz,
            valid_from timestamptz,
            valid_to timestamptz,
            strength double precision NOT NULL,
            decay_rate double precision NOT NULL,
            access_count integer NOT NULL DEFAULT 0,
            reinforcement_count integer NOT NULL DEFAULT 0,
            last_accessed timestamptz,
            sector_id text,
            supersedes text,
            superseded_by text,
            version integer NOT NULL DEFAULT 1,
            content_hash text NOT NULL,
            model_id text NOT NULL,
            embedding vector({int(dim)}) NOT NULL,
            doc_len integer NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (
                to_tsvector('english'::regconfig,
                            content || ' ' || coalesce(key, '') || ' ' || kenning_join(tags))
            ) STORED
        )
        """
    )
    conn.execute(
        """
        CREATE UNIQUE INDEX memories_key ON memories (org_id, scope_key, key)
            WHERE key IS NOT NULL AND status <> 'superseded';
        CREATE INDEX memories_scope ON memories (org_id, scope_key, status, created_at);
        CREATE INDEX memories_kind ON memories (org_id, scope_kind, status, created_at);
        CREATE INDEX memories_org_created ON memories (org_id, created_at, id);
        CREATE INDEX memories_session ON memories (session_id) WHERE session_id IS NOT NULL;
        CREATE INDEX memories_channel ON memories (source_channel_id)
            WHERE source_channel_id IS NOT NULL;
        CREATE INDEX memories_hash ON memories (content_hash);

        -- The inverted index of the keyword search, derived from memories.tsv in the
        -- same transaction as the memory; scope and status repeated so the policy
        -- and the filters read the index alone.
        -- No foreign key: a per-row check would slow bulk loads; the store deletes a
        -- memory's postings in the transaction that deletes the memory.
        CREATE TABLE postings (
            pk bigint NOT NULL,
            lexeme text NOT NULL,
            org_id text NOT NULL,
            scope_kind text NOT NULL,
            scope_key text NOT NULL,
            status text NOT NULL,
            tf integer NOT NULL,
            doc_len integer NOT NULL,
            PRIMARY KEY (pk, lexeme)
        );

        CREATE TABLE history (
            seq bigserial PRIMARY KEY,
            memory_id text NOT NULL,
            org_id text NOT NULL,
            scope_kind text NOT NULL,
            scope_key text NOT NULL,
            op text NOT NULL,
            actor text,
            at timestamptz NOT NULL,
            version integer,
            content text,
            changes jsonb NOT NULL DEFAULT '{}'
        );
        CREATE INDEX history_memory ON history (memory_id, seq);
        CREATE INDEX history_scope ON history (org_id, scope_key, seq);

        -- Tenant ids only (no memory data): what a whole-store copy iterates over.
        CREATE TABLE organizations (org_id text PRIMARY KEY);

        -- Content-addressed: a hash and a vector, no text and no tenant, so it needs
        -- no row-level security and serves every organization.
        CREATE TABLE embedding_cache (
            model_id text NOT NULL,
            content_hash text NOT NULL,
            embedding vector NOT NULL,
            PRIMARY KEY (model_id, content_hash)
        );

        CREATE FUNCTION kenning_visible(org text, kind text, skey text) RETURNS boolean
            LANGUAGE sql STABLE PARALLEL SAFE AS $$
            SELECT (org = current_setting('kenning.org_id', true)
                    AND kind = ANY (string_to_array(current_setting('kenning.kinds', true), ',')))
                OR (org || '|' || skey)
                    = ANY (string_to_array(current_setting('kenning.scopes', true), ','))
        $$;

        ALTER TABLE memories ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memories FORCE ROW LEVEL SECURITY;
        CREATE POLICY memories_scoped ON memories
            USING (kenning_visible(org_id, scope_kind, scope_key))
            WITH CHECK (kenning_visible(org_id, scope_kind, scope_key));
        ALTER TABLE postings ENABLE ROW LEVEL SECURITY;
        ALTER TABLE postings FORCE ROW LEVEL SECURITY;
        CREATE POLICY postings_scoped ON postings
            USING (kenning_visible(org_id, scope_kind, scope_key))
            WITH CHECK (kenning_visible(org_id, scope_kind, scope_key));
        ALTER TABLE history ENABLE ROW LEVEL SECURITY;
        ALTER TABLE history FORCE ROW LEVEL SECURITY;
        CREATE POLICY history_scoped ON history
            USING (kenning_visible(org_id, scope_kind, scope_key))
            WITH CHECK (kenning_visible(org_id, scope_kind, scope_key));
        """
    )


#: Indexes that are cheaper to build once than to grow row by row; dropped and
#: rebuilt by :meth:`PostgresStore.bulk_load` (name, CREATE statement).
BULK_INDEXES = (
    (
        "memories_embedding",
        "CREATE INDEX IF NOT EXISTS memories_embedding ON memories "
        "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)",
    ),
    (
        "postings_lookup",
        "CREATE INDEX IF NOT EXISTS postings_lookup ON postings (org_id, lexeme) "
        "INCLUDE (pk, scope_kind, scope_key, status, tf, doc_len)",
    ),
)


def m002_search_indexes(conn: psycopg.Connection, dim: int) -> None:
    """The cosine HNSW index on embeddings and the postings' lookup index."""
    for _, create in BULK_INDEXES:
        conn.execute(create)


def m003_graph(conn: psycopg.Connection, dim: int) -> None:
    """The memory graph: entities (+ aliases), mentions and links, with their policies.

    ``mentions`` and ``links`` repeat their memories' organization and scope,
    and composite foreign keys onto ``memories (id, org_id, scope_kind,
    scope_key)`` make that copy exact: a link's two endpoints are both in the
    link's own scope, so the policy ``kenning_visible(link's scope)`` holds
    exactly when both endpoint memories are visible. Deleting a memory
    cascades to its mentions and links.

    An entity is visible only through a visible mention (an ``EXISTS`` over
    ``mentions``, whose own policy applies inside it); an alias only through a
    visible entity. Entity ids derive from (org, kind, norm), so a writer adds
    a mention without ever reading the entity. Entities and aliases are
    inserted under any context of their organization; deleted only under an
    organization-wide context (the one the store's deletes run under, which
    sees every entity of the org, so also one whose last mention just went).
    """
    conn.execute(
        """
        ALTER TABLE memories ADD CONSTRAINT memories_scoped_id
            UNIQUE (id, org_id, scope_kind, scope_key);
        CREATE INDEX memories_episode ON memories (episode_id) WHERE episode_id IS NOT NULL;

        CREATE TABLE entities (
            id text PRIMARY KEY,
            org_id text NOT NULL,
            kind text NOT NULL,
            norm text NOT NULL,
            label text NOT NULL,
            entity_type text,
            created_at timestamptz NOT NULL,
            UNIQUE (org_id, kind, norm)
        );
        CREATE INDEX entities_norm ON entities (org_id, norm);
        CREATE TABLE entity_aliases (
            org_id text NOT NULL,
            alias_norm text NOT NULL,
            entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
            PRIMARY KEY (org_id, alias_norm, entity_id)
        );
        CREATE INDEX entity_aliases_entity ON entity_aliases (entity_id);
        CREATE TABLE mentions (
            memory_id text NOT NULL,
            entity_id text NOT NULL REFERENCES entities (id),
            org_id text NOT NULL,
            scope_kind text NOT NULL,
            scope_key text NOT NULL,
            status text NOT NULL,
            created_at timestamptz NOT NULL,
            label text NOT NULL,
            entity_type text,
            PRIMARY KEY (memory_id, entity_id),
            FOREIGN KEY (memory_id, org_id, scope_kind, scope_key)
                REFERENCES memories (id, org_id, scope_kind, scope_key) ON DELETE CASCADE
        );
        CREATE INDEX mentions_entity ON mentions (entity_id, created_at DESC, memory_id DESC);
        CREATE INDEX mentions_scope ON mentions (org_id, scope_key);
        CREATE TABLE links (
            src text NOT NULL,
            dst text NOT NULL,
            relation text NOT NULL,
            weight double precision NOT NULL,
            org_id text NOT NULL,
            scope_kind text NOT NULL,
            scope_key text NOT NULL,
            origin text NOT NULL,
            created_at timestamptz NOT NULL,
            PRIMARY KEY (src, dst, relation),
            CHECK (src <> dst),
            FOREIGN KEY (src, org_id, scope_kind, scope_key)
                REFERENCES memories (id, org_id, scope_kind, scope_key) ON DELETE CASCADE,
            FOREIGN KEY (dst, org_id, scope_kind, scope_key)
                REFERENCES memories (id, org_id, scope_kind, scope_key) ON DELETE CASCADE
        );
        CREATE INDEX links_dst ON links (dst);
        CREATE INDEX links_scope ON links (org_id, scope_key);

        -- Any context of this organization (a reader's, or a write's org|scope pairs).
        CREATE FUNCTION kenning_in_org(org text) RETURNS boolean
            LANGUAGE sql STABLE PARALLEL SAFE AS $$
            SELECT org = current_setting('kenning.org_id', true)
                OR org = ANY (SELECT split_part(p, '|', 1) FROM unnest(
                    string_to_array(current_setting('kenning.scopes', true), ',')) AS p)
        $$;
        -- The organization-wide context (every scope kind of the org).
        CREATE FUNCTION kenning_org_wide(org text) RETURNS boolean
            LANGUAGE sql STABLE PARALLEL SAFE AS $$
            SELECT org = current_setting('kenning.org_id', true)
                AND string_to_array(current_setting('kenning.kinds', true), ',')
                    @> ARRAY['org', 'persona', 'persona_user', 'team', 'user']
        $$;

        ALTER TABLE mentions ENABLE ROW LEVEL SECURITY;
        ALTER TABLE mentions FORCE ROW LEVEL SECURITY;
        CREATE POLICY mentions_scoped ON mentions
            USING (kenning_visible(org_id, scope_kind, scope_key))
            WITH CHECK (kenning_visible(org_id, scope_kind, scope_key));
        ALTER TABLE links ENABLE ROW LEVEL SECURITY;
        ALTER TABLE links FORCE ROW LEVEL SECURITY;
        CREATE POLICY links_scoped ON links
            USING (kenning_visible(org_id, scope_kind, scope_key))
            WITH CHECK (kenning_visible(org_id, scope_kind, scope_key));

        ALTER TABLE entities ENABLE ROW LEVEL SECURITY;
        ALTER TABLE entities FORCE ROW LEVEL SECURITY;
        CREATE POLICY entities_read ON entities FOR SELECT
            USING (kenning_org_wide(org_id)
                   OR EXISTS (SELECT 1 FROM mentions x WHERE x.entity_id = entities.id));
        CREATE POLICY entities_add ON entities FOR INSERT WITH CHECK (kenning_in_org(org_id));
        CREATE POLICY entities_drop ON entities FOR DELETE USING (kenning_org_wide(org_id));

        ALTER TABLE entity_aliases ENABLE ROW LEVEL SECURITY;
        ALTER TABLE entity_aliases FORCE ROW LEVEL SECURITY;
        CREATE POLICY aliases_read ON entity_aliases FOR SELECT
            USING (EXISTS (SELECT 1 FROM entities e WHERE e.id = entity_aliases.entity_id));
        CREATE POLICY aliases_add ON entity_aliases FOR INSERT
            WITH CHECK (kenning_in_org(org_id) AND EXISTS (
                SELECT 1 FROM entities e WHERE e.id = entity_aliases.entity_id));
        CREATE POLICY aliases_drop ON entity_aliases FOR DELETE USING (kenning_org_wide(org_id));
        """
    )


def m004_said_at(conn: psycopg.Connection, dim: int) -> None:
    """An index on when a memory happened (event time, else creation), so a recall
    for "last May" finds that window's memories without reading every row."""
    conn.execute(
        "CREATE INDEX memories_said_at ON memories (org_id, (COALESCE(event_at, created_at)))"
    )


def m005_lifecycle(conn: psycopg.Connection, dim: int) -> None:
    """The access log (seed 003), sectors per scope, and retention/capacity/review
    policies. The access log and sectors are scoped rows under the same wall as
    memories; policies are organization settings (any context of the org reads
    them; writes need the organization-wide context)."""
    conn.execute(
        """
        CREATE TABLE access_log (
            seq bigserial PRIMARY KEY,
            memory_id text NOT NULL,
            org_id text NOT NULL,
            scope_kind text NOT NULL,
            scope_key text NOT NULL,
            access_type text NOT NULL,
            query_context text,
            strength_before double precision NOT NULL,
            strength_after double precision NOT NULL,
            at timestamptz NOT NULL
        );
        CREATE INDEX access_log_memory ON access_log (memory_id, seq);
        CREATE INDEX access_log_time ON access_log (org_id, at);
        CREATE TABLE sectors (
            id text PRIMARY KEY,
            org_id text NOT NULL,
            scope_kind text NOT NULL,
            scope_key text NOT NULL,
            owner_id text NOT NULL,
            user_id text,
            name text NOT NULL,
            parent_id text REFERENCES sectors (id),
            decay_multiplier double precision NOT NULL,
            topics text[] NOT NULL DEFAULT '{}',
            centroid bytea,
            max_size integer NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL
        );
        CREATE INDEX sectors_scope ON sectors (org_id, scope_key);
        CREATE INDEX memories_sector ON memories (sector_id, status) WHERE sector_id IS NOT NULL;
        CREATE TABLE policies (
            org_id text NOT NULL,
            target text NOT NULL,
            memory_type text NOT NULL,
            retention_days double precision,
            capacity integer,
            review boolean NOT NULL DEFAULT false,
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (org_id, target, memory_type)
        );

        ALTER TABLE access_log ENABLE ROW LEVEL SECURITY;
        ALTER TABLE access_log FORCE ROW LEVEL SECURITY;
        CREATE POLICY access_log_scoped ON access_log
            USING (kenning_visible(org_id, scope_kind, scope_key))
            WITH CHECK (kenning_visible(org_id, scope_kind, scope_key));
        ALTER TABLE sectors ENABLE ROW LEVEL SECURITY;
        ALTER TABLE sectors FORCE ROW LEVEL SECURITY;
        CREATE POLICY sectors_scoped ON sectors
            USING (kenning_visible(org_id, scope_kind, scope_key))
            WITH CHECK (kenning_visible(org_id, scope_kind, scope_key));
        ALTER TABLE policies ENABLE ROW LEVEL SECURITY;
        ALTER TABLE policies FORCE ROW LEVEL SECURITY;
        CREATE POLICY policies_read ON policies FOR SELECT USING (kenning_in_org(org_id));
        CREATE POLICY policies_write ON policies FOR ALL
            USING (kenning_org_wide(org_id)) WITH CHECK (kenning_org_wide(org_id));
        """
    )


def m006_directory(conn: psycopg.Connection, dim: int) -> None:
    """The directory: organizations, users, teams and personas as JSON documents,
    API keys (only the secret's hash), and the append-only audit log. Their
    row-level security comes in :func:`m007_directory_rls`."""
    conn.execute(
        """
        CREATE TABLE directory (
            org_id text NOT NULL,
            kind text NOT NULL,
            id text NOT NULL,
            doc jsonb NOT NULL DEFAULT '{}',
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (org_id, kind, id)
        );
        CREATE TABLE api_keys (
            id text PRIMARY KEY,
            org_id text NOT NULL,
            user_id text NOT NULL,
            name text NOT NULL,
            secret_hash text NOT NULL,
            persona text,
            created_at timestamptz NOT NULL,
            created_by text NOT NULL,
            revoked_at timestamptz
        );
        CREATE INDEX api_keys_user ON api_keys (org_id, user_id);
        CREATE TABLE audit_log (
            seq bigserial PRIMARY KEY,
            org_id text NOT NULL,
            at timestamptz NOT NULL,
            actor text NOT NULL,
            action text NOT NULL,
            target text,
            outcome text NOT NULL,
            detail jsonb NOT NULL DEFAULT '{}',
            request_id text
        );
        CREATE INDEX audit_log_org ON audit_log (org_id, seq DESC);
        """
    )


def m007_directory_rls(conn: psycopg.Connection, dim: int) -> None:
    """Row-level security on the directory, API keys and audit log: each row is
    readable and writable only under its organization's organization-wide
    context (``kenning_org_wide``), the one the store's directory calls run in.

    Two paths cross organizations, each as narrow as the policies allow:

    * authentication looks a key up before its organization is known: an API
      key row is also readable (never writable) in a transaction that names
      that one key's public id in ``kenning.key_id``; every other context
      clears it, and the secret is still checked against the stored hash;
    * the list of organizations reads ``directory_orgs``, tenant ids only and
      no row-level security (like ``organizations`` for memories); reading any
      of an organization's rows still needs its context.
    """
    conn.execute(
        """
        -- Tenant ids only (no directory data): the organizations the directory knows.
        CREATE TABLE directory_orgs (org_id text PRIMARY KEY);
        INSERT INTO directory_orgs (org_id)
            SELECT org_id FROM directory UNION SELECT org_id FROM api_keys
            UNION SELECT org_id FROM audit_log;

        ALTER TABLE directory ENABLE ROW LEVEL SECURITY;
        ALTER TABLE directory FORCE ROW LEVEL SECURITY;
        CREATE POLICY directory_org ON directory
            USING (kenning_org_wide(org_id)) WITH CHECK (kenning_org_wide(org_id));

        ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
        ALTER TABLE api_keys FORCE ROW LEVEL SECURITY;
        CREATE POLICY api_keys_org ON api_keys
            USING (kenning_org_wide(org_id)) WITH CHECK (kenning_org_wide(org_id));
        -- Permissive policies combine with OR: this one only widens SELECT, by one key.
        CREATE POLICY api_keys_lookup ON api_keys FOR SELECT
            USING (id = current_setting('kenning.key_id', true));

        ALTER TABLE audit_log ENABLE ROW LEVEL SECURITY;
        ALTER TABLE audit_log FORCE ROW LEVEL SECURITY;
        CREATE POLICY audit_log_org ON audit_log
            USING (kenning_org_wide(org_id)) WITH CHECK (kenning_org_wide(org_id));
        """
    )


def m008_org_routes(conn: psycopg.Connection, dim: int) -> None:
    """The routing table of organizations spread over several databases
    (:mod:`kenning.stores.postgres.routes`): per organization the database that
    holds its memories (NULL: this one) and whether it is moving; a version
    number in ``kenning_meta`` that every change bumps. Tenant ids and URLs
    only, no memory data, so no row-level security."""
    conn.execute(
        """
        CREATE TABLE org_routes (
            org_id text PRIMARY KEY,
            database_url text,
            state text NOT NULL CHECK (state IN ('active', 'moving')),
            target_url text,
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        INSERT INTO kenning_meta (key, value) VALUES ('org_routes_version', '0')
            ON CONFLICT (key) DO NOTHING;
        """
    )


MIGRATIONS: list[tuple[str, Migration]] = [
    ("001_core", m001_core),
    ("002_search_indexes", m002_search_indexes),
    ("003_graph", m003_graph),
    ("004_said_at", m004_said_at),
    ("005_lifecycle", m005_lifecycle),
    ("006_directory", m006_directory),
    ("007_directory_rls", m007_directory_rls),
    ("008_org_routes", m008_org_routes),
]


def ensure_extension(conn: psycopg.Connection) -> None:
    """Create pgvector if missing; a clear error when the role may not."""
    found = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
    if found is not None:
        return
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        raise ConfigError(
            "the pgvector extension is missing and this role may not create it; as a "
            "superuser run: CREATE EXTENSION vector;  (in this database, or in template1)"
        ) from exc


def apply_migrations(conn: psycopg.Connection, dim: int) -> list[str]:
    """Apply every pending migration, each in its own locked transaction."""
    applied: list[str] = []
    for name, migration in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS kenning_migrations "
                "(name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = conn.execute(
                "SELECT 1 FROM kenning_migrations WHERE name = %s", (name,)
            ).fetchone()
            if done is None:
                migration(conn, dim)
                conn.execute("INSERT INTO kenning_migrations (name) VALUES (%s)", (name,))
                applied.append(name)
    return applied

-- mira schema v1. All times are unix milliseconds (INTEGER). Ids are UUID strings.

CREATE TABLE verbatims (
    seq          INTEGER PRIMARY KEY,          -- stable rowid, used by the FTS index
    id           TEXT    NOT NULL UNIQUE,
    wing         TEXT    NOT NULL,
    room         TEXT    NOT NULL,
    memory_type  TEXT    NOT NULL,
    content      TEXT    NOT NULL,
    content_hash TEXT    NOT NULL,
    token_count  INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    stored_at    INTEGER NOT NULL,
    session_id   TEXT,
    metadata     TEXT    NOT NULL DEFAULT '{}',
    archived_at  INTEGER,
    superseded_by TEXT REFERENCES verbatims(id) ON DELETE SET NULL
) STRICT;
CREATE INDEX idx_verbatims_wing_room ON verbatims(wing, room);
CREATE INDEX idx_verbatims_wing_created ON verbatims(wing, created_at);
CREATE INDEX idx_verbatims_created ON verbatims(created_at);
CREATE INDEX idx_verbatims_hash ON verbatims(wing, content_hash);

CREATE TABLE fingerprints (
    memory_id   TEXT    PRIMARY KEY REFERENCES verbatims(id) ON DELETE CASCADE,
    data        TEXT    NOT NULL,             -- canonical JSON of the fingerprint
    fact_count  INTEGER NOT NULL,
    token_count INTEGER NOT NULL              -- cl100k tokens of the rendered fingerprint
) STRICT;

CREATE TABLE embeddings (
    memory_id  TEXT    PRIMARY KEY REFERENCES verbatims(id) ON DELETE CASCADE,
    model      TEXT    NOT NULL,
    dim        INTEGER NOT NULL,
    vector     BLOB    NOT NULL               -- little-endian f32 × dim, L2-normalised
) STRICT;

CREATE TABLE tags (
    memory_id TEXT NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    tag       TEXT NOT NULL,
    kind      TEXT NOT NULL,                  -- entity | subject | keyword
    PRIMARY KEY (memory_id, tag)
) STRICT;
CREATE INDEX idx_tags_tag ON tags(tag);

CREATE TABLE causal_edges (
    from_id     TEXT    NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    to_id       TEXT    NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    relation    TEXT    NOT NULL,
    confidence  REAL    NOT NULL,
    detected_at INTEGER NOT NULL,
    PRIMARY KEY (from_id, to_id, relation)
) STRICT;
CREATE INDEX idx_edges_to ON causal_edges(to_id);

CREATE TABLE overlap_cache (
    id_a        TEXT NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    id_b        TEXT NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    similarity  REAL NOT NULL,
    computed_at INTEGER NOT NULL,
    PRIMARY KEY (id_a, id_b)
) STRICT;
CREATE INDEX idx_overlap_computed ON overlap_cache(computed_at);

CREATE TABLE webhook_dead_letters (
    id          TEXT    PRIMARY KEY,
    endpoint    TEXT    NOT NULL,
    event_type  TEXT    NOT NULL,
    payload     TEXT    NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT,
    failed_at   INTEGER NOT NULL
) STRICT;

-- Lexical index over the verbatim text, kept in sync by triggers.
CREATE VIRTUAL TABLE verbatims_fts USING fts5(
    content, content='verbatims', content_rowid='seq', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER verbatims_fts_insert AFTER INSERT ON verbatims BEGIN
    INSERT INTO verbatims_fts(rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER verbatims_fts_delete AFTER DELETE ON verbatims BEGIN
    INSERT INTO verbatims_fts(verbatims_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER verbatims_fts_update AFTER UPDATE OF content ON verbatims BEGIN
    INSERT INTO verbatims_fts(verbatims_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO verbatims_fts(rowid, content) VALUES (new.seq, new.content);
END;

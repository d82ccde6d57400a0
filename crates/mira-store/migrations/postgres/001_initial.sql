-- mira on PostgreSQL (>= 15, with pgvector >= 0.8): the tables and meaning of the SQLite schema
-- (migrations/sqlite/001-005). Times are unix milliseconds (BIGINT), ids UUIDs, embeddings
-- pgvector's vector(384), the lexical index a tsvector of the content and the day it happened.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE verbatims (
    seq           BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- stable row key
    id            UUID    NOT NULL UNIQUE,
    wing          TEXT    NOT NULL,
    room          TEXT    NOT NULL,
    memory_type   TEXT    NOT NULL,
    content       TEXT    NOT NULL,
    content_hash  TEXT    NOT NULL,
    token_count   BIGINT  NOT NULL,
    created_at    BIGINT  NOT NULL,
    stored_at     BIGINT  NOT NULL,
    session_id    TEXT,
    metadata      TEXT    NOT NULL DEFAULT '{}',
    archived_at   BIGINT,
    superseded_by UUID    REFERENCES verbatims(id) ON DELETE SET NULL,
    -- Token cost of each render mode's section for render format `cost_version`.
    cost_header      BIGINT,
    cost_fingerprint BIGINT,
    cost_verbatim    BIGINT,
    cost_version     BIGINT,
    pinned        BOOLEAN NOT NULL DEFAULT false,
    -- Full-text search over the content and the day it happened ("8 May 2023"), written with the row.
    search        TSVECTOR NOT NULL
);
CREATE INDEX idx_verbatims_wing_room ON verbatims(wing, room);
CREATE INDEX idx_verbatims_wing_created ON verbatims(wing, created_at);
CREATE INDEX idx_verbatims_created ON verbatims(created_at);
CREATE INDEX idx_verbatims_hash ON verbatims(wing, content_hash);
CREATE INDEX idx_verbatims_cost_version ON verbatims(cost_version);
CREATE INDEX idx_verbatims_superseded_by ON verbatims(superseded_by);
CREATE INDEX idx_verbatims_search ON verbatims USING gin (search);

CREATE TABLE fingerprints (
    memory_id   UUID    PRIMARY KEY REFERENCES verbatims(id) ON DELETE CASCADE,
    data        TEXT    NOT NULL,             -- canonical JSON of the fingerprint
    fact_count  BIGINT  NOT NULL,
    token_count BIGINT  NOT NULL              -- cl100k tokens of the rendered fingerprint
);

CREATE TABLE embeddings (
    memory_id  UUID    PRIMARY KEY REFERENCES verbatims(id) ON DELETE CASCADE,
    model      TEXT    NOT NULL,
    dim        INTEGER NOT NULL,
    vector     vector(384) NOT NULL           -- L2-normalised
);
-- Dense search: HNSW over cosine distance (recall filters by wing, room and archive state in
-- the same query; pgvector's iterative scan keeps walking the graph until enough rows pass).
CREATE INDEX idx_embeddings_hnsw ON embeddings USING hnsw (vector vector_cosine_ops)
    WITH (m = 16, ef_construction = 64);

CREATE TABLE tags (
    memory_id UUID    NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    tag       TEXT    NOT NULL,
    kind      TEXT    NOT NULL,               -- entity | subject | keyword
    position  INTEGER NOT NULL,               -- order of extraction
    PRIMARY KEY (memory_id, tag)
);
CREATE INDEX idx_tags_tag ON tags(tag);

CREATE TABLE causal_edges (
    from_id     UUID    NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    to_id       UUID    NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    relation    TEXT    NOT NULL,
    confidence  DOUBLE PRECISION NOT NULL,
    detected_at BIGINT  NOT NULL,
    PRIMARY KEY (from_id, to_id, relation)
);
CREATE INDEX idx_edges_to ON causal_edges(to_id);

CREATE TABLE overlap_cache (
    id_a        UUID    NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    id_b        UUID    NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    similarity  DOUBLE PRECISION NOT NULL,
    computed_at BIGINT  NOT NULL,
    PRIMARY KEY (id_a, id_b)
);
CREATE INDEX idx_overlap_computed ON overlap_cache(computed_at);
CREATE INDEX idx_overlap_b ON overlap_cache(id_b);

CREATE TABLE webhook_dead_letters (
    id          TEXT    PRIMARY KEY,
    endpoint    TEXT    NOT NULL,
    event_type  TEXT    NOT NULL,
    payload     TEXT    NOT NULL,
    attempts    BIGINT  NOT NULL DEFAULT 0,
    last_error  TEXT,
    failed_at   BIGINT  NOT NULL
);

-- What each memory asserts (subject, attribute, value), for supersession by slot.
CREATE TABLE slots (
    memory_id UUID    NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    subject   TEXT    NOT NULL,
    attribute TEXT    NOT NULL,
    value     TEXT    NOT NULL,
    negated   BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX idx_slots_attribute ON slots(attribute, subject);
CREATE INDEX idx_slots_memory ON slots(memory_id);

-- The change feed every server's in-memory catalog follows: each change of a memory, its
-- embedding or its fingerprint appends the row's seq with the id of the writing transaction.
-- Ids are taken before commit, so a reader cannot trust their order: it keeps a watermark of
-- transaction ids instead (every transaction below it had ended when it last read).
CREATE TABLE change_log (
    id   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    seq  BIGINT NOT NULL,
    txid BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint)
);
CREATE INDEX idx_change_log_txid ON change_log(txid);
-- The highest transaction id whose entries were trimmed: a reader whose watermark is not above
-- it may have missed some, and reloads.
CREATE TABLE change_log_trimmed (
    only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    txid     BIGINT  NOT NULL
);
INSERT INTO change_log_trimmed (txid) VALUES (0);

CREATE FUNCTION mira_log_verbatim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO change_log (seq) VALUES (OLD.seq);
        RETURN OLD;
    END IF;
    INSERT INTO change_log (seq) VALUES (NEW.seq);
    RETURN NEW;
END $$;
CREATE TRIGGER change_log_verbatims AFTER INSERT OR UPDATE OR DELETE ON verbatims
    FOR EACH ROW EXECUTE FUNCTION mira_log_verbatim();

CREATE FUNCTION mira_log_derived() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO change_log (seq) SELECT seq FROM verbatims WHERE id = OLD.memory_id;
        RETURN OLD;
    END IF;
    INSERT INTO change_log (seq) SELECT seq FROM verbatims WHERE id = NEW.memory_id;
    RETURN NEW;
END $$;
CREATE TRIGGER change_log_embeddings AFTER INSERT OR UPDATE OR DELETE ON embeddings
    FOR EACH ROW EXECUTE FUNCTION mira_log_derived();
CREATE TRIGGER change_log_fingerprints AFTER UPDATE ON fingerprints
    FOR EACH ROW EXECUTE FUNCTION mira_log_derived();

-- The log keeps its last 65,536 entries.
CREATE FUNCTION mira_trim_change_log() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    gone BIGINT;
BEGIN
    WITH deleted AS (DELETE FROM change_log WHERE id <= NEW.id - 65536 RETURNING txid)
    SELECT max(txid) INTO gone FROM deleted;
    IF gone IS NOT NULL THEN
        UPDATE change_log_trimmed SET txid = GREATEST(txid, gone);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER change_log_trim AFTER INSERT ON change_log
    FOR EACH ROW WHEN (NEW.id % 4096 = 0) EXECUTE FUNCTION mira_trim_change_log();

-- Where a memory came from: 'stored' (a store by an agent or a person: mira_store, the CLI,
-- the browser, an import) or 'captured' (kept by a client hook from a session transcript,
-- `mira hook`). Every memory written before this migration was stored. (SQLite: 007.)
ALTER TABLE verbatims ADD COLUMN source TEXT NOT NULL DEFAULT 'stored';
CREATE INDEX idx_verbatims_source ON verbatims(source, wing, stored_at);

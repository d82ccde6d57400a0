-- Recall reads an in-memory catalog of the live memories. This log tells every process which
-- rows changed since it last looked, so that keeping the catalog in step costs O(changes) and
-- never a scan of the store: every insert, update and delete of a memory, its embedding or its
-- fingerprint appends the row's seq, in the same transaction as the change.
CREATE TABLE change_log (
    id  INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL
) STRICT;

CREATE TRIGGER change_log_verbatims_insert AFTER INSERT ON verbatims BEGIN
    INSERT INTO change_log (seq) VALUES (new.seq);
END;
CREATE TRIGGER change_log_verbatims_update AFTER UPDATE ON verbatims BEGIN
    INSERT INTO change_log (seq) VALUES (new.seq);
END;
CREATE TRIGGER change_log_verbatims_delete AFTER DELETE ON verbatims BEGIN
    INSERT INTO change_log (seq) VALUES (old.seq);
END;
CREATE TRIGGER change_log_embeddings_insert AFTER INSERT ON embeddings BEGIN
    INSERT INTO change_log (seq) SELECT seq FROM verbatims WHERE id = new.memory_id;
END;
CREATE TRIGGER change_log_embeddings_update AFTER UPDATE ON embeddings BEGIN
    INSERT INTO change_log (seq) SELECT seq FROM verbatims WHERE id = new.memory_id;
END;
CREATE TRIGGER change_log_embeddings_delete AFTER DELETE ON embeddings BEGIN
    INSERT INTO change_log (seq) SELECT seq FROM verbatims WHERE id = old.memory_id;
END;
CREATE TRIGGER change_log_fingerprints_update AFTER UPDATE ON fingerprints BEGIN
    INSERT INTO change_log (seq) SELECT seq FROM verbatims WHERE id = new.memory_id;
END;

-- The log keeps its last 65,536 entries; a process further behind reloads its catalog.
CREATE TRIGGER change_log_trim AFTER INSERT ON change_log WHEN new.id % 4096 = 0 BEGIN
    DELETE FROM change_log WHERE id <= new.id - 65536;
END;

-- Token cost of each render mode's section, computed when the memory is stored (recall never
-- tokenizes), for the render format `cost_version`; rows of an older format are recomputed in
-- the background when a store is opened.
ALTER TABLE verbatims ADD COLUMN cost_header INTEGER;
ALTER TABLE verbatims ADD COLUMN cost_fingerprint INTEGER;
ALTER TABLE verbatims ADD COLUMN cost_verbatim INTEGER;
ALTER TABLE verbatims ADD COLUMN cost_version INTEGER;
CREATE INDEX idx_verbatims_cost_version ON verbatims(cost_version);

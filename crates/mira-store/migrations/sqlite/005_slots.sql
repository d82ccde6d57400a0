-- What each memory asserts (mira_core::slots): subject, attribute, value. A later memory of the
-- same wing asserting another value for the same subject and attribute supersedes it.
-- Derived from the content when a memory is written; memories written before this migration
-- have none.
CREATE TABLE slots (
    memory_id TEXT NOT NULL REFERENCES verbatims(id) ON DELETE CASCADE,
    subject   TEXT NOT NULL,
    attribute TEXT NOT NULL,
    value     TEXT NOT NULL,
    negated   INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX idx_slots_attribute ON slots(attribute, subject);
CREATE INDEX idx_slots_memory ON slots(memory_id);

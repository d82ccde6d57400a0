-- A pinned memory is shown in every recall of its wing, before anything else (within
-- `allocator.pinned_share` of the budget). Changing the flag is an update of the row, so the
-- change log (migration 003) tells every process.
ALTER TABLE verbatims ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;

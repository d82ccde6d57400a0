-- The lexical index also covers the day a memory happened ("8 May 2023"), so that queries
-- naming a date or a month find what happened then. The index becomes contentless (it only
-- ever returned rowids and BM25 scores): the day is computed from created_at by the triggers.
DROP TRIGGER verbatims_fts_insert;
DROP TRIGGER verbatims_fts_delete;
DROP TRIGGER verbatims_fts_update;
DROP TABLE verbatims_fts;

CREATE VIEW verbatims_day AS
SELECT seq, content,
       CAST(strftime('%d', created_at / 1000, 'unixepoch') AS INTEGER) || ' ' ||
       CASE strftime('%m', created_at / 1000, 'unixepoch')
           WHEN '01' THEN 'January' WHEN '02' THEN 'February' WHEN '03' THEN 'March'
           WHEN '04' THEN 'April' WHEN '05' THEN 'May' WHEN '06' THEN 'June'
           WHEN '07' THEN 'July' WHEN '08' THEN 'August' WHEN '09' THEN 'September'
           WHEN '10' THEN 'October' WHEN '11' THEN 'November' ELSE 'December' END || ' ' ||
       strftime('%Y', created_at / 1000, 'unixepoch') AS day
FROM verbatims;

CREATE VIRTUAL TABLE verbatims_fts USING fts5(
    content, day, content='', contentless_delete=1,
    tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO verbatims_fts(rowid, content, day) SELECT seq, content, day FROM verbatims_day;

CREATE TRIGGER verbatims_fts_insert AFTER INSERT ON verbatims BEGIN
    INSERT INTO verbatims_fts(rowid, content, day)
        SELECT seq, content, day FROM verbatims_day WHERE seq = new.seq;
END;
CREATE TRIGGER verbatims_fts_delete AFTER DELETE ON verbatims BEGIN
    DELETE FROM verbatims_fts WHERE rowid = old.seq;
END;
CREATE TRIGGER verbatims_fts_update AFTER UPDATE OF content, created_at ON verbatims BEGIN
    DELETE FROM verbatims_fts WHERE rowid = old.seq;
    INSERT INTO verbatims_fts(rowid, content, day)
        SELECT seq, content, day FROM verbatims_day WHERE seq = new.seq;
END;

-- The overlap cache (pairwise similarities for the reference's overlap penalty) has had no
-- reader since recall ranks by relevance: the table goes, its indexes with it. (SQLite: 008.)
DROP TABLE IF EXISTS overlap_cache;

-- The overlap cache (pairwise similarities for the reference's overlap penalty) has had no
-- reader since recall ranks by relevance: the table and its index go. (PostgreSQL: 004.)
DROP INDEX IF EXISTS idx_overlap_computed;
DROP TABLE IF EXISTS overlap_cache;

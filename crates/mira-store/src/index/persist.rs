//! The persisted HNSW: three files beside the database, written atomically, verified before use.

use super::{IndexError, IndexParams, Result};
use mira_core::memory::MemoryId;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Version of the layout of the three files; a meta of another version is not trusted.
pub(crate) const FORMAT_VERSION: u32 = 1;
/// The graph, in usearch's format.
pub(crate) const INDEX_FILE: &str = "hnsw.usearch";
/// The sorted `(seq, uuid, digest)` list of the entries the graph covers.
pub(crate) const KEYS_FILE: &str = "hnsw.keys";
/// The meta JSON, written last.
pub(crate) const META_FILE: &str = "hnsw.meta.json";
const KEYS_MAGIC: &[u8; 8] = b"MIRAKEY1";
const KEY_RECORD: usize = 32;

/// What `hnsw.meta.json` records.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Meta {
    pub format: u32,
    pub schema_version: i64,
    pub dim: usize,
    pub count: usize,
    pub metric: String,
    pub m: usize,
    pub ef_construction: usize,
    pub ef_search: usize,
    /// sha256 (hex) of the keys file: the checksum of the ids the graph covers.
    pub keys_sha256: String,
    pub keys_bytes: u64,
    pub index_sha256: String,
    pub index_bytes: u64,
    /// When the graph was last built from scratch (unix ms).
    pub built_at_ms: Option<i64>,
    pub saved_at_ms: i64,
    pub usearch_version: String,
}

/// A persisted graph whose files passed every check.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub meta: Meta,
    pub index: Vec<u8>,
    pub keys: Vec<(u64, MemoryId, u64)>,
}

/// What the files must agree with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Expect {
    pub schema_version: i64,
    pub dim: usize,
    pub params: IndexParams,
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Encodes sorted `(key, id, digest)` records.
pub(crate) fn encode_keys(keys: &[(u64, MemoryId, u64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + keys.len() * KEY_RECORD);
    out.extend_from_slice(KEYS_MAGIC);
    for (key, id, digest) in keys {
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(&digest.to_le_bytes());
    }
    out
}

fn decode_keys(bytes: &[u8]) -> Option<Vec<(u64, MemoryId, u64)>> {
    let body = bytes.strip_prefix(KEYS_MAGIC.as_slice())?;
    let records = body.chunks_exact(KEY_RECORD);
    if !records.remainder().is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(records.len());
    for rec in records {
        let key = u64::from_le_bytes(rec[0..8].try_into().ok()?);
        let id = MemoryId::from_slice(&rec[8..24]).ok()?;
        let digest = u64::from_le_bytes(rec[24..32].try_into().ok()?);
        out.push((key, id, digest));
    }
    // Sorted and without duplicates, as written.
    out.windows(2).all(|w| w[0].0 < w[1].0).then_some(out)
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> IndexError + '_ {
    move |source| IndexError::Io {
        path: path.to_path_buf(),
        source,
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `dir/name` atomically: a unique temp file, fsync, rename, fsync of the dir.
fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let target = dir.join(name);
    let tmp = dir.join(format!(
        ".{name}.tmp.{}.{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(&target)(e));
    }
    // Make the rename durable; not possible (nor needed) on every platform.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes the graph, its key list and the meta (last), each atomically.
pub(crate) fn save(dir: &Path, mut meta: Meta, index: &[u8], keys: &[u8]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    meta.index_sha256 = sha256_hex(index);
    meta.index_bytes = index.len() as u64;
    meta.keys_sha256 = sha256_hex(keys);
    meta.keys_bytes = keys.len() as u64;
    let json = serde_json::to_vec_pretty(&meta).map_err(|e| IndexError::Hnsw(e.to_string()))?;
    write_atomic(dir, INDEX_FILE, index)?;
    write_atomic(dir, KEYS_FILE, keys)?;
    write_atomic(dir, META_FILE, &json)
}

/// Reads and verifies the persisted files. `Err(reason)` says why they cannot be used (missing,
/// truncated, corrupt, stale format, other schema version, dimension or graph parameters).
pub(crate) fn load(dir: &Path, expect: &Expect) -> std::result::Result<Loaded, String> {
    let read = |name: &str| -> std::result::Result<Vec<u8>, String> {
        let p: PathBuf = dir.join(name);
        std::fs::read(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let meta_bytes = read(META_FILE)?;
    let meta: Meta =
        serde_json::from_slice(&meta_bytes).map_err(|e| format!("unreadable {META_FILE}: {e}"))?;
    if meta.format != FORMAT_VERSION {
        return Err(format!(
            "format {} (expected {FORMAT_VERSION})",
            meta.format
        ));
    }
    if meta.schema_version != expect.schema_version {
        return Err(format!(
            "schema version {} (database is at {})",
            meta.schema_version, expect.schema_version
        ));
    }
    if meta.dim != expect.dim || meta.metric != "ip" {
        return Err(format!(
            "{}-d {} vectors (expected {}-d ip)",
            meta.dim, meta.metric, expect.dim
        ));
    }
    if meta.m != expect.params.m || meta.ef_construction != expect.params.ef_construction {
        return Err(format!(
            "built with M {} ef_construction {} (configured: {} {})",
            meta.m, meta.ef_construction, expect.params.m, expect.params.ef_construction
        ));
    }
    let keys_bytes = read(KEYS_FILE)?;
    if keys_bytes.len() as u64 != meta.keys_bytes || sha256_hex(&keys_bytes) != meta.keys_sha256 {
        return Err(format!("{KEYS_FILE} does not match its checksum"));
    }
    let keys = decode_keys(&keys_bytes).ok_or_else(|| format!("{KEYS_FILE} is malformed"))?;
    if keys.len() != meta.count {
        return Err(format!(
            "{KEYS_FILE} lists {} entries, meta {}",
            keys.len(),
            meta.count
        ));
    }
    let index = read(INDEX_FILE)?;
    if index.len() as u64 != meta.index_bytes {
        return Err(format!(
            "{INDEX_FILE} is {} bytes, meta says {} (truncated?)",
            index.len(),
            meta.index_bytes
        ));
    }
    if sha256_hex(&index) != meta.index_sha256 {
        return Err(format!(
            "{INDEX_FILE} does not match its checksum (corrupt)"
        ));
    }
    Ok(Loaded { meta, index, keys })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_reject_garbage() {
        let keys = vec![(1, MemoryId::new_v4(), 7), (5, MemoryId::new_v4(), 9)];
        let bytes = encode_keys(&keys);
        assert_eq!(decode_keys(&bytes), Some(keys));
        assert_eq!(decode_keys(&bytes[..bytes.len() - 1]), None);
        assert_eq!(decode_keys(KEYS_MAGIC), Some(vec![]));
        assert_eq!(decode_keys(b"garbage!"), None);
        let unsorted = encode_keys(&[(5, MemoryId::new_v4(), 0), (1, MemoryId::new_v4(), 0)]);
        assert_eq!(decode_keys(&unsorted), None);
    }
}

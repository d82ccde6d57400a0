//! Embeddings as SQLite stores them: little-endian f32 bytes in a BLOB.

use crate::{Result, StoreError};

/// Encodes an embedding as little-endian f32 bytes (SQLite's BLOB).
pub fn encode_vector(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Decodes little-endian f32 bytes.
pub fn decode_vector(bytes: &[u8]) -> Result<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(StoreError::Corrupt(format!(
            "embedding blob of {} bytes",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

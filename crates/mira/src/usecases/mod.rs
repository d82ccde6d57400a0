//! The use cases, shared by the CLI and the MCP server.

pub mod access;
pub mod archive;
pub mod briefing;
pub mod capture;
pub mod causal;
pub mod clear;
pub mod edit;
pub mod embed_missing;
pub mod link;
pub mod load;
pub mod pin;
pub mod recall;
pub mod replay;
pub mod soul;
pub mod status;
pub mod store;
pub mod supersede;
pub mod timeline;
pub mod transfer;
pub mod validate;

/// Error of a use case, split by who must act: the caller (bad input, unknown id) or mira.
/// A message names tools and arguments as [`mira_core::message::Term`]s, which each surface words its own way.
#[derive(Debug, thiserror::Error)]
pub enum UseCaseError {
    /// The input is invalid; the message says how to fix it.
    #[error("{0}")]
    Invalid(mira_core::message::Message),
    /// The requested item does not exist; the message says where valid ids come from.
    #[error("{0}")]
    NotFound(mira_core::message::Message),
    /// The caller's token does not give the right; the message names the token and the wing.
    #[error("{0}")]
    Forbidden(mira_core::message::Message),
    /// mira failed (database, model).
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl From<mira_store::StoreError> for UseCaseError {
    fn from(e: mira_store::StoreError) -> Self {
        UseCaseError::Internal(e.into())
    }
}

/// Result of a use case.
pub type UseCaseResult<T> = Result<T, UseCaseError>;

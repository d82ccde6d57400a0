//! The integration tests of this crate, one binary: each module was a test file of its own.

mod allocator_props;
mod classification_table;
mod extraction_props;

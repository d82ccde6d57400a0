//! The command line: the arguments (`args`, with the reference implementation's forms rewritten
//! by `argv`), one dispatch (`dispatch::run`) and the commands' handlers, grouped by concern.

#[macro_use]
mod stores;
pub mod actions;
pub mod args;
pub mod argv;
pub mod dispatch;
mod input;
mod maintenance;
mod measure;
mod output;
mod serve;
mod soul;
mod transfer;

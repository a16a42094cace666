//! Operating an index: the functions behind the CLI's and `knowcode_inspect`'s operational
//! commands. Each command is one function here that both surfaces call; none of them writes
//! to stdout (the CLI prints what they return).

pub mod ask;
pub mod doctor;
pub mod eval;
pub mod export;
pub mod history;
pub mod install;
pub mod setup;
pub mod watch;
mod wheel;

//! Response profiles: the one home of "who gets source" and "which fields at which verbosity".
//! Summary-first by default; raw source only at verbosity ≥ standard or for the source-hungry
//! task types (`debug`, `review` — a floor that minimal cannot cancel); `search` and `trace`
//! never carry source; `semantic_search` always does.

use serde::{Deserialize, Serialize};

/// Defines one closed vocabulary of the contract: the enum, `ALL` in contract order,
/// `as_str` (the one home of each value's name; serde uses the same snake_case names) and
/// `parse`.
macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in the order the contract lists them.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// The value's name on every surface (MCP, REST, CLI, payloads).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The value named `text`, if any.
            pub fn parse(text: &str) -> Option<$name> {
                Self::ALL.into_iter().find(|v| v.as_str() == text)
            }
        }
    };
}

vocabulary! {
    /// How much an answer carries.
    Verbosity {
        Minimal => "minimal",
        Standard => "standard",
        Verbose => "verbose",
        Diagnostic => "diagnostic",
    }
}

vocabulary! {
    /// What an agent asks for (`auto`, the default, is the absence of one: see
    /// `serve::contract::TaskChoice`).
    TaskType {
        Explain => "explain",
        Debug => "debug",
        Extend => "extend",
        Review => "review",
        Locate => "locate",
        General => "general",
    }
}

vocabulary! {
    /// What `query` and `search` look in: the project (the default), the indexes of its
    /// dependencies (`index::deps`), or both.
    Scope {
        Project => "project",
        Dependencies => "dependencies",
        All => "all",
    }
}

vocabulary! {
    /// Which way `trace` walks call edges.
    Direction {
        /// Who calls the entity.
        Callers => "callers",
        /// What the entity calls.
        Callees => "callees",
    }
}

/// Task types that get raw source even at minimal verbosity. Exactly {debug, review}.
pub const SOURCE_HUNGRY: [TaskType; 2] = [TaskType::Debug, TaskType::Review];

/// The retrieval actions a profile is chosen for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Query,
    Context,
    Search,
    Trace,
    SemanticSearch,
}

/// The decision for one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseProfile {
    pub action: Action,
    pub verbosity: Verbosity,
    pub include_source: bool,
}

impl ResponseProfile {
    /// The profile of an answer to `action` for `task` at `verbosity`.
    pub fn new(action: Action, task: TaskType, verbosity: Verbosity) -> Self {
        let include_source = match action {
            Action::Search | Action::Trace => false,
            Action::SemanticSearch => true,
            Action::Query | Action::Context => {
                verbosity >= Verbosity::Standard || SOURCE_HUNGRY.contains(&task)
            }
        };
        ResponseProfile {
            action,
            verbosity,
            include_source,
        }
    }

    /// Docs in full (standard and up) or their first paragraph (minimal).
    pub fn full_docs(&self) -> bool {
        self.verbosity >= Verbosity::Standard
    }

    /// Fields beyond the minimal set: task type, mode, selected entities, truncation.
    pub fn standard_fields(&self) -> bool {
        self.verbosity >= Verbosity::Standard
    }

    /// Source at minimal verbosity (the source-hungry floor of a ranked answer) is an excerpt
    /// of the lines the question points at, not the whole body.
    pub fn source_excerpt(&self) -> bool {
        self.action == Action::Query && self.verbosity == Verbosity::Minimal && self.include_source
    }

    /// Ranking evidence and chunk provenance.
    pub fn evidence(&self) -> bool {
        self.verbosity >= Verbosity::Verbose
    }

    /// Echoes, per-leg weights, score components: for testing the retrieval system.
    pub fn diagnostics(&self) -> bool {
        self.verbosity >= Verbosity::Diagnostic
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_hungry_set_is_exactly_debug_and_review() {
        for task in TaskType::ALL {
            let minimal = ResponseProfile::new(Action::Query, task, Verbosity::Minimal);
            assert_eq!(
                minimal.include_source,
                matches!(task, TaskType::Debug | TaskType::Review),
                "{task:?}"
            );
        }
    }

    #[test]
    fn standard_and_up_always_carry_source_on_query_and_context() {
        for task in TaskType::ALL {
            for verbosity in [
                Verbosity::Standard,
                Verbosity::Verbose,
                Verbosity::Diagnostic,
            ] {
                assert!(ResponseProfile::new(Action::Query, task, verbosity).include_source);
                assert!(ResponseProfile::new(Action::Context, task, verbosity).include_source);
            }
        }
    }

    #[test]
    fn search_and_trace_never_carry_source_semantic_search_always_does() {
        for task in TaskType::ALL {
            for verbosity in Verbosity::ALL {
                assert!(!ResponseProfile::new(Action::Search, task, verbosity).include_source);
                assert!(!ResponseProfile::new(Action::Trace, task, verbosity).include_source);
                assert!(
                    ResponseProfile::new(Action::SemanticSearch, task, verbosity).include_source
                );
            }
        }
    }
}

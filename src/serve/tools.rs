//! The MCP tool surface as data: three tools, each with a required `action` enum and every
//! other argument optional in the schema (checked in code by [`Args`]). Schemas are paid on
//! every agent turn, so they are terse, carry no `null` unions, and forbid extra properties.

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::error::KnowcodeError;

pub const RETRIEVE: &str = "knowcode_retrieve";
pub const LIFECYCLE: &str = "knowcode_lifecycle";
pub const INSPECT: &str = "knowcode_inspect";

pub const RETRIEVE_ACTIONS: &[&str] = &["query", "search", "context", "trace", "semantic_search"];
pub const LIFECYCLE_ACTIONS: &[&str] = &["build", "index", "export"];
pub const INSPECT_ACTIONS: &[&str] = &[
    "job_status",
    "doctor",
    "freshness",
    "quality",
    "stats",
    "preflight",
    "history",
    "telemetry",
];
pub const TASK_TYPES: &[&str] = &[
    "auto", "explain", "debug", "extend", "review", "locate", "general",
];
pub const VERBOSITIES: &[&str] = &["minimal", "standard", "verbose", "diagnostic"];

/// The predecessor's full-context query defaults, kept where agents expect them: the legacy
/// `retrieve_context_for_query` tool and the REST query endpoint (the MCP `query` action
/// defaults to 1,500 tokens and one entity).
pub const FULL_QUERY_DEFAULTS: &[(&str, u64)] = &[("max_tokens", 4000), ("limit_entities", 3)];

/// One of the predecessor's flat tools, kept behind `--legacy-tools`.
pub struct LegacyTool {
    pub name: &'static str,
    pub tool: &'static str,
    pub action: &'static str,
    /// Arguments filled in when the caller leaves them out (the predecessor's defaults).
    pub defaults: &'static [(&'static str, u64)],
}

pub const LEGACY: &[LegacyTool] = &[
    LegacyTool {
        name: "search_codebase",
        tool: RETRIEVE,
        action: "search",
        defaults: &[],
    },
    LegacyTool {
        name: "get_entity_context",
        tool: RETRIEVE,
        action: "context",
        defaults: &[],
    },
    LegacyTool {
        name: "trace_calls",
        tool: RETRIEVE,
        action: "trace",
        defaults: &[],
    },
    LegacyTool {
        name: "retrieve_context_for_query",
        tool: RETRIEVE,
        action: "query",
        defaults: FULL_QUERY_DEFAULTS,
    },
    LegacyTool {
        name: "assess_codebase_quality",
        tool: INSPECT,
        action: "quality",
        defaults: &[],
    },
];

fn schema(properties: Value) -> Arc<Map<String, Value>> {
    let value = json!({"type": "object", "properties": properties, "required": ["action"], "additionalProperties": false});
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("a JSON object literal"),
    }
}

fn string_enum(values: &[&str]) -> Value {
    json!({"type": "string", "enum": values})
}

fn retrieve_tool() -> Tool {
    let properties = json!({
        "action": string_enum(RETRIEVE_ACTIONS),
        "query": {"type": "string"},
        "target": {"type": "string", "description": "entity id or name"},
        "task_type": string_enum(TASK_TYPES),
        "max_tokens": {"type": "integer"},
        "limit_entities": {"type": "integer"},
        "expand_deps": {"type": "boolean"},
        "verbosity": string_enum(VERBOSITIES),
        "direction": string_enum(&["callers", "callees"]),
        "depth": {"type": "integer"},
        "limit": {"type": "integer"},
    });
    Tool::new(
        RETRIEVE,
        "Repository context for a question. Start with action=query (defaults: 1500 tokens, 1 entity, minimal); escalate verbosity only if insufficient. search/context/trace/semantic_search are follow-ups.",
        schema(properties),
    )
    .with_title("knowcode retrieve")
    .with_annotations(ToolAnnotations::with_title("knowcode retrieve").read_only(true).idempotent(true).destructive(false))
}

fn lifecycle_tool() -> Tool {
    let properties = json!({
        "action": string_enum(LIFECYCLE_ACTIONS),
        "no_embed": {"type": "boolean"},
        "temporal": {"type": "boolean", "description": "also mine git history"},
        "output": {"type": "string", "description": "export folder, inside the root"},
    });
    Tool::new(
        LIFECYCLE,
        "Build or export the index. Returns a job at once; poll knowcode_inspect action=job_status until succeeded.",
        schema(properties),
    )
    .with_title("knowcode lifecycle")
    .with_annotations(ToolAnnotations::with_title("knowcode lifecycle").read_only(false).idempotent(false).destructive(false))
}

fn inspect_tool() -> Tool {
    let properties = json!({
        "action": string_enum(INSPECT_ACTIONS),
        "job_id": {"type": "string"},
        "target": {"type": "string"},
    });
    Tool::new(
        INSPECT,
        "Index health: jobs, doctor, freshness, quality, stats, preflight, history, telemetry.",
        schema(properties),
    )
    .with_title("knowcode inspect")
    .with_annotations(
        ToolAnnotations::with_title("knowcode inspect")
            .read_only(true)
            .idempotent(true)
            .destructive(false),
    )
}

fn legacy_tool(name: &'static str, tool: &str, action: &str) -> Tool {
    let properties = match action {
        "quality" => json!({}),
        "trace" => {
            json!({"target": {"type": "string"}, "direction": string_enum(&["callers", "callees"]), "depth": {"type": "integer"}})
        }
        "context" => json!({"target": {"type": "string"}, "max_tokens": {"type": "integer"}}),
        _ => {
            json!({"query": {"type": "string"}, "max_tokens": {"type": "integer"}, "limit_entities": {"type": "integer"}})
        }
    };
    let value = json!({"type": "object", "properties": properties, "additionalProperties": false});
    let Value::Object(map) = value else {
        unreachable!()
    };
    Tool::new(
        name,
        format!("Deprecated: use {tool} action={action}."),
        Arc::new(map),
    )
    .with_annotations(ToolAnnotations::new().read_only(true).idempotent(true))
}

/// The tools listed to clients.
pub fn tool_list(legacy: bool) -> Vec<Tool> {
    let mut tools = vec![retrieve_tool(), lifecycle_tool(), inspect_tool()];
    if legacy {
        tools.extend(
            LEGACY
                .iter()
                .map(|legacy| legacy_tool(legacy.name, legacy.tool, legacy.action)),
        );
    }
    tools
}

/// The schema cost per turn: compact JSON of the tool list, divided by 4.
pub fn schema_tokens(legacy: bool) -> usize {
    serde_json::to_string(&tool_list(legacy))
        .map(|s| s.len() / 4)
        .unwrap_or(usize::MAX)
}

/// Longest string argument accepted (a query, a target, a path), in bytes.
pub const MAX_STRING_BYTES: usize = 16 * 1024;

/// Typed, validated access to a tool call's arguments; every error names the argument.
pub struct Args {
    map: Map<String, Value>,
}

impl Args {
    pub fn new(map: Map<String, Value>) -> Self {
        Args { map }
    }

    /// The raw arguments.
    pub fn map(&self) -> &Map<String, Value> {
        &self.map
    }

    /// The required `action`, checked against the tool's enum.
    pub fn action(&self, allowed: &[&str]) -> Result<String, KnowcodeError> {
        let action = self.string("action")?.ok_or_else(|| {
            KnowcodeError::invalid_argument(
                "action",
                format!("is required; one of {}", allowed.join(", ")),
            )
        })?;
        if !allowed.contains(&action.as_str()) {
            return Err(KnowcodeError::invalid_argument(
                "action",
                format!("`{action}` is not one of {}", allowed.join(", ")),
            ));
        }
        Ok(action)
    }

    /// Rejects arguments the tool does not define.
    pub fn only(&self, known: &[&str]) -> Result<(), KnowcodeError> {
        match self.map.keys().find(|k| !known.contains(&k.as_str())) {
            Some(extra) => Err(KnowcodeError::invalid_argument(
                extra,
                "is not an argument of this tool",
            )),
            None => Ok(()),
        }
    }

    pub fn string(&self, name: &str) -> Result<Option<String>, KnowcodeError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.len() > MAX_STRING_BYTES => {
                Err(KnowcodeError::invalid_argument(
                    name,
                    format!("is {} bytes; the limit is {MAX_STRING_BYTES}", s.len()),
                ))
            }
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(KnowcodeError::invalid_argument(name, "must be a string")),
        }
    }

    pub fn required_string(&self, name: &str) -> Result<String, KnowcodeError> {
        match self.string(name)? {
            Some(s) if !s.trim().is_empty() => Ok(s),
            _ => Err(KnowcodeError::invalid_argument(
                name,
                "is required for this action",
            )),
        }
    }

    pub fn choice(
        &self,
        name: &str,
        allowed: &[&str],
        default: &str,
    ) -> Result<String, KnowcodeError> {
        let value = self.string(name)?.unwrap_or_else(|| default.to_string());
        if allowed.contains(&value.as_str()) {
            Ok(value)
        } else {
            Err(KnowcodeError::invalid_argument(
                name,
                format!("`{value}` is not one of {}", allowed.join(", ")),
            ))
        }
    }

    pub fn integer(
        &self,
        name: &str,
        min: u64,
        max: u64,
        default: u64,
    ) -> Result<u64, KnowcodeError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) if (min..=max).contains(&v) => Ok(v),
                _ => Err(KnowcodeError::invalid_argument(
                    name,
                    format!("must be an integer between {min} and {max}"),
                )),
            },
            Some(_) => Err(KnowcodeError::invalid_argument(name, "must be an integer")),
        }
    }

    pub fn boolean(&self, name: &str, default: bool) -> Result<bool, KnowcodeError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(KnowcodeError::invalid_argument(
                name,
                "must be true or false",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_have_no_null_unions_and_require_only_action() {
        let text = serde_json::to_string(&tool_list(true)).unwrap();
        assert!(!text.contains("\"null\""));
        for tool in tool_list(false) {
            assert_eq!(tool.input_schema["required"], json!(["action"]));
            assert_eq!(tool.input_schema["additionalProperties"], json!(false));
        }
    }

    #[test]
    fn unknown_actions_list_the_valid_ones() {
        let args = Args::new(serde_json::from_str(r#"{"action":"explode"}"#).unwrap());
        let err = args.action(RETRIEVE_ACTIONS).unwrap_err();
        assert!(
            err.message
                .contains("query, search, context, trace, semantic_search"),
            "{}",
            err.message
        );
    }
}

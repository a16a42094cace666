//! The MCP tool surface: three tools, each with a required `action` enum and every other
//! argument optional in the schema (checked in code by [`contract::Call`]). Every schema is
//! rendered from `contract::ACTIONS`; this module owns only the tools' titles, descriptions
//! and annotations, and the legacy flat tools' mapping. Schemas are paid on every agent turn,
//! so they are terse, carry no `null` unions, and forbid extra properties.

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use super::contract::{self, INSPECT, LIFECYCLE, Param, RETRIEVE};
use crate::retrieve::profile::Verbosity;
use crate::retrieve::{
    DEFAULT_LIMIT_ENTITIES, DEFAULT_MAX_TOKENS, FULL_LIMIT_ENTITIES, FULL_MAX_TOKENS,
};

/// The predecessor's full-context query defaults, kept where agents expect them: the legacy
/// `retrieve_context_for_query` tool and the REST query endpoint (the MCP `query` action
/// defaults to 1,500 tokens and one entity).
pub const FULL_QUERY_DEFAULTS: &[(&str, u64)] = &[
    ("max_tokens", FULL_MAX_TOKENS as u64),
    ("limit_entities", FULL_LIMIT_ENTITIES as u64),
];

/// One of the predecessor's flat tools, kept behind `--legacy-tools`.
pub struct LegacyTool {
    pub name: &'static str,
    pub tool: &'static str,
    pub action: &'static str,
    /// The arguments its schema lists (their types come from the contract).
    pub args: &'static [&'static str],
    /// Arguments filled in when the caller leaves them out (the predecessor's defaults).
    pub defaults: &'static [(&'static str, u64)],
}

/// The five flat tools and the action each routes to.
pub const LEGACY: &[LegacyTool] = &[
    LegacyTool {
        name: "search_codebase",
        tool: RETRIEVE,
        action: "search",
        args: &["query", "limit"],
        defaults: &[],
    },
    LegacyTool {
        name: "get_entity_context",
        tool: RETRIEVE,
        action: "context",
        args: &["target", "max_tokens"],
        defaults: &[],
    },
    LegacyTool {
        name: "trace_calls",
        tool: RETRIEVE,
        action: "trace",
        args: &["target", "direction", "depth"],
        defaults: &[],
    },
    LegacyTool {
        name: "retrieve_context_for_query",
        tool: RETRIEVE,
        action: "query",
        args: &["query", "max_tokens", "limit_entities"],
        defaults: FULL_QUERY_DEFAULTS,
    },
    LegacyTool {
        name: "assess_codebase_quality",
        tool: INSPECT,
        action: "quality",
        args: &[],
        defaults: &[],
    },
];

/// The JSON schema of one argument; `action` is the tool's own action enum.
fn property(tool: &str, param: &Param) -> Value {
    if param.name == "action" {
        json!({"type": param.kind.json_type(), "enum": contract::actions(tool)})
    } else {
        param.json_schema()
    }
}

fn object_schema<'p>(
    tool: &str,
    params: impl IntoIterator<Item = &'p Param>,
    required: &[&str],
) -> Arc<Map<String, Value>> {
    let properties: Map<String, Value> = params
        .into_iter()
        .map(|p| (p.name.to_string(), property(tool, p)))
        .collect();
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    Arc::new(schema)
}

fn tool(name: &'static str, title: &'static str, description: String, read_only: bool) -> Tool {
    Tool::new(
        name,
        description,
        object_schema(name, contract::params(name), &["action"]),
    )
    .with_title(title)
    .with_annotations(
        ToolAnnotations::with_title(title)
            .read_only(read_only)
            .idempotent(read_only)
            .destructive(false),
    )
}

fn legacy_tool(legacy: &LegacyTool) -> Tool {
    let params = contract::params(legacy.tool)
        .into_iter()
        .filter(|p| legacy.args.contains(&p.name));
    Tool::new(
        legacy.name,
        format!("Deprecated: use {} action={}.", legacy.tool, legacy.action),
        object_schema(legacy.tool, params, &[]),
    )
    .with_annotations(ToolAnnotations::new().read_only(true).idempotent(true))
}

/// The tools listed to clients.
pub fn tool_list(legacy: bool) -> Vec<Tool> {
    let mut tools = vec![
        tool(
            RETRIEVE,
            "knowcode retrieve",
            format!(
                "Repository context for a question. Start with action=query (defaults: {DEFAULT_MAX_TOKENS} tokens, {DEFAULT_LIMIT_ENTITIES} entity, {}); escalate verbosity only if insufficient. search/context/trace/semantic_search are follow-ups.",
                Verbosity::Minimal.as_str()
            ),
            true,
        ),
        tool(
            LIFECYCLE,
            "knowcode lifecycle",
            "Build or export the index. Returns a job at once; poll knowcode_inspect action=job_status until succeeded.".into(),
            false,
        ),
        tool(
            INSPECT,
            "knowcode inspect",
            format!("Index health: {}.", contract::actions(INSPECT).join(", ")),
            true,
        ),
    ];
    if legacy {
        tools.extend(LEGACY.iter().map(legacy_tool));
    }
    tools
}

/// The schema cost per turn: compact JSON of the tool list, divided by 4.
pub fn schema_tokens(legacy: bool) -> usize {
    serde_json::to_string(&tool_list(legacy))
        .map(|s| s.len() / 4)
        .unwrap_or(usize::MAX)
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
    fn legacy_schemas_list_their_actions_arguments_with_the_contracts_types() {
        for legacy in LEGACY {
            let spec = contract::action_spec(legacy.tool, legacy.action).unwrap();
            let tool = legacy_tool(legacy);
            let properties = tool.input_schema["properties"].as_object().unwrap();
            assert_eq!(properties.len(), legacy.args.len(), "{}", legacy.name);
            for name in legacy.args {
                let used = spec.args.iter().find(|u| u.param.name == *name);
                let used = used.unwrap_or_else(|| panic!("{}: {name}", legacy.name));
                assert_eq!(properties[*name]["type"], used.param.kind.json_type());
            }
        }
    }

    #[test]
    fn the_full_query_defaults_are_query_arguments_within_their_range() {
        for (name, value) in FULL_QUERY_DEFAULTS {
            let spec = contract::action_spec(RETRIEVE, "query").unwrap();
            let used = spec.args.iter().find(|u| u.param.name == *name).unwrap();
            let contract::Rule::Integer { min, max, .. } = used.rule else {
                panic!("{name} is not an integer argument");
            };
            assert!((min..=max).contains(value), "{name}");
        }
    }

    #[test]
    fn every_action_is_in_its_tools_enum_and_the_surface_stays_small() {
        for tool in tool_list(false) {
            let listed = tool.input_schema["properties"]["action"]["enum"].clone();
            assert_eq!(listed, json!(contract::actions(&tool.name)));
        }
        assert!(schema_tokens(false) <= 1000, "{}", schema_tokens(false));
    }
}

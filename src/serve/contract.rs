//! The tool contract as data. [`ACTIONS`] is the one table of every action of the three MCP
//! tools and every argument each takes — name, kind, default, range — built from the
//! [`Param`] definitions below. Everything that reads arguments derives from it: the MCP
//! JSON schemas and the legacy tools' schemas (`tools.rs`), validation and the per-tool
//! allowlist ([`parse`], [`Call`]), REST query-string typing and the OpenAPI parameters
//! (`rest.rs`), the telemetry allowlist (`telemetry.rs`) and the CLI's value parsers
//! ([`clap::ValueEnum`] on the vocabularies, [`integer_default`]).
//! The closed vocabularies themselves (task type, verbosity, direction) own their names in
//! `retrieve::profile`, and budget ceilings their numbers in `retrieve`; this table points at
//! them instead of repeating them. This module runs nothing and must not decide what a call
//! does — only what it may say.

use std::sync::LazyLock;

use clap::ValueEnum;
use clap::builder::PossibleValue;
use serde_json::{Map, Value};

use crate::error::KnowcodeError;
use crate::retrieve::profile::{Direction, Scope, TaskType, Verbosity};
use crate::retrieve::{
    DEFAULT_LIMIT_ENTITIES, DEFAULT_MAX_TOKENS, MAX_LIMIT_ENTITIES, MAX_TOKENS_CEILING,
    MAX_TRACE_DEPTH,
};

/// Read-only retrieval: query, search, context, trace, semantic_search.
pub const RETRIEVE: &str = "knowcode_retrieve";
/// Builds and exports, run as background jobs.
pub const LIFECYCLE: &str = "knowcode_lifecycle";
/// Index health and jobs.
pub const INSPECT: &str = "knowcode_inspect";
/// The three tools, in the order they are listed.
pub const TOOLS: [&str; 3] = [RETRIEVE, LIFECYCLE, INSPECT];

/// The task-type value that means "infer it from the question".
pub const AUTO: &str = "auto";
/// Longest string argument accepted (a query, a target, a path), in bytes.
pub const MAX_STRING_BYTES: usize = 16 * 1024;

/// How an argument's value is written.
#[derive(Clone, Copy)]
pub enum Kind {
    Text,
    Integer,
    Flag,
    /// One of a closed set of names.
    Choice(fn() -> Vec<&'static str>),
}

impl Kind {
    /// The JSON-schema type name.
    pub fn json_type(self) -> &'static str {
        match self {
            Kind::Text | Kind::Choice(_) => "string",
            Kind::Integer => "integer",
            Kind::Flag => "boolean",
        }
    }
}

/// One argument name and what it holds, shared by every action that takes it.
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    /// A schema description, only where the name alone misleads (schemas are paid per turn).
    pub about: Option<&'static str>,
}

impl Param {
    /// Its JSON schema: the type, the names of a choice, and the description if any.
    pub fn json_schema(&self) -> Value {
        let mut schema = Map::new();
        schema.insert("type".into(), Value::from(self.kind.json_type()));
        if let Kind::Choice(names) = self.kind {
            schema.insert("enum".into(), Value::from(names()));
        }
        if let Some(about) = self.about {
            schema.insert("description".into(), Value::from(about));
        }
        Value::Object(schema)
    }
}

/// How one action treats one of its arguments.
#[derive(Clone, Copy)]
pub enum Rule {
    /// Must be present and not blank.
    Required,
    /// May be left out (no default).
    Optional,
    Integer {
        default: u64,
        min: u64,
        max: u64,
    },
    Flag(bool),
    /// The default name of a [`Kind::Choice`].
    Choice(&'static str),
}

/// One argument of one action.
pub struct Use {
    pub param: &'static Param,
    pub rule: Rule,
}

/// One action of one tool and the arguments it takes.
pub struct ActionSpec {
    pub tool: &'static str,
    pub action: &'static str,
    pub args: &'static [Use],
}

fn task_type_names() -> Vec<&'static str> {
    std::iter::once(AUTO)
        .chain(TaskType::ALL.iter().map(|t| t.as_str()))
        .collect()
}

fn verbosity_names() -> Vec<&'static str> {
    Verbosity::ALL.iter().map(|v| v.as_str()).collect()
}

fn scope_names() -> Vec<&'static str> {
    Scope::ALL.iter().map(|s| s.as_str()).collect()
}

fn direction_names() -> Vec<&'static str> {
    Direction::ALL.iter().map(|d| d.as_str()).collect()
}

const fn param(name: &'static str, kind: Kind) -> Param {
    Param {
        name,
        kind,
        about: None,
    }
}

const ACTION: Param = param("action", Kind::Text);
const QUERY: Param = param("query", Kind::Text);
const TARGET: Param = Param {
    about: Some("entity id or name"),
    ..param("target", Kind::Text)
};
const HISTORY_TARGET: Param = param("target", Kind::Text);
const TASK_TYPE: Param = param("task_type", Kind::Choice(task_type_names));
const MAX_TOKENS: Param = param("max_tokens", Kind::Integer);
const LIMIT_ENTITIES: Param = param("limit_entities", Kind::Integer);
const EXPAND_DEPS: Param = param("expand_deps", Kind::Flag);
const VERBOSITY: Param = param("verbosity", Kind::Choice(verbosity_names));
const DIRECTION: Param = param("direction", Kind::Choice(direction_names));
const SCOPE: Param = Param {
    about: Some("dependencies: the locked packages' sources"),
    ..param("scope", Kind::Choice(scope_names))
};
const SCOPE_PROJECT: Use = arg(&SCOPE, Rule::Choice(Scope::Project.as_str()));
const DEPTH: Param = param("depth", Kind::Integer);
const LIMIT: Param = param("limit", Kind::Integer);
const NO_EMBED: Param = param("no_embed", Kind::Flag);
const TEMPORAL: Param = Param {
    about: Some("also mine git history"),
    ..param("temporal", Kind::Flag)
};
const OUTPUT: Param = Param {
    about: Some("export folder, inside the root"),
    ..param("output", Kind::Text)
};
const JOB_ID: Param = param("job_id", Kind::Text);

const fn arg(param: &'static Param, rule: Rule) -> Use {
    Use { param, rule }
}

const fn integer(default: usize, min: usize, max: usize) -> Rule {
    Rule::Integer {
        default: default as u64,
        min: min as u64,
        max: max as u64,
    }
}

const TASK_TYPE_AUTO: Use = arg(&TASK_TYPE, Rule::Choice(AUTO));
const VERBOSITY_MINIMAL: Use = arg(&VERBOSITY, Rule::Choice(Verbosity::Minimal.as_str()));
const BUDGET: Use = arg(
    &MAX_TOKENS,
    integer(DEFAULT_MAX_TOKENS, 1, MAX_TOKENS_CEILING),
);
const BUILD_ARGS: &[Use] = &[
    arg(&NO_EMBED, Rule::Flag(false)),
    arg(&TEMPORAL, Rule::Flag(false)),
];

/// Every action of every tool, with its arguments (besides `action`), in schema order.
pub static ACTIONS: &[ActionSpec] = &[
    ActionSpec {
        tool: RETRIEVE,
        action: "query",
        args: &[
            arg(&QUERY, Rule::Required),
            TASK_TYPE_AUTO,
            BUDGET,
            arg(
                &LIMIT_ENTITIES,
                integer(DEFAULT_LIMIT_ENTITIES, 1, MAX_LIMIT_ENTITIES),
            ),
            arg(&EXPAND_DEPS, Rule::Flag(false)),
            VERBOSITY_MINIMAL,
            SCOPE_PROJECT,
        ],
    },
    ActionSpec {
        tool: RETRIEVE,
        action: "search",
        // `query` or, failing that, `target`: the service asks for one of them.
        args: &[
            arg(&QUERY, Rule::Optional),
            arg(&TARGET, Rule::Optional),
            arg(&LIMIT, integer(10, 1, 100)),
            VERBOSITY_MINIMAL,
            SCOPE_PROJECT,
        ],
    },
    ActionSpec {
        tool: RETRIEVE,
        action: "context",
        args: &[
            arg(&TARGET, Rule::Required),
            TASK_TYPE_AUTO,
            BUDGET,
            VERBOSITY_MINIMAL,
        ],
    },
    ActionSpec {
        tool: RETRIEVE,
        action: "trace",
        args: &[
            arg(&TARGET, Rule::Required),
            arg(&DIRECTION, Rule::Choice(Direction::Callers.as_str())),
            arg(&DEPTH, integer(1, 1, MAX_TRACE_DEPTH)),
        ],
    },
    ActionSpec {
        tool: RETRIEVE,
        action: "semantic_search",
        args: &[
            arg(&QUERY, Rule::Required),
            arg(&LIMIT, integer(10, 1, 50)),
            SCOPE_PROJECT,
        ],
    },
    ActionSpec {
        tool: LIFECYCLE,
        action: "build",
        args: BUILD_ARGS,
    },
    ActionSpec {
        tool: LIFECYCLE,
        action: "index",
        args: BUILD_ARGS,
    },
    ActionSpec {
        tool: LIFECYCLE,
        action: "export",
        args: &[arg(&OUTPUT, Rule::Required)],
    },
    ActionSpec {
        tool: INSPECT,
        action: "job_status",
        args: &[arg(&JOB_ID, Rule::Optional)],
    },
    ActionSpec {
        tool: INSPECT,
        action: "doctor",
        args: &[],
    },
    ActionSpec {
        tool: INSPECT,
        action: "freshness",
        args: &[],
    },
    ActionSpec {
        tool: INSPECT,
        action: "quality",
        args: &[],
    },
    ActionSpec {
        tool: INSPECT,
        action: "stats",
        args: &[],
    },
    ActionSpec {
        tool: INSPECT,
        action: "preflight",
        args: &[],
    },
    ActionSpec {
        tool: INSPECT,
        action: "history",
        args: &[arg(&HISTORY_TARGET, Rule::Optional)],
    },
    ActionSpec {
        tool: INSPECT,
        action: "telemetry",
        args: &[],
    },
];

/// The actions of `tool`, in table order.
pub fn actions(tool: &str) -> Vec<&'static str> {
    ACTIONS
        .iter()
        .filter(|spec| spec.tool == tool)
        .map(|spec| spec.action)
        .collect()
}

/// The specification of one action.
pub fn action_spec(tool: &str, action: &str) -> Option<&'static ActionSpec> {
    ACTIONS
        .iter()
        .find(|spec| spec.tool == tool && spec.action == action)
}

/// The arguments `tool` accepts, `action` first, each once (first definition wins).
pub fn params(tool: &str) -> Vec<&'static Param> {
    let mut params: Vec<&'static Param> = vec![&ACTION];
    for spec in ACTIONS.iter().filter(|spec| spec.tool == tool) {
        for used in spec.args {
            if !params.iter().any(|p| p.name == used.param.name) {
                params.push(used.param);
            }
        }
    }
    params
}

/// The kind of the argument called `name` on any tool (REST types query strings with it).
pub fn kind_of(name: &str) -> Option<Kind> {
    ACTIONS
        .iter()
        .flat_map(|spec| spec.args)
        .find(|used| used.param.name == name)
        .map(|used| used.param.kind)
}

fn rule_of(tool: &str, action: &str, name: &str) -> Option<Rule> {
    action_spec(tool, action)?
        .args
        .iter()
        .find(|used| used.param.name == name)
        .map(|used| used.rule)
}

/// An integer argument's default for the CLI (`default_value_t`). A name the table lacks is
/// a programming error: clap evaluates every default when it builds the command line, so any
/// CLI run (and every CLI test) panics on it.
pub fn integer_default(tool: &str, action: &str, name: &str) -> usize {
    match rule_of(tool, action, name) {
        Some(Rule::Integer { default, .. }) => default as usize,
        _ => panic!("the contract has no integer `{name}` for {tool} action={action}"),
    }
}

/// A tool call whose action and argument names have been checked against the table; the
/// values are checked as they are read, each error naming its argument.
pub struct Call<'a> {
    spec: &'static ActionSpec,
    arguments: &'a Map<String, Value>,
}

/// Checks a call's argument names (the tool's allowlist) and its `action`.
pub fn parse<'a>(tool: &str, arguments: &'a Map<String, Value>) -> Result<Call<'a>, KnowcodeError> {
    let known = params(tool);
    if let Some(extra) = arguments
        .keys()
        .find(|key| !known.iter().any(|p| p.name == key.as_str()))
    {
        return Err(KnowcodeError::invalid_argument(
            extra,
            "is not an argument of this tool",
        ));
    }
    let allowed = actions(tool).join(", ");
    let action = text_value(arguments, ACTION.name)?.ok_or_else(|| {
        KnowcodeError::invalid_argument("action", format!("is required; one of {allowed}"))
    })?;
    let spec = action_spec(tool, &action).ok_or_else(|| {
        KnowcodeError::invalid_argument("action", format!("`{action}` is not one of {allowed}"))
    })?;
    Ok(Call { spec, arguments })
}

fn text_value(arguments: &Map<String, Value>, name: &str) -> Result<Option<String>, KnowcodeError> {
    match arguments.get(name) {
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

impl Call<'_> {
    /// The validated action name.
    pub fn action(&self) -> &'static str {
        self.spec.action
    }

    fn rule(&self, name: &str) -> Result<Rule, KnowcodeError> {
        rule_of(self.spec.tool, self.spec.action, name).ok_or_else(|| {
            KnowcodeError::new(
                crate::error::ErrorCode::Internal,
                format!("`{name}` is not in the contract of {}", self.spec.action),
            )
        })
    }

    /// A text argument: `None` when left out (or blank); an error when required and missing.
    pub fn text(&self, name: &str) -> Result<Option<String>, KnowcodeError> {
        match self.rule(name)? {
            Rule::Required => self.required_text(name).map(Some),
            _ => text_value(self.arguments, name),
        }
    }

    /// A text argument that must be present and not blank here (required by the table, or the
    /// one of two alternatives the caller fell back to).
    pub fn required_text(&self, name: &str) -> Result<String, KnowcodeError> {
        self.rule(name)?;
        match text_value(self.arguments, name)? {
            Some(s) if !s.trim().is_empty() => Ok(s),
            _ => Err(KnowcodeError::invalid_argument(
                name,
                "is required for this action",
            )),
        }
    }

    /// An integer argument within the table's range, or its default.
    pub fn integer(&self, name: &str) -> Result<usize, KnowcodeError> {
        let Rule::Integer { default, min, max } = self.rule(name)? else {
            return Err(KnowcodeError::invalid_argument(
                name,
                "is not an integer argument",
            ));
        };
        match self.arguments.get(name) {
            None | Some(Value::Null) => Ok(default as usize),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) if (min..=max).contains(&v) => Ok(v as usize),
                _ => Err(KnowcodeError::invalid_argument(
                    name,
                    format!("must be an integer between {min} and {max}"),
                )),
            },
            Some(_) => Err(KnowcodeError::invalid_argument(name, "must be an integer")),
        }
    }

    /// A boolean argument, or its default.
    pub fn flag(&self, name: &str) -> Result<bool, KnowcodeError> {
        let Rule::Flag(default) = self.rule(name)? else {
            return Err(KnowcodeError::invalid_argument(
                name,
                "is not a boolean argument",
            ));
        };
        match self.arguments.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(KnowcodeError::invalid_argument(
                name,
                "must be true or false",
            )),
        }
    }

    /// A choice argument: one of its kind's names, or the default.
    fn choice(&self, param: &Param) -> Result<String, KnowcodeError> {
        let (Rule::Choice(default), Kind::Choice(names)) = (self.rule(param.name)?, param.kind)
        else {
            return Err(KnowcodeError::invalid_argument(
                param.name,
                "is not a choice",
            ));
        };
        let value = text_value(self.arguments, param.name)?.unwrap_or_else(|| default.to_string());
        let names = names();
        if names.contains(&value.as_str()) {
            Ok(value)
        } else {
            Err(KnowcodeError::invalid_argument(
                param.name,
                format!("`{value}` is not one of {}", names.join(", ")),
            ))
        }
    }

    /// `task_type`: `None` for `auto`.
    pub fn task_type(&self) -> Result<Option<TaskType>, KnowcodeError> {
        Ok(TaskType::parse(&self.choice(&TASK_TYPE)?))
    }

    /// `verbosity`.
    pub fn verbosity(&self) -> Result<Verbosity, KnowcodeError> {
        let name = self.choice(&VERBOSITY)?;
        Verbosity::parse(&name).ok_or_else(|| KnowcodeError::invalid_argument("verbosity", name))
    }

    /// `scope`.
    pub fn scope(&self) -> Result<Scope, KnowcodeError> {
        let name = self.choice(&SCOPE)?;
        Scope::parse(&name).ok_or_else(|| KnowcodeError::invalid_argument("scope", name))
    }

    /// `direction`.
    pub fn direction(&self) -> Result<Direction, KnowcodeError> {
        let name = self.choice(&DIRECTION)?;
        Direction::parse(&name).ok_or_else(|| KnowcodeError::invalid_argument("direction", name))
    }
}

/// The CLI reads the vocabularies through clap with the same names as the tools.
macro_rules! value_enum {
    ($($vocabulary:ty),+) => {$(
        impl ValueEnum for $vocabulary {
            fn value_variants<'a>() -> &'a [Self] {
                &<$vocabulary>::ALL
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(PossibleValue::new(self.as_str()))
            }
        }
    )+};
}

value_enum!(Verbosity, Direction, Scope);

/// A task type as the surfaces take it: a [`TaskType`] or `auto` (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskChoice(pub Option<TaskType>);

impl TaskChoice {
    /// `auto`, the default.
    pub const AUTO: TaskChoice = TaskChoice(None);
}

static TASK_CHOICES: LazyLock<Vec<TaskChoice>> = LazyLock::new(|| {
    std::iter::once(TaskChoice::AUTO)
        .chain(TaskType::ALL.into_iter().map(|t| TaskChoice(Some(t))))
        .collect()
});

impl ValueEnum for TaskChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &TASK_CHOICES
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.map_or(AUTO, TaskType::as_str)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_argument_has_one_kind_and_every_integer_default_is_in_range() {
        for spec in ACTIONS {
            for used in spec.args {
                let same_name = ACTIONS
                    .iter()
                    .flat_map(|s| s.args)
                    .filter(|u| u.param.name == used.param.name);
                for other in same_name {
                    assert_eq!(
                        other.param.kind.json_type(),
                        used.param.kind.json_type(),
                        "{}",
                        used.param.name
                    );
                }
                match (used.rule, used.param.kind) {
                    (Rule::Integer { default, min, max }, Kind::Integer) => {
                        assert!(min <= default && default <= max, "{}", used.param.name)
                    }
                    (Rule::Choice(default), Kind::Choice(names)) => {
                        assert!(names().contains(&default), "{}", used.param.name)
                    }
                    (Rule::Flag(_), Kind::Flag) | (Rule::Required | Rule::Optional, Kind::Text) => {
                    }
                    _ => panic!("{}: rule and kind disagree", used.param.name),
                }
            }
        }
    }

    #[test]
    fn query_defaults_are_the_contracts_first_call() {
        let args = Map::new();
        let call = Call {
            spec: action_spec(RETRIEVE, "query").unwrap(),
            arguments: &args,
        };
        assert_eq!(call.integer("max_tokens").unwrap(), 1500);
        assert_eq!(call.integer("limit_entities").unwrap(), 1);
        assert!(!call.flag("expand_deps").unwrap());
        assert_eq!(call.verbosity().unwrap(), Verbosity::Minimal);
        assert_eq!(call.task_type().unwrap(), None);
        assert_eq!(integer_default(RETRIEVE, "trace", "depth"), 1);
    }

    #[test]
    fn unknown_actions_and_arguments_are_named() {
        let args: Map<String, Value> = serde_json::from_str(r#"{"action":"explode"}"#).unwrap();
        let err = parse(RETRIEVE, &args).err().unwrap();
        assert!(
            err.message
                .contains("query, search, context, trace, semantic_search"),
            "{}",
            err.message
        );
        let args: Map<String, Value> =
            serde_json::from_str(r#"{"action":"stats","no_embed":true}"#).unwrap();
        let err = parse(INSPECT, &args).err().unwrap();
        assert!(err.message.contains("`no_embed`"), "{}", err.message);
        let args: Map<String, Value> =
            serde_json::from_str(r#"{"action":"trace","target":"f","direction":"up"}"#).unwrap();
        let err = parse(RETRIEVE, &args).unwrap().direction().unwrap_err();
        assert!(err.message.contains("callers, callees"), "{}", err.message);
    }

    #[test]
    fn the_cli_vocabularies_are_the_tools_vocabularies() {
        let names = |variants: Vec<PossibleValue>| -> Vec<String> {
            variants.iter().map(|v| v.get_name().to_string()).collect()
        };
        assert_eq!(
            names(
                TaskChoice::value_variants()
                    .iter()
                    .filter_map(|v| v.to_possible_value())
                    .collect()
            ),
            task_type_names()
        );
        assert_eq!(
            names(
                Verbosity::value_variants()
                    .iter()
                    .filter_map(|v| v.to_possible_value())
                    .collect()
            ),
            verbosity_names()
        );
    }
}

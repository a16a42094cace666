//! In-place edits of an agent's config file: set one named member of an object, or make some
//! strings present in an array, and undo exactly that. JSON (with comments, as VS Code, Zed and
//! OpenCode allow) goes through jsonc-parser's concrete syntax tree and TOML through toml_edit,
//! so comments, other entries, order and indentation survive. An edit never guesses on a file
//! it cannot parse: it fails with the file's line. Knows nothing about which agent a file
//! belongs to.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

/// The keys leading to a container (`["permissions", "allow"]`).
pub type KeyPath = Vec<String>;

/// The syntax of a config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON, comments and trailing commas allowed.
    Json,
    Toml,
}

/// One change to a config file, addressed by the keys leading to its container.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// `name` in the object at `path` is `value`.
    Member {
        path: Vec<String>,
        name: String,
        value: Value,
    },
    /// Each of `items` is in the array at `path`.
    ArrayItems {
        path: Vec<String>,
        items: Vec<String>,
    },
}

/// Why a file could not be edited. The file is left as it was.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EditError {
    #[error(
        "not valid {format} at line {line}: {message}; fix it or move it aside (nothing was written)"
    )]
    Malformed {
        format: &'static str,
        line: usize,
        message: String,
    },
    #[error("`{key}` is not {expected} (nothing was written)")]
    WrongShape { key: String, expected: &'static str },
}

/// The text with `change` applied, and the container paths that had to be created for it
/// (so that removing the change can remove them too).
pub fn apply(
    format: Format,
    text: &str,
    change: &Change,
) -> Result<(String, Vec<KeyPath>), EditError> {
    match format {
        Format::Json => json_apply(text, change),
        Format::Toml => toml_apply(text, change),
    }
}

/// The text without `change`; containers in `created` (deepest first) go too once empty.
pub fn revert(
    format: Format,
    text: &str,
    change: &Change,
    created: &[KeyPath],
) -> Result<String, EditError> {
    match format {
        Format::Json => json_revert(text, change, created),
        Format::Toml => toml_revert(text, change, created),
    }
}

/// Whether the parsed file already carries `change` exactly.
pub fn is_applied(document: &Value, change: &Change) -> bool {
    match change {
        Change::Member { path, name, value } => {
            lookup(document, path).and_then(|c| c.get(name)) == Some(value)
        }
        Change::ArrayItems { path, items } => lookup(document, path)
            .and_then(Value::as_array)
            .is_some_and(|array| items.iter().all(|i| array.iter().any(|v| v == i))),
    }
}

/// Whether the parsed file has the member `change` sets (with any value).
pub fn has_member(document: &Value, change: &Change) -> bool {
    match change {
        Change::Member { path, name, .. } => {
            lookup(document, path).and_then(|c| c.get(name)).is_some()
        }
        Change::ArrayItems { .. } => false,
    }
}

/// Whether a file holds no setting at all (an empty object or table, comments aside).
pub fn is_empty_document(format: Format, text: &str) -> Result<bool, EditError> {
    let document = parse_value(format, text)?;
    Ok(document.as_object().is_none_or(|o| o.is_empty()))
}

/// The whole file as a plain value (comments dropped), for reading entries.
pub fn parse_value(format: Format, text: &str) -> Result<Value, EditError> {
    match format {
        Format::Json => {
            if text.trim().is_empty() {
                return Ok(Value::Object(Default::default()));
            }
            jsonc_parser::parse_to_serde_value::<Value>(text, &json_options()).map_err(json_error)
        }
        Format::Toml => {
            let table: toml::Table =
                toml::from_str(text).map_err(|e| toml_error(text, e.span(), e.message()))?;
            serde_json::to_value(table).map_err(|e| EditError::Malformed {
                format: "TOML",
                line: 1,
                message: e.to_string(),
            })
        }
    }
}

fn lookup<'a>(document: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(document, |value, key| value.get(key))
}

fn json_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        ..Default::default()
    }
}

fn json_error(err: jsonc_parser::errors::ParseError) -> EditError {
    EditError::Malformed {
        format: "JSON",
        line: err.line_display(),
        message: err.kind().to_string(),
    }
}

fn json_root(text: &str) -> Result<CstRootNode, EditError> {
    let root = CstRootNode::parse(text, &json_options()).map_err(json_error)?;
    if root.value().is_some() && root.object_value().is_none() {
        return Err(EditError::WrongShape {
            key: "the file".into(),
            expected: "a JSON object",
        });
    }
    Ok(root)
}

fn to_input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(to_input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), to_input(v))).collect())
        }
    }
}

/// The object at `path`, creating what is missing; records the paths it created.
fn json_container(
    root: &CstRootNode,
    path: &[String],
    created: &mut Vec<KeyPath>,
) -> Result<CstObject, EditError> {
    let mut object = root.object_value_or_set();
    for (depth, key) in path.iter().enumerate() {
        if object.get(key).is_none() {
            created.push(path[..=depth].to_vec());
        } else if object.object_value(key).is_none() {
            return Err(EditError::WrongShape {
                key: path[..=depth].join("."),
                expected: "an object",
            });
        }
        object = object.object_value_or_set(key);
    }
    Ok(object)
}

fn json_find(root: &CstRootNode, path: &[String]) -> Option<CstObject> {
    path.iter()
        .try_fold(root.object_value()?, |object, key| object.object_value(key))
}

fn json_apply(text: &str, change: &Change) -> Result<(String, Vec<KeyPath>), EditError> {
    let root = json_root(text)?;
    let mut created = Vec::new();
    match change {
        Change::Member { path, name, value } => {
            let container = json_container(&root, path, &mut created)?;
            match container.get(name) {
                Some(existing) => existing.set_value(to_input(value)),
                None => {
                    container.append(name, to_input(value));
                }
            }
        }
        Change::ArrayItems { path, items } => {
            let (parent, key) = split_last(path);
            let container = json_container(&root, parent, &mut created)?;
            if container.get(key).is_none() {
                created.push(path.clone());
            } else if container.array_value(key).is_none() {
                return Err(EditError::WrongShape {
                    key: path.join("."),
                    expected: "an array",
                });
            }
            let array = container.array_value_or_set(key);
            let present: Vec<String> = array
                .elements()
                .iter()
                .filter_map(|e| e.as_string_lit()?.decoded_value().ok())
                .collect();
            for item in items.iter().filter(|i| !present.contains(i)) {
                array.append(CstInputValue::String(item.clone()));
            }
        }
    }
    Ok((root.to_string(), created))
}

fn json_revert(text: &str, change: &Change, created: &[KeyPath]) -> Result<String, EditError> {
    let root = json_root(text)?;
    match change {
        Change::Member { path, name, .. } => {
            if let Some(member) = json_find(&root, path).and_then(|c| c.get(name)) {
                member.remove();
            }
        }
        Change::ArrayItems { path, items } => {
            let (parent, key) = split_last(path);
            if let Some(array) = json_find(&root, parent).and_then(|c| c.array_value(key)) {
                for element in array.elements() {
                    let ours = element
                        .as_string_lit()
                        .and_then(|s| s.decoded_value().ok())
                        .is_some_and(|s| items.contains(&s));
                    if ours {
                        element.remove();
                    }
                }
            }
        }
    }
    for path in deepest_first(created) {
        let (parent, key) = split_last(&path);
        let Some(container) = json_find(&root, parent) else {
            continue;
        };
        let empty = container
            .object_value(key)
            .map(|o| o.properties().is_empty())
            .or_else(|| container.array_value(key).map(|a| a.elements().is_empty()))
            .unwrap_or(false);
        if empty && let Some(member) = container.get(key) {
            member.remove();
        }
    }
    Ok(root.to_string())
}

fn split_last(path: &[String]) -> (&[String], &str) {
    match path.split_last() {
        Some((last, parent)) => (parent, last.as_str()),
        None => (&[], ""),
    }
}

fn deepest_first(created: &[KeyPath]) -> Vec<KeyPath> {
    let mut paths = created.to_vec();
    paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
    paths
}

fn toml_document(text: &str) -> Result<toml_edit::DocumentMut, EditError> {
    text.parse::<toml_edit::DocumentMut>()
        .map_err(|e| toml_error(text, e.span(), e.message()))
}

/// A TOML parse error with the line of its span.
fn toml_error(text: &str, span: Option<std::ops::Range<usize>>, message: &str) -> EditError {
    EditError::Malformed {
        format: "TOML",
        line: span
            .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(1),
        message: message.to_string(),
    }
}

fn toml_value(value: &Value) -> toml_edit::Item {
    match value {
        Value::Object(map) => {
            let mut table = toml_edit::Table::new();
            for (key, value) in map {
                table.insert(key, toml_edit::Item::Value(toml_inline(value)));
            }
            toml_edit::Item::Table(table)
        }
        other => toml_edit::Item::Value(toml_inline(other)),
    }
}

fn toml_inline(value: &Value) -> toml_edit::Value {
    match value {
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => n
            .as_i64()
            .map(toml_edit::Value::from)
            .unwrap_or_else(|| n.as_f64().unwrap_or_default().into()),
        Value::Array(items) => {
            toml_edit::Value::Array(items.iter().map(toml_inline).collect::<toml_edit::Array>())
        }
        Value::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (key, value) in map {
                table.insert(key, toml_inline(value));
            }
            toml_edit::Value::InlineTable(table)
        }
        Value::String(s) => s.as_str().into(),
        Value::Null => "".into(),
    }
}

fn toml_table<'a>(
    document: &'a mut toml_edit::DocumentMut,
    path: &[String],
    created: &mut Vec<KeyPath>,
) -> Result<&'a mut toml_edit::Table, EditError> {
    let mut table = document.as_table_mut();
    for (depth, key) in path.iter().enumerate() {
        if !table.contains_key(key) {
            created.push(path[..=depth].to_vec());
            let mut fresh = toml_edit::Table::new();
            fresh.set_implicit(true);
            table.insert(key, toml_edit::Item::Table(fresh));
        }
        table = table
            .get_mut(key)
            .and_then(toml_edit::Item::as_table_mut)
            .ok_or_else(|| EditError::WrongShape {
                key: path[..=depth].join("."),
                expected: "a table",
            })?;
    }
    Ok(table)
}

fn toml_apply(text: &str, change: &Change) -> Result<(String, Vec<KeyPath>), EditError> {
    let mut document = toml_document(text)?;
    let mut created = Vec::new();
    let Change::Member { path, name, value } = change else {
        return Err(EditError::WrongShape {
            key: "array items".into(),
            expected: "supported in TOML files",
        });
    };
    let table = toml_table(&mut document, path, &mut created)?;
    table.insert(name, toml_value(value));
    Ok((document.to_string(), created))
}

fn toml_revert(text: &str, change: &Change, created: &[KeyPath]) -> Result<String, EditError> {
    let mut document = toml_document(text)?;
    if let Change::Member { path, name, .. } = change
        && let Some(table) = toml_find(&mut document, path)
    {
        table.remove(name);
    }
    for path in deepest_first(created) {
        let (parent, key) = split_last(&path);
        if let Some(table) = toml_find(&mut document, parent) {
            let empty = table
                .get(key)
                .and_then(toml_edit::Item::as_table)
                .is_some_and(toml_edit::Table::is_empty);
            if empty {
                table.remove(key);
            }
        }
    }
    Ok(document.to_string())
}

fn toml_find<'a>(
    document: &'a mut toml_edit::DocumentMut,
    path: &[String],
) -> Option<&'a mut toml_edit::Table> {
    path.iter().try_fold(document.as_table_mut(), |table, key| {
        table.get_mut(key).and_then(toml_edit::Item::as_table_mut)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn member(path: &[&str]) -> Change {
        Change::Member {
            path: path.iter().map(|s| s.to_string()).collect(),
            name: "knowcode".into(),
            value: json!({"command": "/bin/knowcode", "args": ["mcp"]}),
        }
    }

    #[test]
    fn json_round_trip_keeps_comments_and_other_servers() {
        let before = "{\n  // mine\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}, // keep\n  },\n}\n";
        let change = member(&["mcpServers"]);
        let (after, created) = apply(Format::Json, before, &change).unwrap();
        assert!(created.is_empty());
        assert!(
            after.contains("// keep") && after.contains("\"knowcode\""),
            "{after}"
        );
        assert!(is_applied(
            &parse_value(Format::Json, &after).unwrap(),
            &change
        ));
        assert_eq!(
            revert(Format::Json, &after, &change, &created).unwrap(),
            before
        );
    }

    #[test]
    fn containers_created_for_a_change_go_with_it() {
        let before = "{\n  \"theme\": \"dark\"\n}\n";
        let change = member(&["mcpServers"]);
        let (after, created) = apply(Format::Json, before, &change).unwrap();
        assert_eq!(created, vec![vec!["mcpServers".to_string()]]);
        assert_eq!(
            revert(Format::Json, &after, &change, &created).unwrap(),
            before
        );
    }

    #[test]
    fn array_items_are_added_once_and_removed_alone() {
        let before = "{\"permissions\": {\"allow\": [\"Bash(ls)\"]}}";
        let change = Change::ArrayItems {
            path: vec!["permissions".into(), "allow".into()],
            items: vec!["mcp__knowcode__knowcode_retrieve".into()],
        };
        let (after, created) = apply(Format::Json, before, &change).unwrap();
        let (again, _) = apply(Format::Json, &after, &change).unwrap();
        assert_eq!(after, again);
        assert_eq!(
            revert(Format::Json, &after, &change, &created).unwrap(),
            before
        );
    }

    #[test]
    fn malformed_json_names_its_line() {
        let err = apply(
            Format::Json,
            "{\n  \"a\": 1,\n  oops\n}",
            &member(&["mcpServers"]),
        )
        .unwrap_err();
        assert!(matches!(err, EditError::Malformed { line: 3, .. }), "{err}");
    }

    #[test]
    fn toml_round_trip_keeps_comments() {
        let before = "# codex\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\" # keep\n";
        let change = member(&["mcp_servers"]);
        let (after, created) = apply(Format::Toml, before, &change).unwrap();
        assert!(after.contains("[mcp_servers.knowcode]"), "{after}");
        assert!(is_applied(
            &parse_value(Format::Toml, &after).unwrap(),
            &change
        ));
        assert_eq!(
            revert(Format::Toml, &after, &change, &created).unwrap(),
            before
        );
        let err = apply(Format::Toml, "a = [\n", &change).unwrap_err();
        assert!(matches!(err, EditError::Malformed { .. }), "{err}");
    }
}

//! The REST surface (`knowcode serve`): a small HTTP/1.1 API over the same [`Service`] the
//! MCP tools use, so payloads are identical. Routes live in one table ([`route`]); errors
//! are `{error, code, hint}` with a status from [`status_for`] (prerequisites such as a
//! missing index are 412). Binds loopback unless told otherwise. Built on `tiny_http`
//! worker threads that hand each call to the async service through a runtime handle. This
//! module must not implement retrieval itself.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::contract::{self, INSPECT, Kind, RETRIEVE};
use super::service::{Service, percent_decode};
use super::tools;
use crate::error::{ErrorCode, KnowcodeError};

/// Worker threads answering requests.
const WORKERS: usize = 4;
/// Largest request body accepted.
const MAX_BODY: u64 = 1024 * 1024;
/// What a request asks for.
#[derive(Debug, PartialEq)]
pub enum Call {
    Health,
    OpenApi,
    Tool(&'static str, Map<String, Value>),
    Impact(String, usize),
}

/// HTTP status for an error code: prerequisites 412, caller mistakes 400, unknown ids 404,
/// conflicts 409, an unreachable shared store 502, the rest 500.
pub fn status_for(code: ErrorCode) -> u16 {
    match code {
        ErrorCode::MissingKnowledgeStore
        | ErrorCode::MissingSemanticIndex
        | ErrorCode::MissingPreflightReport
        | ErrorCode::MissingHistory
        | ErrorCode::ModelUnavailable
        | ErrorCode::ModelMismatch
        | ErrorCode::StoreCorrupt => 412,
        ErrorCode::InvalidArgument | ErrorCode::PathOutsideRoot | ErrorCode::InvalidConfig => 400,
        ErrorCode::EntityNotFound | ErrorCode::UnknownJob | ErrorCode::NoJobs => 404,
        ErrorCode::JobAlreadyRunning | ErrorCode::StoreLocked => 409,
        ErrorCode::StoreUnreachable => 502,
        ErrorCode::BuildFailed | ErrorCode::ChatUnavailable | ErrorCode::Internal => 500,
    }
}

/// A query-string component decoded (`+` is a space there).
fn decode(text: &str) -> String {
    percent_decode(&text.replace('+', " "))
}

/// Query-string parameters, typed by the contract's kind for the name (integers and
/// booleans; anything unparsable stays a string, so validation names the argument).
fn query_params(query: &str) -> Map<String, Value> {
    let mut params = Map::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (key, value) = (decode(key), decode(value));
        let typed = match contract::kind_of(&key) {
            Some(Kind::Integer) => value
                .parse::<u64>()
                .map(Value::from)
                .unwrap_or(Value::String(value)),
            Some(Kind::Flag) => match value.as_str() {
                "true" | "1" => Value::Bool(true),
                "false" | "0" => Value::Bool(false),
                _ => Value::String(value),
            },
            _ => Value::String(value),
        };
        params.insert(key, typed);
    }
    params
}

fn rename(params: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(value) = params.remove(from) {
        params.insert(to.into(), value);
    }
}

fn with_action(mut params: Map<String, Value>, action: &str) -> Map<String, Value> {
    params.insert("action".into(), json!(action));
    params
}

/// Maps method + URL (+ JSON body) to a call, or a 404/400 error.
pub fn route(method: &str, url: &str, body: &str) -> Result<Call, (u16, KnowcodeError)> {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let mut params = query_params(query);
    let not_found = || {
        (
            404,
            KnowcodeError::invalid_argument("path", format!("no route {method} {path}"))
                .with_hint("GET /openapi.json lists the routes"),
        )
    };
    let rest = path.strip_prefix("/api/v1/");
    match (method, rest, path) {
        ("GET", _, "/openapi.json") => Ok(Call::OpenApi),
        ("GET", Some("health"), _) => Ok(Call::Health),
        ("GET", Some("stats"), _) => Ok(Call::Tool(INSPECT, with_action(params, "stats"))),
        ("GET", Some("freshness"), _) => Ok(Call::Tool(INSPECT, with_action(params, "freshness"))),
        ("GET", Some("search"), _) => {
            rename(&mut params, "q", "query");
            Ok(Call::Tool(RETRIEVE, with_action(params, "search")))
        }
        ("GET", Some("context"), _) => Ok(Call::Tool(RETRIEVE, with_action(params, "context"))),
        ("GET", Some(rest), _) if rest.starts_with("trace/") => {
            params.insert(
                "target".into(),
                json!(percent_decode(&rest["trace/".len()..])),
            );
            Ok(Call::Tool(RETRIEVE, with_action(params, "trace")))
        }
        ("GET", Some(rest), _) if rest.starts_with("impact/") => {
            let depth = match params.get("depth") {
                None => 3,
                Some(Value::Number(n)) => n.as_u64().unwrap_or(0) as usize,
                Some(_) => 0,
            };
            Ok(Call::Impact(
                percent_decode(&rest["impact/".len()..]),
                depth,
            ))
        }
        ("POST", Some("context/query"), _) => {
            let body: Value = serde_json::from_str(body).map_err(|e| {
                (
                    400,
                    KnowcodeError::invalid_argument("body", format!("is not JSON: {e}")),
                )
            })?;
            let Value::Object(mut arguments) = body else {
                return Err((
                    400,
                    KnowcodeError::invalid_argument("body", "must be a JSON object"),
                ));
            };
            for (key, value) in query_defaults() {
                arguments.entry(key).or_insert(value);
            }
            Ok(Call::Tool(RETRIEVE, with_action(arguments, "query")))
        }
        _ => Err(not_found()),
    }
}

/// Runs a call against the service: (status, JSON body).
pub async fn answer(service: &Service, call: Call) -> (u16, Value) {
    let result = match call {
        Call::Health => Ok(health(service)),
        Call::OpenApi => Ok(openapi()),
        Call::Tool(tool, arguments) => service.call(tool, arguments).await,
        Call::Impact(target, depth) => service.impact(&target, depth).await,
    };
    match result {
        Ok(payload) => (200, payload),
        Err(err) => (status_for(err.code), err.to_json()),
    }
}

fn health(service: &Service) -> Value {
    use crate::store::legacy::Readiness;
    let readiness = crate::store::legacy::readiness(service.root());
    json!({
        "status": "ok",
        "version": crate::BUILDER_VERSION,
        "index_ready": readiness != Readiness::Missing,
        "generation_id": match &readiness {
            Readiness::Generation(id) => Some(id.as_str()),
            Readiness::LegacyFlat => Some("legacy"),
            Readiness::Missing => None,
        },
    })
}

/// The REST query endpoint's defaults: the predecessor's full-context budget, with dependency
/// expansion on.
fn query_defaults() -> Vec<(&'static str, Value)> {
    tools::FULL_QUERY_DEFAULTS
        .iter()
        .map(|(key, value)| (*key, json!(value)))
        .chain([("expand_deps", json!(true))])
        .collect()
}

/// An OpenAPI parameter typed by the contract (`id` path segments are strings).
fn openapi_param(name: &str, location: &str, required: bool) -> Value {
    let kind = contract::kind_of(name).map_or("string", Kind::json_type);
    json!({"name": name, "in": location, "required": required, "schema": {"type": kind}})
}

/// The request body of `POST /context/query`: the `query` action's arguments.
fn query_body_schema() -> Value {
    let spec =
        contract::action_spec(RETRIEVE, "query").expect("the query action is in the contract");
    let properties: Map<String, Value> = spec
        .args
        .iter()
        .map(|used| (used.param.name.to_string(), used.param.json_schema()))
        .collect();
    json!({"type": "object", "required": ["query"], "properties": properties})
}

/// The OpenAPI 3.0 description of every route.
pub fn openapi() -> Value {
    let payload = json!({"description": "the same payload as the MCP tool", "content": {"application/json": {"schema": {"type": "object"}}}});
    let error = json!({"description": "{error, code, hint}", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}});
    let param = openapi_param;
    let get = |summary: &str, parameters: Vec<Value>| {
        json!({"get": {"summary": summary, "parameters": parameters,
            "responses": {"200": payload, "400": error, "404": error, "412": error}}})
    };
    json!({
        "openapi": "3.0.3",
        "info": {"title": "knowcode", "version": crate::BUILDER_VERSION,
                 "description": "Offline code intelligence: the MCP tools' payloads over HTTP. Binds 127.0.0.1 by default."},
        "paths": {
            "/api/v1/health": get("liveness and whether an index is published", vec![]),
            "/api/v1/stats": get("counts of the current generation", vec![]),
            "/api/v1/freshness": get("is the index stale, and why", vec![]),
            "/api/v1/search": get("entities by name or pattern", vec![param("q", "query", true), param("limit", "query", false)]),
            "/api/v1/context": get("the context of one entity", vec![param("target", "query", true), param("max_tokens", "query", false), param("task_type", "query", false), param("verbosity", "query", false)]),
            "/api/v1/trace/{id}": get("callers or callees", vec![param("id", "path", true), param("direction", "query", false), param("depth", "query", false)]),
            "/api/v1/impact/{id}": get("everything that depends on an entity", vec![param("id", "path", true), param("depth", "query", false)]),
            "/api/v1/context/query": {"post": {"summary": format!("ranked, budgeted context for a question (defaults: {})", query_defaults().iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")),
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Query"}}}},
                "responses": {"200": payload, "400": error, "412": error}}},
        },
        "components": {"schemas": {
            "Error": {"type": "object", "required": ["error", "code", "hint"], "properties": {"error": {"type": "string"}, "code": {"type": "string"}, "hint": {"type": "string"}}},
            "Query": query_body_schema(),
        }},
    })
}

/// Serves until the process ends. `runtime` runs the async service calls.
pub fn serve(
    service: Arc<Service>,
    address: &str,
    runtime: tokio::runtime::Handle,
) -> Result<(), KnowcodeError> {
    let server = Arc::new(tiny_http::Server::http(address).map_err(|e| {
        KnowcodeError::invalid_argument("--host/--port", format!("cannot listen on {address}: {e}"))
    })?);
    tracing::info!("REST API on http://{address}/api/v1/ (OpenAPI at /openapi.json)");
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (server, service, runtime) = (server.clone(), service.clone(), runtime.clone());
            std::thread::spawn(move || {
                while let Ok(request) = server.recv() {
                    handle(&service, &runtime, request);
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
    Ok(())
}

fn handle(service: &Service, runtime: &tokio::runtime::Handle, mut request: tiny_http::Request) {
    let mut body = String::new();
    let too_big = request.body_length().is_some_and(|n| n as u64 > MAX_BODY);
    let read = std::io::Read::read_to_string(
        &mut std::io::Read::take(request.as_reader(), MAX_BODY),
        &mut body,
    );
    let (status, payload) = if too_big || read.is_err() {
        let err = KnowcodeError::invalid_argument(
            "body",
            format!("must be UTF-8 JSON of at most {MAX_BODY} bytes"),
        );
        (400, err.to_json())
    } else {
        match route(&request.method().to_string(), request.url(), &body) {
            Ok(call) => runtime.block_on(answer(service, call)),
            Err((status, err)) => (status, err.to_json()),
        }
    };
    let header =
        tiny_http::Header::from_bytes("Content-Type", "application/json").expect("a valid header");
    let response = tiny_http::Response::from_string(payload.to_string())
        .with_status_code(status)
        .with_header(header);
    if let Err(e) = request.respond(response) {
        tracing::debug!("REST response not sent: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_map_to_tool_calls_with_typed_parameters() {
        let Ok(Call::Tool(tool, args)) = route("GET", "/api/v1/search?q=parse+url&limit=5", "")
        else {
            panic!("search routes to a tool");
        };
        assert_eq!(tool, RETRIEVE);
        assert_eq!(args["query"], "parse url");
        assert_eq!(args["limit"], 5);
        let Ok(Call::Tool(_, args)) = route(
            "GET",
            "/api/v1/trace/shop%2Fcart.py::Cart.total?direction=callees&depth=2",
            "",
        ) else {
            panic!("trace routes to a tool");
        };
        assert_eq!(args["target"], "shop/cart.py::Cart.total");
        assert_eq!(args["depth"], 2);
        let Ok(Call::Tool(_, args)) = route("POST", "/api/v1/context/query", r#"{"query":"x"}"#)
        else {
            panic!("query routes to a tool");
        };
        assert_eq!(
            (
                &args["max_tokens"],
                &args["limit_entities"],
                &args["expand_deps"]
            ),
            (&json!(4000), &json!(3), &json!(true))
        );
        assert_eq!(
            route("GET", "/api/v1/impact/a.py::f", "").unwrap(),
            Call::Impact("a.py::f".into(), 3)
        );
        assert_eq!(route("GET", "/api/v2/x", "").unwrap_err().0, 404);
        assert_eq!(
            route("POST", "/api/v1/context/query", "{").unwrap_err().0,
            400
        );
    }

    #[test]
    fn prerequisite_errors_are_412() {
        assert_eq!(status_for(ErrorCode::MissingKnowledgeStore), 412);
        assert_eq!(status_for(ErrorCode::InvalidArgument), 400);
        assert_eq!(status_for(ErrorCode::EntityNotFound), 404);
    }
}

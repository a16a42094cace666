//! The MCP server over stdio (rmcp): lists the three tools (plus the legacy five with
//! `--legacy-tools`) and routes every call to [`Service`]. Results are one text item of
//! compact JSON; failures are `{error, code, hint}` with `isError` set, so the agent reads
//! them. Only protocol goes to stdout; logs go to stderr. A server whose `aimodels.yaml` is
//! invalid still starts: every call then answers `invalid_config` naming the key, so the
//! agent can tell its user what to fix instead of seeing a dead server.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};

use super::service::Service;
use super::tools::{self, LEGACY};
use crate::error::{ErrorCode, KnowcodeError};

/// The rmcp handler: lists the tools and routes calls to the [`Service`].
#[derive(Clone)]
pub struct McpServer {
    /// The service, or why it could not be configured (answered to every call).
    service: Result<Arc<Service>, KnowcodeError>,
    legacy: bool,
}

impl McpServer {
    /// A server over `service`; when the configuration is invalid every call answers its error. `legacy` also lists the five flat tools.
    pub fn new(service: Result<Service, KnowcodeError>, legacy: bool) -> Self {
        McpServer {
            service: service.map(Arc::new),
            legacy,
        }
    }

    /// The instructions an agent reads once per session: how to start, and the configured
    /// sufficiency threshold it should compare `sufficiency_score` with.
    fn instructions(&self) -> String {
        match &self.service {
            Ok(service) => format!(
                "Use knowcode_retrieve action=query first (minimal verbosity, small budget); escalate (verbosity=standard, more max_tokens or limit_entities) only when sufficiency_score is below {} (this server's sufficiency_threshold). For a library's API at the version this project locks, search with scope=dependencies and the name you would write (e.g. tokio::spawn).",
                service.config().config.sufficiency_threshold
            ),
            Err(e) => format!(
                "knowcode cannot serve until aimodels.yaml is fixed: {}. Every call answers invalid_config.",
                e.message
            ),
        }
    }

    /// Maps a legacy flat tool onto its consolidated tool and action, with the predecessor's
    /// defaults for arguments the caller left out.
    fn route(&self, name: &str, mut arguments: Map<String, Value>) -> (String, Map<String, Value>) {
        match LEGACY
            .iter()
            .find(|legacy| legacy.name == name)
            .filter(|_| self.legacy)
        {
            Some(legacy) => {
                for (key, value) in legacy.defaults {
                    arguments.entry(*key).or_insert(Value::from(*value));
                }
                arguments.insert("action".into(), Value::String(legacy.action.to_string()));
                (legacy.tool.to_string(), arguments)
            }
            None => (name.to_string(), arguments),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("knowcode", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools::tool_list(
            self.legacy,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let (tool, arguments) = self.route(&request.name, request.arguments.unwrap_or_default());
        let outcome = match &self.service {
            Ok(service) => service.call(&tool, arguments).await,
            Err(config_error) => Err(config_error.clone()),
        };
        let result = match outcome {
            Ok(payload) => CallToolResult::success(vec![ContentBlock::text(
                serde_json::to_string(&payload).unwrap_or_default(),
            )]),
            Err(err) => CallToolResult::error(vec![ContentBlock::text(err.to_json().to_string())]),
        };
        Ok(result.into())
    }
}

/// Serves MCP on stdin/stdout until the client disconnects; malformed lines are answered
/// by [`super::stdio_guard`] and never reach rmcp.
pub async fn serve_stdio(
    service: Result<Service, KnowcodeError>,
    legacy: bool,
) -> Result<(), KnowcodeError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        KnowcodeError::new(ErrorCode::Internal, format!("MCP server {what}: {e}"))
    };
    let server = McpServer::new(service, legacy);
    if let Ok(service) = &server.service {
        tokio::spawn(Arc::clone(service).warm_up());
    }
    let transport = super::stdio_guard::guard(tokio::io::stdin(), tokio::io::stdout());
    let running = server
        .serve(transport)
        .await
        .map_err(|e| failed("did not start", &e))?;
    running.waiting().await.map_err(|e| failed("stopped", &e))?;
    Ok(())
}

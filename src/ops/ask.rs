//! `knowcode ask QUESTION`: retrieve first; when the context's sufficiency score clears the
//! configured threshold the context itself is the answer (nothing leaves the machine),
//! otherwise the question and that context go to the OpenAI-compatible chat endpoint in
//! `aimodels.yaml` (`chat.endpoint`). CLI only — never exposed over MCP, because an agent
//! should read the context itself rather than pay for a second model.

use serde_json::{Value, json};

use crate::config::ChatConfig;
use crate::error::{ErrorCode, KnowcodeError};
use crate::retrieve::profile::Verbosity;
use crate::retrieve::{FULL_LIMIT_ENTITIES, FULL_MAX_TOKENS, QueryRequest, Retriever};

const SYSTEM_PROMPT: &str = "You answer questions about a code repository. Use only the context given; name the files and functions you rely on; say so when the context does not contain the answer.";

/// Answers a question: `{answered_by: "local"|"chat", answer, sufficiency_score, ...}`.
pub async fn ask(
    retriever: &Retriever,
    chat: &ChatConfig,
    threshold: f64,
    question: &str,
) -> Result<Value, KnowcodeError> {
    let mut request = QueryRequest::new(question);
    request.max_tokens = FULL_MAX_TOKENS;
    request.limit_entities = FULL_LIMIT_ENTITIES;
    request.expand_deps = true;
    request.verbosity = Verbosity::Standard;
    let crate::retrieve::AnswerParts {
        payload, entities, ..
    } = retriever.answer(&request).await?;
    let score = payload.sufficiency_score;
    let context = payload.context_text.as_str();
    let locations: Vec<String> = entities
        .iter()
        .map(|e| format!("{}:{}-{}", e.path, e.span.start_line, e.span.end_line))
        .collect();
    if score >= threshold {
        return Ok(json!({
            "answered_by": "local",
            "sufficiency_score": score,
            "answer": context,
            "sources": locations,
        }));
    }
    let Some(endpoint) = &chat.endpoint else {
        return Ok(json!({
            "answered_by": "local",
            "sufficiency_score": score,
            "answer": context,
            "sources": locations,
            "note": format!("sufficiency {score:.2} is below {threshold}; set chat.endpoint in aimodels.yaml to have a model answer from this context"),
        }));
    };
    let answer = complete(chat, endpoint, question, context).await?;
    Ok(json!({
        "answered_by": "chat",
        "model": chat.model,
        "sufficiency_score": score,
        "answer": answer,
        "sources": locations,
    }))
}

/// One chat completion; returns the first choice's message.
async fn complete(
    chat: &ChatConfig,
    endpoint: &str,
    question: &str,
    context: &str,
) -> Result<String, KnowcodeError> {
    let unavailable = |why: String| KnowcodeError::new(ErrorCode::ChatUnavailable, why);
    let url = format!("{}/chat/completions", endpoint.trim_end_matches('/'));
    let body = json!({
        "model": chat.model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": format!("Context:\n{context}\n\nQuestion: {question}")},
        ],
    });
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(chat.timeout_secs))
        .build()
        .map_err(|e| unavailable(format!("cannot build an HTTP client: {e}")))?;
    let mut request = client.post(&url).json(&body);
    if let Some(key) = chat
        .api_key_env
        .as_deref()
        .and_then(|name| std::env::var(name).ok())
    {
        request = request.bearer_auth(key);
    }
    let response = request
        .send()
        .await
        .map_err(|e| unavailable(format!("{url}: {e}")))?;
    let status = response.status();
    let reply: Value = response
        .json()
        .await
        .map_err(|e| unavailable(format!("{url}: the reply is not JSON ({e})")))?;
    if !status.is_success() {
        return Err(unavailable(format!("{url}: HTTP {status}: {reply}")));
    }
    reply["choices"][0]["message"]["content"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| unavailable(format!("{url}: no choices[0].message.content in {reply}")))
}

//! Tests of fault classification, through each backend's decoder.

use super::*;
use crate::backends::{decode_all, decode_ended, EventFormat};
use crate::records::ProcessEnd;

/// The fault of a whole stream in `format`, by `model`, its process ended with exit 0.
fn classify(format: EventFormat, events: &[u8], model: &str) -> Option<Fault> {
    decode_all(format, events, model).fault
}

/// Whether the stream is a retry of a permanent API error (the agent is stopped).
fn permanent_retry(line: &[u8]) -> bool {
    [EventFormat::Claude, EventFormat::Codex]
        .into_iter()
        .any(|f| decode_all(f, line, "m").permanent_retry.is_some())
}

/// The answer of a Claude Code stream continued after the output token limit, joined.
fn continued_answer(events: &[u8]) -> Option<String> {
    let f = decode_all(EventFormat::Claude, events, "m");
    let recovered = f.fault.is_some_and(|f| f.cause == "output_truncated");
    f.result.and_then(|r| r.text).filter(|_| recovered)
}

fn result(fields: &str) -> String {
    format!(
        r#"{{"type":"system","subtype":"init"}}
{{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error",{fields}}}
"#
    )
}

fn of(events: &str) -> Fault {
    classify(EventFormat::Claude, events.as_bytes(), "claude-opus-5-5").unwrap()
}

#[test]
fn http_statuses_map_to_their_class_and_fix() {
    let f = of(&result(
        r#""api_error_status":401,"api_error_type":"authentication_error","result":"API Error: 401""#,
    ));
    assert_eq!(
        (f.class, f.cause.as_str(), f.status),
        (FaultClass::Permanent, "authentication", Some(401))
    );
    assert!(f
        .message
        .starts_with("authentication failed: check ANTHROPIC_API_KEY"));
    for (status, cause, class) in [
        (400, "invalid_request", FaultClass::Permanent),
        (403, "permission", FaultClass::Permanent),
        (404, "unknown_model", FaultClass::Permanent),
        (429, "rate_limited", FaultClass::Transient),
        (500, "server_error", FaultClass::Transient),
        (503, "server_error", FaultClass::Transient),
        (529, "overloaded", FaultClass::Transient),
    ] {
        let f = of(&result(&format!(
            r#""api_error_status":{status},"result":"x""#
        )));
        assert_eq!((f.class, f.cause.as_str()), (class, cause), "{status}");
    }
    let f = of(&result(r#""api_error_status":404,"result":"x""#));
    assert!(f.message.contains("`claude-opus-5-5`"), "{}", f.message);
    let f = of(&result(
        r#""api_error_status":400,"api_error_type":"invalid_request_error","result":"Your credit balance is too low""#,
    ));
    assert_eq!(f.cause, "billing");
    // No status at all: a connection error, transient.
    let f = of(&result(r#""result":"API Error: Connection error.""#));
    assert_eq!(
        (f.class, f.cause.as_str()),
        (FaultClass::Transient, "connection")
    );
}

#[test]
fn refusal_and_max_tokens_come_from_the_stop_reason() {
    let refused = r#"{"type":"result","subtype":"success","is_error":false,"stop_reason":"refusal","result":"I can't help with that."}"#;
    let f = of(refused);
    assert_eq!(
        (f.class, f.cause.as_str()),
        (FaultClass::Permanent, "refusal")
    );
    assert!(
        f.message.contains("I can't help with that."),
        "{}",
        f.message
    );
    let cut = r#"{"type":"result","subtype":"success","is_error":false,"stop_reason":"max_tokens","result":"{\"find"}"#;
    assert_eq!(of(cut).class, FaultClass::Truncated);
    let fine = r#"{"type":"result","subtype":"success","is_error":false,"stop_reason":"end_turn","result":"{}"}"#;
    assert_eq!(classify(EventFormat::Claude, fine.as_bytes(), "m"), None);
}

/// Claude Code ends a session past its `--max-budget-usd` with `error_max_budget_usd` (as
/// 2.1.330 prints it, after the response that passed it): the dispatch's share is spent.
#[test]
fn a_cli_stopped_at_its_budget_share_is_a_budget_fault() {
    let stopped = r#"{"type":"result","subtype":"error_max_budget_usd","duration_ms":2811,"is_error":true,"num_turns":1,"stop_reason":"tool_use","session_id":"s","total_cost_usd":0.04014,"usage":{"input_tokens":0,"cache_creation_input_tokens":7976,"output_tokens":13},"errors":["Reached maximum budget ($0.04)"]}"#;
    let f = of(stopped);
    assert_eq!(
        (f.class, f.cause.as_str()),
        (FaultClass::Budget, "budget_share")
    );
    let turns = stopped.replace("error_max_budget_usd", "error_max_turns");
    assert_eq!(classify(EventFormat::Claude, turns.as_bytes(), "m"), None);
}

#[test]
fn an_answer_continued_after_max_tokens_is_joined_from_the_events() {
    let events = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"1\tx"}]}}
{"type":"assistant","message":{"content":[{"type":"text","text":"{\"findings\":[{\"id\":"}]}}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Output token limit hit. Resume directly — no apology."}]},"isSynthetic":true}
{"type":"assistant","message":{"content":[{"type":"text","text":"\"F1\"}]}"}]}}
{"type":"result","subtype":"success","is_error":false,"result":"\"F1\"}]}","stop_reason":"end_turn"}
"#;
    assert_eq!(
        continued_answer(events.as_bytes()).as_deref(),
        Some(r#"{"findings":[{"id":"F1"}]}"#)
    );
    // No continuation prompt: nothing to join.
    let plain = events.replace("Output token limit hit", "Something else");
    assert_eq!(continued_answer(plain.as_bytes()), None);
    // A refused message is not part of the answer.
    let refused = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"no"}]}}
{"type":"user","message":{"content":[{"type":"text","text":"Your response above was stopped"}]},"isSynthetic":true,"refused_message_id":"m"}
{"type":"assistant","message":{"content":[{"type":"text","text":"{}"}]}}
"#;
    assert_eq!(continued_answer(refused.as_bytes()), None);
}

#[test]
fn a_stream_stopped_mid_retry_is_classified_by_its_last_retry() {
    let retrying = r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":612,"error_status":401,"error":"authentication_failed"}"#;
    assert!(permanent_retry(retrying.as_bytes()));
    assert_eq!(of(retrying).cause, "authentication");
    let overloaded = r#"{"type":"system","subtype":"api_retry","attempt":2,"retry_delay_ms":4000,"error_status":529,"error":"overloaded"}"#;
    assert!(!permanent_retry(overloaded.as_bytes()));
    let f = of(overloaded);
    assert_eq!(
        (f.class, f.retry_after_ms),
        (FaultClass::Transient, Some(4000))
    );
    assert!(!permanent_retry(b"{\"type\":\"assistant\"}"));
    assert_eq!(
        classify(EventFormat::Codex, overloaded.as_bytes(), "m"),
        None
    );
}

fn codex(lines: &[&str]) -> Option<Fault> {
    let events: String = lines.iter().map(|l| format!("{l}\n")).collect();
    classify(EventFormat::Codex, events.as_bytes(), "gpt-5.5")
}

/// Lines as Codex 0.169.0 printed them against the fake OpenAI API.
#[test]
fn codex_messages_map_to_their_class_and_fix() {
    let e = |m: &str| json_line("error", "message", m);
    let failed = |m: &str| {
        format!(
            r#"{{"type":"turn.failed","error":{{"message":{}}}}}"#,
            serde_json::Value::String(m.into())
        )
    };
    let unauthorized = "unexpected status 401 Unauthorized: Incorrect API key provided: sk-x., url: http://127.0.0.1:1/v1/responses";
    let retrying = format!("Reconnecting... 1/5 ({unauthorized})");
    assert!(permanent_retry(e(&retrying).as_bytes()));
    let f = codex(&[&e(&retrying), &e(unauthorized), &failed(unauthorized)]).unwrap();
    assert_eq!(
        (f.class, f.cause.as_str(), f.status),
        (FaultClass::Permanent, "authentication", Some(401))
    );
    assert!(f.message.contains("check OPENAI_API_KEY"), "{}", f.message);
    // Stopped at the first retry: the retry names the cause.
    assert_eq!(codex(&[&e(&retrying)]).unwrap().cause, "authentication");
    let bad = r#"{"error": {"message": "Invalid value for input[0].", "type": "invalid_request_error", "param": "input", "code": null}}"#;
    let f = codex(&[&e(bad), &failed(bad)]).unwrap();
    assert_eq!(
        (f.class, f.cause.as_str()),
        (FaultClass::Permanent, "invalid_request")
    );
    assert!(
        f.message.contains("Invalid value for input[0]."),
        "{}",
        f.message
    );
    for (message, cause, class) in [
        (
            "The model `gpt-9` does not exist or you do not have access to it.",
            "unknown_model",
            FaultClass::Permanent,
        ),
        (
            "Quota exceeded. Check your plan and billing details.",
            "billing",
            FaultClass::Permanent,
        ),
        (
            "unexpected status 403 Forbidden: no, url: http://x",
            "permission",
            FaultClass::Permanent,
        ),
        (
            "exceeded retry limit, last status: 429 Too Many Requests",
            "rate_limited",
            FaultClass::Transient,
        ),
        (
            "unexpected status 503 Service Unavailable: down, url: http://x",
            "server_error",
            FaultClass::Transient,
        ),
        (
            "stream disconnected before completion: The server had an error processing your request.",
            "connection",
            FaultClass::Transient,
        ),
        (
            "stream disconnected before completion: Incomplete response returned, reason: content_filter",
            "refusal",
            FaultClass::Permanent,
        ),
        (
            "Incomplete response returned, reason: max_output_tokens",
            "output_truncated",
            FaultClass::Truncated,
        ),
    ] {
        let f = codex(&[&e(message), &failed(message)]).unwrap();
        assert_eq!((f.class, f.cause.as_str()), (class, cause), "{message}");
    }
    // Transient retries are not stopped; a content-filter retry is.
    let overloaded = "Reconnecting... 1/5 (unexpected status 503 Service Unavailable: x, url: y)";
    assert!(!permanent_retry(e(overloaded).as_bytes()));
    let filtered = "Reconnecting... 1/5 (stream disconnected before completion: Incomplete response returned, reason: content_filter)";
    assert!(permanent_retry(e(filtered).as_bytes()));
    // A turn that completed after a reconnect recovered; an unknown message names nothing.
    let done = r#"{"type":"turn.completed","usage":{}}"#;
    assert_eq!(codex(&[&e(overloaded), done]), None);
    assert_eq!(codex(&[&failed("sandbox error: something")]), None);
}

fn json_line(kind: &str, field: &str, value: &str) -> String {
    format!(
        r#"{{"type":"{kind}","{field}":{}}}"#,
        serde_json::Value::String(value.into())
    )
}

/// Lines as Gemini CLI 0.61.0 printed them against the fake Gemini API.
#[test]
fn gemini_messages_map_to_their_class_and_fix() {
    let result = |message: &str| {
        format!(
            r#"{{"type":"result","status":"error","error":{{"type":"unknown","message":{}}},"stats":{{}}}}"#,
            serde_json::Value::String(message.into())
        )
    };
    let of =
        |line: String| classify(EventFormat::Gemini, line.as_bytes(), "gemini-2.5-pro").unwrap();
    let f = of(result(
        r#"[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}]"#,
    ));
    assert_eq!(
        (f.class, f.cause.as_str(), f.status),
        (FaultClass::Permanent, "authentication", Some(400))
    );
    assert!(f.message.contains("check GEMINI_API_KEY"), "{}", f.message);
    for (code, status, cause, class) in [
        (
            401,
            "UNAUTHENTICATED",
            "authentication",
            FaultClass::Permanent,
        ),
        (
            400,
            "INVALID_ARGUMENT",
            "invalid_request",
            FaultClass::Permanent,
        ),
        (
            403,
            "PERMISSION_DENIED",
            "permission",
            FaultClass::Permanent,
        ),
        (404, "NOT_FOUND", "unknown_model", FaultClass::Permanent),
        (
            429,
            "RESOURCE_EXHAUSTED",
            "rate_limited",
            FaultClass::Transient,
        ),
        (503, "UNAVAILABLE", "server_error", FaultClass::Transient),
        (500, "INTERNAL", "server_error", FaultClass::Transient),
    ] {
        let f = of(result(&format!(
            r#"[API Error: {{"error":{{"code":{code},"message":"m","status":"{status}"}}}}]"#
        )));
        assert_eq!((f.class, f.cause.as_str()), (class, cause), "{code}");
    }
    let blocked = format!(
        "{}\n{}",
        r#"{"type":"error","severity":"error","message":"The model response was blocked due to safety settings."}"#,
        r#"{"type":"result","status":"error","stats":{}}"#
    );
    let f = of(blocked);
    assert_eq!(
        (f.class, f.cause.as_str()),
        (FaultClass::Permanent, "refusal")
    );
    assert!(f.message.contains("blocked due to safety"), "{}", f.message);
    // After its own retries the CLI gives the API's text, not its JSON.
    let f = of(result("[API Error: Resource has been exhausted (e.g. check quota).]\nPlease wait and try again later."));
    assert_eq!(
        (f.class, f.cause.as_str()),
        (FaultClass::Transient, "rate_limited")
    );
    let f = of(result(
        "[API Error: The model is overloaded. Please try again later.]",
    ));
    assert_eq!(
        (f.class, f.cause.as_str()),
        (FaultClass::Transient, "overloaded")
    );
    let ok = r#"{"type":"result","status":"success","stats":{}}"#;
    assert_eq!(classify(EventFormat::Gemini, ok.as_bytes(), "m"), None);
    // No stream: exit 41 (its meaning folded into the result when the process ended).
    let end = ProcessEnd::Exited { code: 41 };
    let f = decode_ended(EventFormat::Gemini, b"", "m", &end, b"")
        .fault
        .unwrap();
    assert_eq!(f.cause, "authentication");
    assert!(f.message.contains("set GEMINI_API_KEY"), "{}", f.message);
}

#[test]
fn an_answer_ending_inside_its_json_object_was_cut() {
    assert_eq!(
        cut_answer(r#"{"findings":[{"id"#).map(|f| f.class),
        Some(FaultClass::Truncated)
    );
    assert_eq!(
        cut_answer("```json\n{\"findings\":[").map(|f| f.cause),
        Some("output_truncated".into())
    );
    assert_eq!(cut_answer(r#"{"findings":[]}"#), None);
    assert_eq!(cut_answer(r#"{"findings":]}"#), None, "invalid, not cut");
    assert_eq!(cut_answer("no JSON at all"), None);
}

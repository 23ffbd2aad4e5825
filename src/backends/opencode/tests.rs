//! The OpenCode decoder against lines recorded from the real CLI (OpenCode 1.18.33 against
//! a loopback OpenAI-compatible server: a read, a call of a tool it does not offer, a read
//! its permissions refused, the answer, a dead endpoint, a bad key), and its invocation.

use super::*;
use crate::backends::{decode_ended, parse_events, BackendKind, EventFormat, TierModels};
use crate::records::{FaultClass, Tier};
use std::time::Duration;

const STEP1: &str = r#"{"type":"step_start","timestamp":1795865809788,"sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","part":{"id":"prt_221f1936100173oHpw1WfiptX7","messageID":"msg_221f18dd9001oho3NQfv6HbchP","sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","snapshot":"4e71d83239356f2f4ca6efe3ccd6ffd93adf4750","type":"step-start"}}"#;
const READ: &str = r#"{"type":"tool_use","timestamp":1795865809843,"sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","part":{"type":"tool","tool":"read","callID":"call_1","state":{"status":"completed","input":{"filePath":"/tmp/ocx/repo/a.py"},"output":"<path>/tmp/ocx/repo/a.py</path>\n<type>file</type>\n<content>\n1: x = 1\n\n(End of file - total 1 lines)\n</content>","metadata":{"preview":"x = 1","truncated":false,"loaded":[],"display":{"type":"file","path":"/tmp/ocx/repo/a.py","text":"x = 1","lineStart":1,"lineEnd":1,"totalLines":1,"truncated":false}},"title":"a.py","time":{"start":1795865809780,"end":1795865809828}},"id":"prt_221f193670012ZBSBCmUze7wWH","sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","messageID":"msg_221f18dd9001oho3NQfv6HbchP"}}"#;
const FINISH1: &str = r#"{"type":"step_finish","timestamp":1795865809935,"sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","part":{"id":"prt_221f19404001IhXUsAbmf2dLz3","reason":"tool-calls","snapshot":"4e71d83239356f2f4ca6efe3ccd6ffd93adf4750","messageID":"msg_221f18dd9001oho3NQfv6HbchP","sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","type":"step-finish","tokens":{"total":1020,"input":900,"output":20,"reasoning":0,"cache":{"write":0,"read":100}},"cost":0}}"#;
const INVALID_BASH: &str = r#"{"type":"tool_use","timestamp":1795865903326,"sessionID":"ses_dde0d0f83ffeZVt4Y21ETjZLUZ","part":{"type":"tool","tool":"invalid","callID":"call_1","state":{"status":"completed","input":{"tool":"bash","error":"Model tried to call unavailable tool 'bash'. Available tools: glob, grep, invalid, read."},"output":"The arguments provided to the tool are invalid: Model tried to call unavailable tool 'bash'. Available tools: glob, grep, invalid, read.","metadata":{"truncated":false},"title":"Invalid Tool","time":{"start":1795865903262,"end":1795865903278}},"id":"prt_221f3007e001KnQL766lobv4ng","sessionID":"ses_dde0d0f83ffeZVt4Y21ETjZLUZ","messageID":"msg_221f2f89d001yarDMbvf4lFbFF"}}"#;
const READ_GIT_REFUSED: &str = r#"{"type":"tool_use","timestamp":1795865959772,"sessionID":"ses_dde0c3bf3ffeaNS2YK8jyk0bU4","part":{"type":"tool","tool":"read","callID":"call_1","state":{"status":"error","input":{"filePath":"/tmp/ocx/repo/.git/config"},"error":"The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules…","time":{"start":1795865959705,"end":1795865959743}},"id":"prt_221f3dce5001MdEnFvpKLQP9jI","sessionID":"ses_dde0c3bf3ffeaNS2YK8jyk0bU4","messageID":"msg_221f3d082001Ob47P2nNXW9rrw"}}"#;
const STEP2: &str = r#"{"type":"step_start","timestamp":1795865810160,"sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","part":{"id":"prt_221f194e3001VSdzBv02qBilPP","messageID":"msg_221f194600013Msj0uRJqE6fGN","sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","snapshot":"4e71d83239356f2f4ca6efe3ccd6ffd93adf4750","type":"step-start"}}"#;
const TEXT: &str = r#"{"type":"text","timestamp":1795865810161,"sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","part":{"id":"prt_221f194e6001jKXOWPmEnK0uKG","messageID":"msg_221f194600013Msj0uRJqE6fGN","sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","type":"text","text":"Hello world {\"findings\":[]}","time":{"start":1795865810150,"end":1795865810156}}}"#;
const FINISH2: &str = r#"{"type":"step_finish","timestamp":1795865810324,"sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","part":{"id":"prt_221f19578001RgDJRfVIr0VtSd","reason":"stop","snapshot":"4e71d83239356f2f4ca6efe3ccd6ffd93adf4750","messageID":"msg_221f194600013Msj0uRJqE6fGN","sessionID":"ses_dde0e76cdffeu3syZ7YEAZT42o","type":"step-finish","tokens":{"total":1020,"input":900,"output":20,"reasoning":0,"cache":{"write":0,"read":100}},"cost":0}}"#;
const DEAD_ENDPOINT: &str = r#"{"type":"error","timestamp":1795867370968,"sessionID":"ses_dddf7e148ffephuo6Q60MwsWTf","error":{"name":"APIError","data":{"message":"Cannot connect to API: Unable to connect. Is the computer able to access the url?","isRetryable":true,"metadata":{"url":"http://127.0.0.1:18999/v1/chat/completions"}}}}"#;
const BAD_KEY: &str = r#"{"type":"error","timestamp":1795867449755,"sessionID":"ses_dddf57899ffe6wDqdzQdb7HcIn","error":{"name":"APIError","data":{"message":"Incorrect API key provided","statusCode":401,"isRetryable":false,"responseHeaders":{"content-length":"112","content-type":"application/json","date":"Sat, 28 Nov 2026 12:04:09 GMT","server":"BaseHTTP/0.6 Python/3.11.7"},"responseBody":"{\"error\": {\"message\": \"Incorrect API key provided\", \"type\": \"invalid_request_error\", \"code\": \"invalid_api_key\"}}","metadata":{"url":"http://127.0.0.1:18932/v1/chat/completions"}}}}"#;

fn lines(ls: &[&str]) -> Vec<u8> {
    let mut s = ls.join("\n");
    s.push('\n');
    s.into_bytes()
}

#[test]
fn a_recorded_review_decodes_to_tool_uses_usage_and_the_last_steps_text() {
    let out = lines(&[
        STEP1,
        READ,
        FINISH1,
        INVALID_BASH,
        READ_GIT_REFUSED,
        STEP2,
        TEXT,
        FINISH2,
    ]);
    let (tools, result, bad) = parse_events(EventFormat::OpenCode, &out);
    assert_eq!(bad, 0);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    // The `invalid` tool names the tool the model asked for.
    assert_eq!(names, ["read", "bash", "read"]);
    assert_eq!(tools[0].access.read, ["/tmp/ocx/repo/a.py"]);
    // A read OpenCode refused is still a read the gates see.
    assert_eq!(tools[2].access.read, ["/tmp/ocx/repo/.git/config"]);
    let r = result.expect("result");
    assert!(!r.is_error);
    assert_eq!(r.text.as_deref(), Some("Hello world {\"findings\":[]}"));
    assert_eq!(r.num_turns, Some(2));
    // Two steps of 900 uncached + 100 cached input, 20 output.
    assert_eq!(r.usage.input_tokens, 1800);
    assert_eq!(r.usage.cache_read_input_tokens, 200);
    assert_eq!(r.usage.output_tokens, 40);
    assert_eq!(r.usage.cache_creation_input_tokens, 0);
    let b = BackendKind::OpenCode.backend();
    for (role, t, ok) in [
        (Role::Judge, &tools[0], true),
        (Role::Judge, &tools[1], false),
        (Role::Fixer, &tools[1], false),
    ] {
        assert_eq!(b.permits(role, t), ok, "{role:?} {}", t.name);
    }
}

#[test]
fn recorded_errors_are_classified() {
    let end = ProcessEnd::Exited { code: 1 };
    let dead = decode_ended(
        EventFormat::OpenCode,
        &lines(&[DEAD_ENDPOINT]),
        "arev/m1",
        &end,
        b"",
    );
    let f = dead.fault.expect("fault");
    assert_eq!(
        (f.class, f.cause.as_str()),
        (FaultClass::Transient, "connection")
    );
    let r = dead.result.expect("an error result");
    assert!(r.is_error);
    assert!(r.text.unwrap().starts_with("Cannot connect to API"));

    let bad = decode_ended(
        EventFormat::OpenCode,
        &lines(&[BAD_KEY]),
        "arev/m1",
        &end,
        b"",
    );
    let f = bad.fault.expect("fault");
    assert_eq!(
        (f.class, f.cause.as_str()),
        (FaultClass::Permanent, "authentication")
    );
    assert_eq!(f.status, Some(401));
    assert!(
        f.message.starts_with("authentication failed"),
        "{}",
        f.message
    );

    // Statuses and OpenCode's own error names.
    let error = |data: Value, name: &str| {
        let line = json!({"type": "error", "error": {"name": name, "data": data}}).to_string();
        decode_ended(EventFormat::OpenCode, line.as_bytes(), "m", &end, b"")
            .fault
            .expect("fault")
    };
    for (status, class, cause) in [
        (404, FaultClass::Permanent, "unknown_model"),
        (400, FaultClass::Permanent, "invalid_request"),
        (429, FaultClass::Transient, "rate_limited"),
        (500, FaultClass::Transient, "server_error"),
    ] {
        let f = error(
            json!({"message": "x", "statusCode": status, "isRetryable": status >= 429}),
            "APIError",
        );
        assert_eq!((f.class, f.cause.as_str()), (class, cause), "{status}");
    }
    let f = error(json!({"message": "cut"}), "MessageOutputLengthError");
    assert_eq!(f.class, FaultClass::Truncated);
    let f = error(
        json!({"message": "no key", "providerID": "x"}),
        "ProviderAuthError",
    );
    assert_eq!(f.cause, "authentication");
    // A stream without a step or an error has no result (the authenticity gate says so).
    let empty = decode_ended(EventFormat::OpenCode, b"", "m", &end, b"");
    assert!(empty.result.is_none() && empty.fault.is_none());
}

fn agent(base_url: Option<&str>) -> AgentSpec {
    AgentSpec {
        name: "local".into(),
        backend: BackendKind::OpenCode,
        format: EventFormat::OpenCode,
        binary: PathBuf::from("/bin/true"),
        extra_args: vec![],
        models: TierModels {
            haiku: "small".into(),
            sonnet: "m1".into(),
            opus: "m1".into(),
        },
        max_turns: 4,
        timeout: None,
        pass_env: vec![],
        fallback_model: None,
        base_url: base_url.map(str::to_owned),
        api_key_env: base_url.map(|_| "LOCAL_KEY".to_owned()),
    }
}

fn req(role: Role, system_prompt: &str) -> DispatchRequest {
    DispatchRequest {
        role,
        label: "judge".into(),
        prompt: "[AR Round 1 — FULL] Judge\n\"quoted\" {env:HOME}".into(),
        system_prompt: system_prompt.into(),
        tier: Tier::Opus,
        cwd: PathBuf::from("/repo"),
        read_dirs: vec![PathBuf::from("/repo"), PathBuf::from("/runs/r1/target")],
        hidden: vec![],
        out_dir: PathBuf::from("/runs/r1/agents/r1/judge"),
        timeout: Duration::from_secs(1),
        grace: Duration::from_secs(1),
        output_cap: 1,
        max_budget_usd: None,
        price: None,
        search: false,
    }
}

#[test]
fn the_invocation_writes_a_config_no_brace_of_which_opencode_substitutes() {
    let body = "# Role: Judge {env:OPENAI_API_KEY} {file:~/.ssh/id_rsa}";
    let r = req(Role::Judge, body);
    let i = OpenCode.invocation(&agent(Some("http://127.0.0.1:8000/v1")), &r);
    assert_eq!(
        i.args,
        [
            "run",
            "--format",
            "json",
            "--agent",
            "arev",
            "--title",
            "arev review",
            "--model=arev/m1"
        ]
    );
    // The prompt goes on stdin verbatim (a positional message is re-quoted).
    assert_eq!(i.stdin.as_deref(), Some(r.prompt.as_bytes()));
    let env: std::collections::BTreeMap<_, _> = i.env.iter().cloned().collect();
    assert_eq!(
        env["OPENCODE_CONFIG"],
        "/runs/r1/agents/r1/judge/opencode.json"
    );
    for v in [
        "OPENCODE_DISABLE_PROJECT_CONFIG",
        "OPENCODE_DISABLE_CLAUDE_CODE",
        "OPENCODE_PURE",
    ] {
        assert_eq!(env[v], "1", "{v}");
    }
    let (path, bytes) = &i.files[0];
    assert_eq!(
        path,
        &PathBuf::from("/runs/r1/agents/r1/judge/opencode.json")
    );
    let text = std::str::from_utf8(bytes).unwrap();
    // The only `{env:` is the key's; the role body's braces are escapes.
    assert_eq!(text.matches("{env:").count(), 1, "{text}");
    assert!(text.contains(r#""apiKey":"{env:LOCAL_KEY}""#), "{text}");
    assert!(!text.contains("{file:"));
    let c: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        c["agent"]["arev"]["prompt"], body,
        "the same text once parsed"
    );
    assert_eq!(
        c["provider"]["arev"]["options"]["baseURL"],
        "http://127.0.0.1:8000/v1"
    );
    assert_eq!(c["provider"]["arev"]["npm"], "@ai-sdk/openai-compatible");
    assert!(c["provider"]["arev"]["models"]["small"].is_object());
    assert_eq!(c["snapshot"], false);
    let p = &c["agent"]["arev"]["permission"];
    assert_eq!(p["*"], "deny");
    assert_eq!(p["read"][".git/*"], "deny");
    assert_eq!(p["grep"], "deny", "a one-file target: no search");
    assert!(p.get("edit").is_none(), "a reviewer never edits");
    assert_eq!(p["external_directory"]["*"], "deny");
    assert_eq!(p["external_directory"]["/runs/r1/target/*"], "allow");

    // Without an endpoint: the model as given, no provider, no key.
    let i = OpenCode.invocation(&agent(None), &req(Role::Fixer, "fix"));
    assert_eq!(i.args.last().map(String::as_str), Some("--model=m1"));
    let c: Value = serde_json::from_slice(&i.files[0].1).unwrap();
    assert!(c.get("provider").is_none());
    // The Fixer edits inside its worktree (the cwd) only: OpenCode asks `edit` with the path
    // relative to it, so anything outside (`../…`) and VCS metadata are denied, last rule
    // winning; bash, web and tasks stay denied by `*`.
    let p = &c["agent"]["arev"]["permission"];
    assert_eq!(
        p["edit"],
        json!({"*": "allow", "../*": "deny", ".git": "deny", ".git/*": "deny",
               "*/.git": "deny", "*/.git/*": "deny",
               ".opencode": "deny", ".opencode/*": "deny",
               "opencode.json": "deny", "opencode.jsonc": "deny"}),
        "the Fixer's edits"
    );
    assert_eq!(p["*"], "deny");
    assert!(p.get("bash").is_none() && p.get("webfetch").is_none());
    assert_eq!(p["external_directory"]["*"], "deny");
    assert_eq!(i.args[..5], ["run", "--format", "json", "--agent", AGENT]);
    // The Matcher reads like a reviewer: no edit, no search of a one-file target.
    let i = OpenCode.invocation(&agent(None), &req(Role::Matcher, "match"));
    let c: Value = serde_json::from_slice(&i.files[0].1).unwrap();
    let p = &c["agent"]["arev"]["permission"];
    assert!(p.get("edit").is_none(), "the Matcher never edits");
    assert_eq!(p["grep"], "deny");
}

#[test]
fn the_private_home_keeps_the_users_config_out_and_links_the_login() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().join("home");
    let data = home.join(".local/share/opencode");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("auth.json"), "{}").unwrap();
    std::fs::create_dir_all(home.join(".config/opencode")).unwrap();
    std::fs::write(home.join(".config/opencode/AGENTS.md"), "personal").unwrap();
    let env: Vec<(OsString, OsString)> = vec![
        ("HOME".into(), home.into_os_string()),
        (
            "XDG_CACHE_HOME".into(),
            d.path().join("cache").into_os_string(),
        ),
    ];
    let h = OpenCode.private_home(&env).unwrap().unwrap();
    let vars: std::collections::BTreeMap<_, _> = h.env.iter().cloned().collect();
    let own = PathBuf::from(&vars["HOME"]);
    assert!(own.starts_with(d.path().join("cache/arev/homes")));
    assert_eq!(
        vars["XDG_CACHE_HOME"],
        d.path().join("cache").display().to_string()
    );
    let config = PathBuf::from(&vars["XDG_CONFIG_HOME"]);
    assert!(config.starts_with(&own) && !config.join("opencode/AGENTS.md").exists());
    let auth = PathBuf::from(&vars["XDG_DATA_HOME"]).join("opencode/auth.json");
    assert_eq!(std::fs::read_link(&auth).unwrap(), data.join("auth.json"));
    drop(h);
    assert!(!own.exists() && data.join("auth.json").exists());
}

#[test]
fn braces_are_escaped_only_inside_strings() {
    let v = json!({"a": "x{y}z\"{", "b": [1, {"c": "}"}]});
    let text = escape_braces(&v.to_string());
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    assert!(!text.contains("x{") && text.starts_with('{') && text.ends_with('}'));
}

/// Paths outside the context scope are denied by `read` rules relative to the project (each
/// and all below it), which sort after the `*` allow and so are the last rules to match.
#[test]
fn paths_outside_the_context_scope_are_denied_to_read() {
    let mut r = req(Role::Enthusiast, "body");
    r.hidden = vec![
        PathBuf::from("/repo/.git"),
        PathBuf::from("/repo/.env"),
        PathBuf::from("/repo/build"),
        PathBuf::from("/elsewhere/x"),
    ];
    let p = permissions(&r);
    let read = p["read"].as_object().unwrap();
    for k in [".env", ".env/*", "build", "build/*", ".git", ".git/*"] {
        assert_eq!(read[k], "deny", "{k}");
    }
    assert_eq!(read["*"], "allow");
    assert!(!read.keys().any(|k| k.contains("elsewhere")));
    let keys: Vec<&String> = read.keys().collect();
    assert_eq!(keys[0], "*", "the allow must come first: {keys:?}");
}

/// Every hidden path — an ignored `.env`, and one whose name is not UTF-8, which no `read`
/// rule can name (none is written, lossy or not) — is masked in OpenCode's own view, the
/// same bwrap that hides its plugins: `.opencode/` a tmpfs, each file an empty read-only
/// file.
#[test]
fn hidden_paths_are_masked_in_the_plugin_view() {
    use std::os::unix::ffi::OsStrExt;
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().canonicalize().unwrap().join("repo");
    let out = repo.join(".arev/runs/r/agents/r1/enthusiast");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::create_dir_all(repo.join(".opencode/plugin")).unwrap();
    let raw = repo.join(std::ffi::OsStr::from_bytes(b".env\xff"));
    std::fs::write(&raw, "SECRET=1\n").unwrap();
    std::fs::write(repo.join(".env"), "SECRET=2\n").unwrap();
    let mut r = req(Role::Enthusiast, "body");
    r.cwd = repo.clone();
    r.read_dirs = vec![repo.clone()];
    r.out_dir = out;
    r.hidden = vec![repo.join(".git"), repo.join(".env"), raw.clone()];
    assert!(!permissions(&r).to_string().contains('\u{fffd}'));
    let w = OpenCode.wrap(&agent(None), &r).unwrap().expect("a view");
    let has = |flag: &str, p: &std::path::Path| {
        w.args
            .windows(2)
            .any(|a| a[0] == flag && a[1] == p.as_os_str())
    };
    let masked = |p: &std::path::Path| {
        w.args
            .windows(3)
            .any(|a| a[0] == "--ro-bind" && a[2] == p.as_os_str())
    };
    assert!(
        has("--tmpfs", &repo.join(".opencode")) && masked(&raw) && masked(&repo.join(".env")),
        "{:?}",
        w.args
    );
}

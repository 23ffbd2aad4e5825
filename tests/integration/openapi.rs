//! Validation of the requests arev sends to GitHub against GitHub's official OpenAPI
//! description (npm `@octokit/openapi`, `generated/api.github.com.json`; `.ci/run` installs
//! the pinned version and sets `AREV_TEST_GITHUB_OPENAPI` to that file).
//!
//! Each request must match an operation (method + path template), use only query
//! parameters the operation declares, and carry a body valid against its `requestBody`
//! schema — made strict here: an object schema that lists its properties accepts no other
//! property, so a misspelt field (which GitHub would silently ignore) fails the test.
//! Without the variable the check prints "skipped"; with `AREV_REQUIRE_REAL_CLIS=1` it fails.

use crate::fake_github::Request;
use serde_json::{Map, Value};
use std::sync::OnceLock;

fn spec() -> Option<&'static Value> {
    static SPEC: OnceLock<Option<Value>> = OnceLock::new();
    SPEC.get_or_init(|| {
        let path = std::env::var("AREV_TEST_GITHUB_OPENAPI").ok()?;
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("AREV_TEST_GITHUB_OPENAPI={path}: {e}"));
        Some(serde_json::from_str(&text).expect("the OpenAPI description is JSON"))
    })
    .as_ref()
}

/// The OpenAPI description, or None (after saying "skipped") when it is not installed.
pub fn github_spec(test: &str) -> Option<&'static Value> {
    match spec() {
        Some(s) => Some(s),
        None if std::env::var("AREV_REQUIRE_REAL_CLIS").as_deref() == Ok("1") => {
            panic!("{test}: AREV_TEST_GITHUB_OPENAPI is not set and AREV_REQUIRE_REAL_CLIS=1")
        }
        None => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("{test}: OpenAPI validation skipped (AREV_TEST_GITHUB_OPENAPI not set)");
            }
            None
        }
    }
}

/// Resolve `#/components/...` references (cycles cut at depth 40), turn OpenAPI 3.0
/// `nullable` into a JSON Schema type list, and close every object that lists properties.
fn prepare(spec: &Value, v: &Value, depth: u32) -> Value {
    assert!(depth < 40, "reference cycle");
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                let target = spec
                    .pointer(r.trim_start_matches('#'))
                    .unwrap_or_else(|| panic!("dangling $ref {r}"));
                return prepare(spec, target, depth + 1);
            }
            let mut out = Map::new();
            for (k, x) in m {
                if matches!(
                    k.as_str(),
                    "example" | "examples" | "description" | "nullable"
                ) {
                    continue;
                }
                // The keys of `properties` are property names (`description` is one), each
                // a schema.
                let x = match (k.as_str(), x) {
                    ("properties", Value::Object(props)) => Value::Object(
                        props
                            .iter()
                            .map(|(name, p)| (name.clone(), prepare(spec, p, depth + 1)))
                            .collect(),
                    ),
                    _ => prepare(spec, x, depth + 1),
                };
                out.insert(k.clone(), x);
            }
            if m.get("nullable") == Some(&Value::Bool(true)) {
                if let Some(Value::String(t)) = out.get("type").cloned() {
                    out.insert("type".into(), serde_json::json!([t, "null"]));
                }
            }
            if out.contains_key("properties") && !out.contains_key("additionalProperties") {
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| prepare(spec, x, depth + 1)).collect()),
        other => other.clone(),
    }
}

/// The path template of `spec` that `path` matches (literal segments win over parameters).
fn template<'a>(spec: &'a Value, path: &str) -> Option<&'a str> {
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let paths = spec["paths"].as_object()?;
    paths
        .keys()
        .filter_map(|t| {
            let ts: Vec<&str> = t.trim_start_matches('/').split('/').collect();
            if ts.len() != segs.len() {
                return None;
            }
            let mut literal = 0;
            for (a, b) in ts.iter().zip(&segs) {
                if a.starts_with('{') && a.ends_with('}') {
                    if b.is_empty() {
                        return None;
                    }
                } else if a == b {
                    literal += 1;
                } else {
                    return None;
                }
            }
            Some((literal, t.as_str()))
        })
        .max_by_key(|(l, _)| *l)
        .map(|(_, t)| t)
}

/// Every request valid against the description; panics listing every violation.
pub fn assert_valid_github_requests(test: &str, requests: &[Request]) {
    let Some(spec) = github_spec(test) else {
        return;
    };
    assert!(!requests.is_empty(), "{test}: no request to validate");
    let mut errors = vec![];
    // GraphQL (the token's identity) is not part of the REST description.
    for r in requests.iter().filter(|r| r.path != "/api/graphql") {
        let Some(t) = template(spec, &r.path) else {
            errors.push(format!(
                "{} {}: no such path in the OpenAPI description",
                r.method, r.path
            ));
            continue;
        };
        let Some(op) = spec["paths"][t].get(r.method.to_ascii_lowercase()) else {
            errors.push(format!(
                "{} {}: {t} has no {} operation",
                r.method, r.path, r.method
            ));
            continue;
        };
        let declared: Vec<String> = op["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| prepare(spec, p, 0))
            .filter(|p| p["in"] == "query")
            .filter_map(|p| p["name"].as_str().map(String::from))
            .collect();
        for q in r.query.keys() {
            if !declared.contains(q) {
                errors.push(format!(
                    "{} {}: undeclared query parameter `{q}`",
                    r.method, r.path
                ));
            }
        }
        let schema = op.pointer("/requestBody/content/application~1json/schema");
        match (schema, &r.body) {
            (None, None) => {}
            (None, Some(_)) => errors.push(format!(
                "{} {}: a body, but the operation takes none",
                r.method, r.path
            )),
            (Some(_), None) => {
                if op["requestBody"]["required"] == true {
                    errors.push(format!(
                        "{} {}: the operation requires a body",
                        r.method, r.path
                    ));
                }
            }
            (Some(s), Some(body)) => {
                let schema = prepare(spec, s, 0);
                let v = jsonschema::validator_for(&schema).expect("the request schema compiles");
                for e in v.iter_errors(body) {
                    errors.push(format!(
                        "{} {} ({t}): {e} at {}",
                        r.method,
                        r.path,
                        e.instance_path()
                    ));
                }
            }
        }
    }
    assert!(
        errors.is_empty(),
        "{test}: requests not valid against GitHub's OpenAPI description:\n{}",
        errors.join("\n")
    );
}

/// A fake's answer `body` to `GET path` valid against the 200 response schema of the
/// operation (objects closed as for requests): the fake answers as GitHub does.
pub fn assert_valid_github_answer(test: &str, path: &str, body: &Value) {
    let Some(spec) = github_spec(test) else {
        return;
    };
    let t = template(spec, path).unwrap_or_else(|| panic!("{test}: no path for {path}"));
    let schema = spec["paths"][t]["get"]
        .pointer("/responses/200/content/application~1json/schema")
        .unwrap_or_else(|| panic!("{test}: {t} has no JSON 200 answer"));
    let schema = prepare(spec, schema, 0);
    let v = jsonschema::validator_for(&schema).expect("the answer schema compiles");
    let errors: Vec<String> = v
        .iter_errors(body)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{test}: GET {path} ({t}): the answer is not GitHub's shape:\n{}",
        errors.join("\n")
    );
}

/// The checker rejects what GitHub would: a misspelt field, a wrong type, a bad enum, an
/// unknown path and an undeclared query parameter.
#[test]
fn the_openapi_check_can_fail() {
    let Some(spec) = github_spec("the_openapi_check_can_fail") else {
        return;
    };
    let req = |method: &str, path: &str, query: &[(&str, &str)], body: Option<Value>| Request {
        method: method.into(),
        path: path.into(),
        query: query
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body,
        status: 200,
        auth: String::new(),
    };
    let good = [
        req(
            "GET",
            "/repos/o/r/issues/1/comments",
            &[("per_page", "100"), ("page", "2")],
            None,
        ),
        req(
            "POST",
            "/repos/o/r/pulls/1/reviews",
            &[],
            Some(
                serde_json::json!({"commit_id": "a", "event": "COMMENT", "body": "b",
            "comments": [{"path": "x", "line": 1, "side": "RIGHT", "body": "c"}]}),
            ),
        ),
        req(
            "PATCH",
            "/repos/o/r/issues/comments/5",
            &[],
            Some(serde_json::json!({"body": "b"})),
        ),
    ];
    assert_valid_github_requests("good", &good);
    for bad in [
        req(
            "POST",
            "/repos/o/r/pulls/1/reviews",
            &[],
            Some(
                serde_json::json!({"event": "COMMENT", "comments": [{"path": "x", "lin": 1, "body": "c"}]}),
            ),
        ),
        req(
            "POST",
            "/repos/o/r/pulls/1/reviews",
            &[],
            Some(serde_json::json!({"event": "COMMENTED"})),
        ),
        req(
            "POST",
            "/repos/o/r/issues/1/comments",
            &[],
            Some(serde_json::json!({"body": 5})),
        ),
        req(
            "POST",
            "/repos/o/r/issues/1/comments",
            &[],
            Some(serde_json::json!({})),
        ),
        req("GET", "/repos/o/r/pulls/1/nope", &[], None),
        req(
            "GET",
            "/repos/o/r/pulls/1/files",
            &[("perpage", "100")],
            None,
        ),
    ] {
        let shown = format!("{} {} {:?}", bad.method, bad.path, bad.body);
        let caught =
            std::panic::catch_unwind(|| assert_valid_github_requests("bad", &[bad])).is_err();
        assert!(caught, "not rejected: {shown}");
    }
    let _ = spec;
}

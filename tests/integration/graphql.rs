//! Validation of the GraphQL documents arev sends to GitHub against GitHub's published
//! schema (npm `@octokit/graphql-schema`; `.ci/run` installs the pinned version and sets
//! `AREV_TEST_GITHUB_GRAPHQL_SCHEMA` to the package's directory). Each request's `query` is
//! parsed and validated with the `graphql` package the schema ships with, and its
//! `variables` are checked against the operation's declared variables (undeclared or
//! mistyped ones fail), by `tests/graphql/validate.mjs` under `node`. Without the variable
//! the check prints "skipped"; with `AREV_REQUIRE_REAL_CLIS=1` it fails.

use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};

/// The schema package's directory, or None (after saying "skipped").
fn schema_dir(test: &str) -> Option<String> {
    match std::env::var("AREV_TEST_GITHUB_GRAPHQL_SCHEMA") {
        Ok(d) if !d.is_empty() => Some(d),
        _ if std::env::var("AREV_REQUIRE_REAL_CLIS").as_deref() == Ok("1") => panic!(
            "{test}: AREV_TEST_GITHUB_GRAPHQL_SCHEMA is not set and AREV_REQUIRE_REAL_CLIS=1"
        ),
        _ => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!(
                    "{test}: GraphQL validation skipped (AREV_TEST_GITHUB_GRAPHQL_SCHEMA not set)"
                );
            }
            None
        }
    }
}

/// The error messages of each request (`{query, variables}`), in order.
fn errors_of(dir: &str, requests: &[Value]) -> Vec<Vec<String>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/graphql/validate.mjs");
    let mut child = Command::new("node")
        .args([script, dir])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(Value::Array(requests.to_vec()).to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "validate.mjs failed");
    serde_json::from_slice(&out.stdout).expect("validate.mjs prints JSON")
}

/// Every GraphQL request valid against GitHub's schema; panics listing every violation.
pub fn assert_valid_github_graphql(test: &str, requests: &[Value]) {
    let Some(dir) = schema_dir(test) else {
        return;
    };
    assert!(
        !requests.is_empty(),
        "{test}: no GraphQL request to validate"
    );
    let bad: Vec<String> = requests
        .iter()
        .zip(errors_of(&dir, requests))
        .filter(|(_, e)| !e.is_empty())
        .map(|(r, e)| format!("{}: {}", r["query"], e.join("; ")))
        .collect();
    assert!(
        bad.is_empty(),
        "{test}: GraphQL documents not valid against GitHub's schema:\n{}",
        bad.join("\n")
    );
}

/// The checker rejects what GitHub would: an unknown field, a wrong argument, an undeclared
/// or mistyped variable.
#[test]
fn the_graphql_check_can_fail() {
    let Some(dir) = schema_dir("the_graphql_check_can_fail") else {
        return;
    };
    let good = json!({"query": "query { viewer { __typename login } }"});
    assert_valid_github_graphql("good", &[good]);
    for bad in [
        json!({"query": "query { viewer { loginx } }"}),
        json!({"query": "mutation($t: ID!) { resolveReviewThread(input: {id: $t}) { thread { id } } }", "variables": {"t": "x"}}),
        json!({"query": "mutation($t: ID!) { resolveReviewThread(input: {threadId: $t}) { thread { id } } }", "variables": {"t": "x", "extra": 1}}),
        json!({"query": "query($n: Int!) { repository(owner: \"o\", name: \"r\") { pullRequest(number: $n) { id } } }", "variables": {"n": "seven"}}),
        json!({"query": "query { viewer { login "}),
    ] {
        let e = errors_of(&dir, std::slice::from_ref(&bad));
        assert!(!e[0].is_empty(), "not rejected: {bad}");
    }
}

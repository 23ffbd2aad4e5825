//! What the hooks print (docs/architecture.md §16.2): `{"decision":"block","reason"}` for a
//! concern, `{"continue":false,"stopReason","systemMessage"}` for a blocker, a lone
//! `systemMessage` when the review did not run (fail open) or did not finish in time —
//! pointers, not payloads: each finding in one line plus its edit instruction, and the
//! report's path.

use super::decide::{BlockerWhy, Decision, FindingBrief, Verdict};
use serde_json::{json, Value};

/// One finding as a list item: `[high] src/a.rs:2 (error-handling) — description` and the
/// edit instruction on the next line.
fn item(n: usize, f: &FindingBrief) -> String {
    let loc = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        (Some(file), None) => file.clone(),
        _ => "(no location)".to_string(),
    };
    let desc = f.description.lines().next().unwrap_or("").trim();
    let mut s = format!(
        "{n}. [{}] {loc} ({}) — {desc}",
        f.severity.as_str(),
        f.category
    );
    if let Some(e) = f
        .edit_instruction
        .as_deref()
        .filter(|e| !e.trim().is_empty())
    {
        s.push_str(&format!("\n   Edit: {}", e.trim()));
    }
    s
}

fn list(findings: &[FindingBrief]) -> String {
    findings
        .iter()
        .enumerate()
        .map(|(i, f)| item(i + 1, f))
        .collect::<Vec<_>>()
        .join("\n")
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The asides the session carries (this verdict's included), for the approve message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionAsides {
    pub total: usize,
    /// Where they are listed (the session's state.json).
    pub listed_in: String,
}

/// The hook's stdout for a Stop decision; `None` = print nothing.
///
/// `verdict` is the one decided on (for the report path); `fresh` is true when this very
/// invocation ran the review (an approve then says so once); `session` counts the asides of
/// every approved review since review was enabled.
pub fn stop_output(
    d: &Decision,
    verdict: Option<&Verdict>,
    fresh: bool,
    max_nudges: u32,
    max_blocks: u32,
    session: &SessionAsides,
) -> Option<Value> {
    let report = verdict.map_or_else(|| "(no report)".to_string(), |v| v.report.clone());
    match d {
        Decision::Silent(_) | Decision::Review => None,
        Decision::Approve => approve_output(verdict?, fresh, &report, session),
        Decision::FailOpen(why) => Some(json!({
            "systemMessage": format!(
                "arev: the review did NOT run: {why}. The agent was allowed to stop unreviewed."
            )
        })),
        Decision::Unfinished(why) => Some(json!({
            "systemMessage": format!(
                "arev: the review did NOT finish: {why}. The agent was allowed to stop \
                 unreviewed; these changes are not reviewed again by the hook (run `arev run \
                 diff` yourself, or raise [hook] timeout)."
            )
        })),
        Decision::Block(concerns) => Some(json!({
            "decision": "block",
            "reason": format!(
                "arev reviewed your changes and confirmed {}. Fix each one, then stop again:\n\
                 {}\n\
                 Full report: {report}\n\
                 If you are sure a finding is wrong, say why in your reply instead of changing \
                 code: stopping again without changing the diff hands the decision to the user.",
                plural(concerns.len(), "concern", "concerns"),
                list(concerns)
            ),
        })),
        Decision::Blocker { why, findings } => Some(blocker_output(
            *why,
            findings,
            &report,
            (max_nudges, max_blocks),
        )),
    }
}

/// An approval: said once, by the invocation that ran the review, with the asides.
fn approve_output(
    v: &Verdict,
    fresh: bool,
    report: &str,
    session: &SessionAsides,
) -> Option<Value> {
    if !fresh {
        return None;
    }
    let mut asides = if v.asides.is_empty() {
        String::new()
    } else {
        format!(
            "; {} logged (low): {}",
            plural(v.asides.len(), "aside", "asides"),
            report
        )
    };
    if session.total > v.asides.len() {
        asides.push_str(&format!(
            "; {} so far in this session, listed in {}",
            plural(session.total, "aside", "asides"),
            session.listed_in
        ));
    }
    Some(json!({
        "systemMessage": format!(
            "arev: reviewed the session's changes (run {}): no concerns{asides}",
            v.run_id
        )
    }))
}

/// Ending the agent's turn: why, the findings it stands on, and the report.
fn blocker_output(
    why: BlockerWhy,
    findings: &[FindingBrief],
    report: &str,
    (max_nudges, max_blocks): (u32, u32),
) -> Value {
    let (stop, detail) = match why {
        BlockerWhy::Critical => (
            "arev: a critical finding in the session's changes needs you".to_string(),
            "arev confirmed a critical finding; the agent's turn was ended so that \
             you decide what happens next"
                .to_string(),
        ),
        BlockerWhy::StoppedWithoutChange => (
            "arev: the agent stopped again without changing the diff".to_string(),
            "the agent was blocked on the findings below and tried to stop again \
             without changing anything; over to you"
                .to_string(),
        ),
        BlockerWhy::ConcernStanding => (
            "arev: a concern is still standing after the agent was nudged".to_string(),
            format!(
                "a concern is still confirmed after {} (max_nudges); over to you",
                plural(max_nudges as usize, "block", "blocks")
            ),
        ),
        BlockerWhy::MaxBlocks => (
            "arev: too many blocks in a row".to_string(),
            format!(
                "arev blocked {} in a row (max_blocks) and will not block again; \
                 over to you",
                plural(max_blocks as usize, "time", "times")
            ),
        ),
    };
    let findings = if findings.is_empty() {
        String::new()
    } else {
        format!("\n{}", list(findings))
    };
    json!({
        "continue": false,
        "stopReason": stop,
        "systemMessage": format!("arev: {detail}.{findings}\nReport: {report}"),
    })
}

/// A `systemMessage`-only output (for the prompt hook and fail-open paths).
pub fn system_message(text: &str) -> Value {
    json!({ "systemMessage": text })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Severity;

    fn f(sev: Severity) -> FindingBrief {
        FindingBrief {
            fingerprint: "fp".into(),
            severity: sev,
            file: Some("src/calc.rs".into()),
            line: Some(2),
            category: "arithmetic".into(),
            description: "subtracts instead of adding\nmore".into(),
            edit_instruction: Some("src/calc.rs:2 — replace `a - b` with `a + b`".into()),
        }
    }

    fn v() -> Verdict {
        Verdict {
            sha: "s".into(),
            run_id: "RUN".into(),
            report: "/repo/.arev/runs/RUN/report.md".into(),
            critical: vec![],
            concerns: vec![f(Severity::High)],
            asides: vec![f(Severity::Low)],
        }
    }

    #[test]
    fn block_names_each_finding_its_edit_and_the_report() {
        let out = stop_output(
            &Decision::Block(vec![f(Severity::High)]),
            Some(&v()),
            true,
            3,
            5,
            &SessionAsides::default(),
        )
        .unwrap();
        assert_eq!(out["decision"], "block");
        let r = out["reason"].as_str().unwrap();
        assert!(r.contains("1 concern."), "{r}");
        assert!(r.contains("1. [high] src/calc.rs:2 (arithmetic) — subtracts instead of adding\n   Edit: src/calc.rs:2 — replace `a - b` with `a + b`"), "{r}");
        assert!(
            r.contains("Full report: /repo/.arev/runs/RUN/report.md"),
            "{r}"
        );
        assert!(!r.contains("more"), "only the first line of a description");
        assert_eq!(out.as_object().unwrap().len(), 2);
    }

    #[test]
    fn blocker_ends_the_turn_with_a_message_for_the_human() {
        let d = Decision::Blocker {
            why: BlockerWhy::MaxBlocks,
            findings: vec![f(Severity::Medium)],
        };
        let out = stop_output(&d, Some(&v()), false, 3, 5, &SessionAsides::default()).unwrap();
        assert_eq!(out["continue"], false);
        assert!(out["stopReason"].as_str().unwrap().starts_with("arev: "));
        let m = out["systemMessage"].as_str().unwrap();
        assert!(
            m.contains("5 times in a row") && m.contains("[medium] src/calc.rs:2"),
            "{m}"
        );
        assert!(m.ends_with("Report: /repo/.arev/runs/RUN/report.md"), "{m}");
        assert!(out.get("decision").is_none());
    }

    #[test]
    fn fail_open_says_the_review_did_not_run_and_approve_speaks_once() {
        let out = stop_output(
            &Decision::FailOpen("claude not found".into()),
            None,
            false,
            3,
            5,
            &SessionAsides::default(),
        )
        .unwrap();
        let m = out["systemMessage"].as_str().unwrap();
        assert!(m.contains("did NOT run: claude not found"), "{m}");
        assert!(out.get("decision").is_none() && out.get("continue").is_none());
        let one = SessionAsides {
            total: 1,
            listed_in: "/s/state.json".into(),
        };
        let a = stop_output(&Decision::Approve, Some(&v()), true, 3, 5, &one).unwrap();
        assert!(a["systemMessage"]
            .as_str()
            .unwrap()
            .contains("1 aside logged"));
        assert!(!a["systemMessage"].as_str().unwrap().contains("so far"));
        assert_eq!(
            stop_output(&Decision::Approve, Some(&v()), false, 3, 5, &one),
            None
        );
        // Asides carried from earlier approved reviews are counted and pointed at.
        let three = SessionAsides {
            total: 3,
            listed_in: "/s/state.json".into(),
        };
        let a = stop_output(&Decision::Approve, Some(&v()), true, 3, 5, &three).unwrap();
        let m = a["systemMessage"].as_str().unwrap();
        assert!(
            m.contains("1 aside logged (low)")
                && m.contains("3 asides so far in this session, listed in /s/state.json"),
            "{m}"
        );
    }

    #[test]
    fn unfinished_says_the_review_did_not_finish() {
        let out = stop_output(
            &Decision::Unfinished("out of time — run dir /r".into()),
            None,
            false,
            3,
            5,
            &SessionAsides::default(),
        )
        .unwrap();
        let m = out["systemMessage"].as_str().unwrap();
        assert!(
            m.contains("did NOT finish: out of time — run dir /r"),
            "{m}"
        );
        assert!(out.get("decision").is_none() && out.get("continue").is_none());
    }
}

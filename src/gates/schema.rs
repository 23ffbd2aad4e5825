//! Schema gate: extract the JSON object from an agent's answer and validate it against the role schema.

use crate::findings::{AdversaryOutput, EnthusiastOutput, FixerOutput, JudgeOutput, ProverOutput};
use serde::de::DeserializeOwned;
use std::collections::HashSet;

/// A role output that can be validated beyond serde's typing.
pub trait AnswerSchema: DeserializeOwned {
    /// Extra checks (ids, references); an error message on failure.
    fn check(&self) -> Result<(), String>;
}

impl AnswerSchema for EnthusiastOutput {
    fn check(&self) -> Result<(), String> {
        let mut seen = HashSet::new();
        for f in &self.findings {
            if f.id.trim().is_empty() {
                return Err("a finding has an empty id".into());
            }
            if !seen.insert(f.id.as_str()) {
                return Err(format!("finding id {} appears twice", f.id));
            }
            if f.line == Some(0) {
                return Err(format!("finding {}: line numbers start at 1", f.id));
            }
            if f.category.trim().is_empty() {
                return Err(format!("finding {}: empty category", f.id));
            }
        }
        Ok(())
    }
}

impl AnswerSchema for AdversaryOutput {
    fn check(&self) -> Result<(), String> {
        for z in &self.safe_zones {
            if z.line_start == 0 || z.line_end < z.line_start {
                return Err(format!("safe zone {}: bad line range", z.id));
            }
        }
        Ok(())
    }
}

impl AnswerSchema for JudgeOutput {
    fn check(&self) -> Result<(), String> {
        let mut seen = HashSet::new();
        for r in &self.rulings {
            if !seen.insert(r.finding_id.as_str()) {
                return Err(format!("two rulings for {}", r.finding_id));
            }
        }
        Ok(())
    }
}

impl AnswerSchema for FixerOutput {
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// At most this many files and argv words in a reproducer.
const PROVER_MAX_FILES: usize = 32;
const PROVER_MAX_ARGV: usize = 64;

impl AnswerSchema for ProverOutput {
    fn check(&self) -> Result<(), String> {
        let r = match self {
            ProverOutput::Unprovable(u) if u.unprovable.trim().is_empty() => {
                return Err("`unprovable` needs a reason".into())
            }
            ProverOutput::Unprovable(_) => return Ok(()),
            ProverOutput::Reproducer(r) => r,
        };
        if r.files.is_empty() || r.files.len() > PROVER_MAX_FILES {
            return Err(format!(
                "`files` lists the 1 to {PROVER_MAX_FILES} files you created"
            ));
        }
        if r.command.is_empty() || r.command.len() > PROVER_MAX_ARGV {
            return Err(format!(
                "`command` is an argv of 1 to {PROVER_MAX_ARGV} words"
            ));
        }
        if r.command[0].trim().is_empty() || r.command.iter().any(|w| w.contains('\0')) {
            return Err("`command` names a program and holds no NUL".into());
        }
        for f in &r.files {
            let p = std::path::Path::new(f);
            let plain = !f.is_empty()
                && !f.contains('\0')
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
            if !plain {
                return Err(format!(
                    "file `{f}`: paths are relative to the worktree root, without `..`"
                ));
            }
        }
        Ok(())
    }
}

/// The JSON object inside an answer: the text itself, a fenced block, or the outermost `{…}`.
pub fn extract_json(text: &str) -> &str {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("```") {
        let body = rest.split_once('\n').map_or("", |(_, b)| b);
        let body = body.trim_end();
        return body.strip_suffix("```").unwrap_or(body).trim();
    }
    if t.starts_with('{') {
        return t;
    }
    match (t.find('{'), t.rfind('}')) {
        (Some(a), Some(b)) if a < b => &t[a..=b],
        _ => t,
    }
}

/// Parse and validate an answer; the error message is what the re-dispatch is told.
pub fn parse_answer<T: AnswerSchema>(text: &str) -> Result<T, String> {
    let json = extract_json(text);
    if json.is_empty() {
        return Err("the answer is empty".into());
    }
    let value: T = serde_json::from_str(json).map_err(|e| format!("invalid JSON: {e}"))?;
    value.check()?;
    Ok(value)
}

//! Schema gate: extract the JSON object from an agent's answer and validate it against the role schema.

use crate::findings::{AdversaryOutput, EnthusiastOutput, FixerOutput, JudgeOutput, ProverOutput};
use serde::de::DeserializeOwned;
use std::collections::HashSet;

/// Why an answer is not valid for its role: what the re-dispatch is told.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("the answer is empty")]
    Empty,
    #[error("invalid JSON: {0}")]
    Json(#[source] serde_json::Error),
    #[error(transparent)]
    Check(#[from] AnswerError),
}

/// A parsed answer that breaks a rule of its role's schema serde cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("a finding has an empty id")]
    EmptyId,
    #[error("finding id {0} appears twice")]
    DuplicateId(String),
    #[error("finding {0}: line numbers start at 1")]
    LineZero(String),
    #[error("finding {0}: empty category")]
    EmptyCategory(String),
    #[error("safe zone {0}: bad line range")]
    BadSafeZone(String),
    #[error("two rulings for {0}")]
    TwoRulings(String),
    #[error("`unprovable` needs a reason")]
    NoUnprovableReason,
    #[error("`files` lists the 1 to {PROVER_MAX_FILES} files you created")]
    FileCount,
    #[error("`command` is an argv of 1 to {PROVER_MAX_ARGV} words")]
    ArgvLength,
    #[error("`command` names a program and holds no NUL")]
    BadProgram,
    #[error("file `{0}`: paths are relative to the worktree root, without `..`")]
    BadFile(String),
}

/// A role output that can be validated beyond serde's typing.
pub trait AnswerSchema: DeserializeOwned {
    /// Extra checks (ids, references).
    fn check(&self) -> Result<(), AnswerError>;
}

impl AnswerSchema for EnthusiastOutput {
    fn check(&self) -> Result<(), AnswerError> {
        let mut seen = HashSet::new();
        for f in &self.findings {
            if f.id.trim().is_empty() {
                return Err(AnswerError::EmptyId);
            }
            if !seen.insert(f.id.as_str()) {
                return Err(AnswerError::DuplicateId(f.id.clone()));
            }
            if f.line == Some(0) {
                return Err(AnswerError::LineZero(f.id.clone()));
            }
            if f.category.trim().is_empty() {
                return Err(AnswerError::EmptyCategory(f.id.clone()));
            }
        }
        Ok(())
    }
}

impl AnswerSchema for AdversaryOutput {
    fn check(&self) -> Result<(), AnswerError> {
        for z in &self.safe_zones {
            if z.line_start == 0 || z.line_end < z.line_start {
                return Err(AnswerError::BadSafeZone(z.id.clone()));
            }
        }
        Ok(())
    }
}

impl AnswerSchema for JudgeOutput {
    fn check(&self) -> Result<(), AnswerError> {
        let mut seen = HashSet::new();
        for r in &self.rulings {
            if !seen.insert(r.finding_id.as_str()) {
                return Err(AnswerError::TwoRulings(r.finding_id.clone()));
            }
        }
        Ok(())
    }
}

impl AnswerSchema for FixerOutput {
    fn check(&self) -> Result<(), AnswerError> {
        Ok(())
    }
}

/// At most this many files and argv words in a reproducer.
const PROVER_MAX_FILES: usize = 32;
const PROVER_MAX_ARGV: usize = 64;

impl AnswerSchema for ProverOutput {
    fn check(&self) -> Result<(), AnswerError> {
        let r = match self {
            ProverOutput::Unprovable(u) if u.unprovable.trim().is_empty() => {
                return Err(AnswerError::NoUnprovableReason)
            }
            ProverOutput::Unprovable(_) => return Ok(()),
            ProverOutput::Reproducer(r) => r,
        };
        if r.files.is_empty() || r.files.len() > PROVER_MAX_FILES {
            return Err(AnswerError::FileCount);
        }
        if r.command.is_empty() || r.command.len() > PROVER_MAX_ARGV {
            return Err(AnswerError::ArgvLength);
        }
        if r.command[0].trim().is_empty() || r.command.iter().any(|w| w.contains('\0')) {
            return Err(AnswerError::BadProgram);
        }
        for f in &r.files {
            let p = std::path::Path::new(f);
            let plain = !f.is_empty()
                && !f.contains('\0')
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
            if !plain {
                return Err(AnswerError::BadFile(f.clone()));
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
pub fn parse_answer<T: AnswerSchema>(text: &str) -> Result<T, SchemaError> {
    let json = extract_json(text);
    if json.is_empty() {
        return Err(SchemaError::Empty);
    }
    let value: T = serde_json::from_str(json).map_err(SchemaError::Json)?;
    value.check()?;
    Ok(value)
}

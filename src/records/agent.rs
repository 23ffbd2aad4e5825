//! Typed agent output schemas (docs/architecture.md §8.2) and the enums shared
//! across stages.
//!
//! These are public wire types: they derive `JsonSchema` and are written to
//! `schemas/` by `arev schema --write`. Agent output is parsed leniently for
//! unknown fields (models add keys) but strictly for enums and required keys.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Severity of a finding. Ordered: `Low < Medium < High < Critical`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub const ALL: [Severity; 4] = [Self::Critical, Self::High, Self::Medium, Self::Low];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The Judge's final severity: a severity, or `dismissed`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FinalSeverity {
    Dismissed,
    Low,
    Medium,
    High,
    Critical,
}

impl FinalSeverity {
    /// The severity of a ruling that was not dismissed.
    pub fn severity(self) -> Option<Severity> {
        match self {
            Self::Dismissed => None,
            Self::Low => Some(Severity::Low),
            Self::Medium => Some(Severity::Medium),
            Self::High => Some(Severity::High),
            Self::Critical => Some(Severity::Critical),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dismissed => "dismissed",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Critical => "critical",
        }
    }
}

/// What kind of artefact a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ArtefactType {
    Code,
    Config,
    Docs,
    Spec,
}

/// Model tier. Ordered: `Haiku < Sonnet < Opus` (the escalation ladder).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Haiku,
    Sonnet,
    Opus,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Haiku => "haiku",
            Self::Sonnet => "sonnet",
            Self::Opus => "opus",
        }
    }

    /// One step up the ladder, saturating at opus.
    pub fn up(self) -> Tier {
        match self {
            Self::Haiku => Self::Sonnet,
            Self::Sonnet | Self::Opus => Self::Opus,
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The agent roles: the three reviewers, the Fixer (iterate mode), the Prover (`--prove`)
/// and the Matcher (`arev eval bench --score`: does a finding name a known issue?).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Enthusiast,
    Adversary,
    Judge,
    Fixer,
    Prover,
    Matcher,
}

impl Role {
    /// Lower-case name used in file names and error codes (`enthusiast_malformed_json`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enthusiast => "enthusiast",
            Self::Adversary => "adversary",
            Self::Judge => "judge",
            Self::Fixer => "fixer",
            Self::Prover => "prover",
            Self::Matcher => "matcher",
        }
    }

    /// Capitalised name used in the prompt's first line.
    pub fn title(self) -> &'static str {
        match self {
            Self::Enthusiast => "Enthusiast",
            Self::Adversary => "Adversary",
            Self::Judge => "Judge",
            Self::Fixer => "Fixer",
            Self::Prover => "Prover",
            Self::Matcher => "Matcher",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The Matcher's answer (`arev eval bench --score`): whether a candidate comment names the
/// same underlying issue as a golden one — the offline benchmark's judge answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatcherOutput {
    /// A brief explanation.
    pub reasoning: String,
    #[serde(rename = "match")]
    pub matched: bool,
    /// From 0 to 1.
    #[serde(deserialize_with = "unit_interval")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
}

fn unit_interval<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(serde::de::Error::custom(format!(
            "confidence {v} is not between 0 and 1"
        )))
    }
}

/// One Enthusiast finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// `F1`, `F2`, … unique within one pass.
    pub id: String,
    pub severity: Severity,
    pub target_type: ArtefactType,
    /// Repo-relative path (code) or section path (spec); null for target-wide findings.
    pub file: Option<String>,
    /// 1-based line; null when not line-specific.
    pub line: Option<u32>,
    /// Defect class, e.g. `error-handling`, `security`, `concurrency`.
    pub category: String,
    pub description: String,
    /// Quote of or pointer to the code that shows the defect.
    pub evidence: String,
    /// Always `enthusiast`.
    pub source: String,
    /// Set only when building on a finding of an earlier round.
    #[serde(default)]
    pub prior_finding_id: Option<String>,
    /// Context lines that support it (a caller that breaks, a test that pins the
    /// behaviour): at most 5; the citation gate drops those that do not hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextCite>,
}

/// At most this many context citations per finding, Adversary map entry or ruling.
pub const MAX_CONTEXT_CITES: usize = 5;

/// A citation of one line of the context scope (docs/contracts.md §22.2): the file
/// (repository-relative), the 1-based line and a quote of that line's text. The citation gate
/// keeps it only when the file is in the scope, the line exists and holds the quote
/// (whitespace-normalised).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct ContextCite {
    pub file: String,
    pub line: u32,
    /// The cited line's text, or a part of it (at least 8 characters, or the whole line).
    pub text: String,
}

/// The Enthusiast's answer. Every array may be omitted when empty (`{}` = no findings): a
/// valid answer is never re-dispatched (docs/architecture.md §19.6).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EnthusiastOutput {
    #[serde(default)]
    pub findings: Vec<Finding>,
}

/// A line range in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LineRange {
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
}

/// A debunking heuristic the Adversary proved with evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Heuristic {
    /// `H1`, `H2`, …
    pub id: String,
    pub claim: String,
    pub evidence: String,
    #[serde(default)]
    pub applies_to: Vec<LineRange>,
    /// Context lines that prove it (at most 5); an entry whose every citation was dropped
    /// is dropped from the map before the Judge sees it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextCite>,
}

/// A region the Adversary proved safe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SafeZone {
    /// `Z1`, `Z2`, …
    pub id: String,
    pub file: String,
    pub line_start: u32,
    pub line_end: u32,
    pub reason: String,
    pub evidence: String,
    /// Context lines that prove it — a caller's guard is mapped only with one (at most 5); a
    /// zone whose every citation was dropped is dropped from the map before the Judge sees it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextCite>,
}

/// The Adversary's map of what is provably safe (an empty array may be omitted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdversaryOutput {
    #[serde(default)]
    pub heuristics: Vec<Heuristic>,
    #[serde(default)]
    pub safe_zones: Vec<SafeZone>,
}

/// Who won a ruling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Winner {
    Enthusiast,
    Adversary,
    Split,
}

impl Winner {
    /// Confirmed = winner ∈ {enthusiast, split}.
    pub fn confirms(self) -> bool {
        matches!(self, Self::Enthusiast | Self::Split)
    }
}

/// The Judge's ruling on one finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ruling {
    pub finding_id: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub target_type: ArtefactType,
    pub final_severity: FinalSeverity,
    pub winner: Winner,
    pub resolution: String,
    #[serde(default)]
    pub edit_instruction: Option<String>,
    /// Heuristic (`H…`) or safe-zone (`Z…`) ids the ruling relies on.
    #[serde(default)]
    pub cites: Vec<String>,
    /// Context lines that decided it (at most 5), with those of the map entries it cites.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextCite>,
}

impl Ruling {
    pub fn is_confirmed(&self) -> bool {
        self.winner.confirms() && self.final_severity != FinalSeverity::Dismissed
    }
}

/// The Judge's answer (an empty array may be omitted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeOutput {
    #[serde(default)]
    pub rulings: Vec<Ruling>,
    pub summary: String,
    /// Advisory only: arev decides convergence deterministically.
    #[serde(default)]
    pub convergence: bool,
    #[serde(default)]
    pub next_round_model: Option<Tier>,
}

/// A finding the Fixer skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkippedFix {
    pub finding_id: String,
    pub reason: String,
}

/// The Fixer's answer (iterate mode; an empty array may be omitted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FixerOutput {
    #[serde(default)]
    pub applied: Vec<String>,
    #[serde(default)]
    pub skipped: Vec<SkippedFix>,
}

/// The Prover's answer (`--prove`, docs/prove.md): the reproducer it wrote for one
/// confirmed finding — the new files (paths relative to the worktree root) and the argv that
/// runs them, which fails while the defect is there — or why it cannot write one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ProverOutput {
    Reproducer(Reproducer),
    Unprovable(Unprovable),
}

/// A reproducer: `command` runs in the worktree root and exits non-zero while the defect is
/// there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reproducer {
    pub finding_id: String,
    /// The files it created, relative to the worktree root (at least one).
    pub files: Vec<String>,
    /// The argv (no shell unless it names one), run with the worktree root as cwd.
    pub command: Vec<String>,
    /// What the run shows: which outcome means the defect is there.
    pub claim: String,
}

/// No reproducer: the reason (the run reports the finding `inconclusive`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Unprovable {
    pub finding_id: String,
    pub unprovable: String,
}

impl ProverOutput {
    pub fn finding_id(&self) -> &str {
        match self {
            Self::Reproducer(r) => &r.finding_id,
            Self::Unprovable(u) => &u.finding_id,
        }
    }
}

/// Every key either form may carry, so that a wrong answer gets a precise message (an
/// untagged enum would only say that no form matched).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProverOutput {
    finding_id: String,
    files: Option<Vec<String>>,
    command: Option<Vec<String>>,
    claim: Option<String>,
    unprovable: Option<String>,
}

impl<'de> Deserialize<'de> for ProverOutput {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let raw = RawProverOutput::deserialize(d)?;
        match raw {
            RawProverOutput {
                finding_id,
                files: None,
                command: None,
                claim: None,
                unprovable: Some(unprovable),
            } => Ok(Self::Unprovable(Unprovable {
                finding_id,
                unprovable,
            })),
            RawProverOutput {
                unprovable: Some(_),
                ..
            } => Err(D::Error::custom(
                "`unprovable` answers carry only `finding_id` and `unprovable`",
            )),
            RawProverOutput {
                finding_id,
                files: Some(files),
                command: Some(command),
                claim: Some(claim),
                unprovable: None,
            } => Ok(Self::Reproducer(Reproducer {
                finding_id,
                files,
                command,
                claim,
            })),
            _ => Err(D::Error::custom(
                "a reproducer needs `files`, `command` and `claim` (or answer `unprovable`)",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_orders_low_to_critical() {
        assert!(Severity::Low < Severity::Medium);
        assert!(Severity::High < Severity::Critical);
        assert!(Tier::Haiku < Tier::Opus);
        assert_eq!(Tier::Sonnet.up(), Tier::Opus);
        assert_eq!(Tier::Opus.up(), Tier::Opus);
    }

    #[test]
    fn judge_output_parses_with_defaults() {
        let j: JudgeOutput = serde_json::from_str(
            r#"{"rulings":[{"finding_id":"F1","file":"a.rs","line":3,"target_type":"code",
            "final_severity":"high","winner":"split","resolution":"r"}],"summary":"s"}"#,
        )
        .unwrap();
        assert!(j.rulings[0].is_confirmed());
        assert_eq!(j.next_round_model, None);
        assert!(!j.convergence);
    }

    #[test]
    fn an_empty_array_may_be_omitted_in_every_role_schema() {
        let e: EnthusiastOutput = serde_json::from_str("{}").unwrap();
        assert!(e.findings.is_empty());
        let a: AdversaryOutput = serde_json::from_str(r#"{"safe_zones":[]}"#).unwrap();
        assert_eq!(a, AdversaryOutput::default());
        let a: AdversaryOutput =
            serde_json::from_str(r#"{"heuristics":[{"id":"H1","claim":"c","evidence":"e"}]}"#)
                .unwrap();
        assert!(a.heuristics[0].applies_to.is_empty() && a.safe_zones.is_empty());
        let j: JudgeOutput = serde_json::from_str(r#"{"summary":"nothing"}"#).unwrap();
        assert!(j.rulings.is_empty());
        let f: FixerOutput = serde_json::from_str("{}").unwrap();
        assert!(f.applied.is_empty() && f.skipped.is_empty());
        let p: ProverOutput =
            serde_json::from_str(r#"{"finding_id":"F1","unprovable":"needs a network"}"#).unwrap();
        assert_eq!(p.finding_id(), "F1");
        let p: ProverOutput = serde_json::from_str(
            r#"{"finding_id":"F2","files":["t.py"],"command":["python3","t.py"],"claim":"c"}"#,
        )
        .unwrap();
        assert!(matches!(p, ProverOutput::Reproducer(ref r) if r.files == ["t.py"]));
        for bad in [
            r#"{"finding_id":"F1"}"#,
            r#"{"finding_id":"F1","files":["a"],"command":["x"]}"#,
            r#"{"finding_id":"F1","files":["a"],"command":["x"],"claim":"c","unprovable":"u"}"#,
            r#"{"finding_id":"F1","unprovable":"u","extra":1}"#,
        ] {
            assert!(serde_json::from_str::<ProverOutput>(bad).is_err(), "{bad}");
        }
        // Required scalars stay required: an answer without them is really invalid.
        assert!(serde_json::from_str::<JudgeOutput>("{}").is_err());
        assert!(serde_json::from_str::<EnthusiastOutput>(r#"{"findings":[{"id":"F1"}]}"#).is_err());
    }
}

//! The publish payload (`publish/<forge>.json` in the run dir: what `arev publish` retries)
//! and the record of the last attempt (`publish/<forge>.result.json`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const PAYLOAD_VERSION: u32 = 1;

/// Where a review is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Forge {
    Github,
    Gitlab,
}

impl Forge {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Github => "github",
            Self::Gitlab => "gitlab",
        }
    }

    /// The longest summary comment / note the forge accepts, in characters.
    pub fn summary_limit(self) -> usize {
        match self {
            // GitHub rejects an issue comment body over 65,536 characters.
            Self::Github => 65_536,
            // GitLab's note body limit is 1,000,000 characters.
            Self::Gitlab => 1_000_000,
        }
    }
}

/// The pull request (GitHub) or merge request (GitLab) a payload is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrTarget {
    /// GitHub `owner/name`; GitLab the project id (or its URL-encoded path).
    pub repository: String,
    /// The PR number / MR iid.
    pub number: u64,
    /// The head commit the review saw (from the CI event); null: asked from the API when
    /// publishing.
    pub head_sha: Option<String>,
}

/// One inline comment to place on a right-side line of the PR diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InlineComment {
    /// The finding's fingerprint (also in the body as `<!-- arev:fp=… -->`).
    pub fingerprint: String,
    pub path: String,
    pub line: u32,
    /// Markdown, ending with the fingerprint marker.
    pub body: String,
}

/// Everything one publish sends, built from a report without any request; kept in the run
/// dir before the first request so that a retry by the same job (the same token: see
/// `seal`) sends it exactly. Any other publish rebuilds it from report.json, and the
/// target always comes from the publishing job's own settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Payload {
    pub schema_version: u32,
    pub forge: Forge,
    pub run_id: String,
    pub target: PrTarget,
    /// The sticky summary: the Markdown report, starting with `<!-- arev-report -->`.
    pub summary: String,
    /// Appended when the summary is cut to the forge's limit (where the full report is).
    pub report_pointer: String,
    /// One per confirmed finding with a file and line (empty when the run has no verdict).
    pub comments: Vec<InlineComment>,
    /// Fingerprints of every confirmed finding, located or not: an earlier comment whose
    /// fingerprint is among them is not "fixed".
    pub fingerprints: Vec<String>,
    /// Files this review covered (reviewed): an earlier arev comment on one of them whose
    /// fingerprint is gone is marked fixed (when the forge's diff changed its line) or not
    /// raised again. Empty when the run has no verdict.
    pub covered_files: Vec<String>,
    /// The commit the report says it reviewed: the pull request's head must be this commit.
    pub reviewed_commit: Option<String>,
    /// HMAC-SHA256 (hex) of the rest of the payload keyed by the token that published it: a
    /// kept payload is reused only by a publish holding the same token (a retry by the same
    /// job). The token itself is never written.
    pub seal: String,
}

/// How the last publish attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PublishStatus {
    Published,
    Failed,
}

/// `publish/<forge>.result.json`: what the last attempt did (or why it failed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishRecord {
    pub forge: Forge,
    pub status: PublishStatus,
    pub attempted_at: String,
    /// The error, for a failed attempt (never holds the token).
    pub error: Option<String>,
    /// The head commit the review and its comments were placed on.
    pub head_sha: Option<String>,
    /// `created` or `updated` (the sticky summary), null if not reached.
    pub summary: Option<String>,
    /// Fingerprints commented inline by this attempt.
    pub commented: Vec<String>,
    /// Fingerprints already commented by an earlier publish (not repeated).
    pub already_commented: Vec<String>,
    /// Fingerprints whose line is not on the right side of the PR diff (summary only).
    pub outside_diff: Vec<String>,
    /// Fingerprints of earlier comments edited to say the finding was fixed: gone from the
    /// report, and the forge's diff from the comment's commit to the head changed its line.
    pub marked_fixed: Vec<String>,
    /// Fingerprints of earlier comments edited to say the finding was not raised again:
    /// gone from the report, but no diff of the forge shows its line changed.
    pub not_raised_again: Vec<String>,
    /// Findings of this review dismissed on the pull request by someone allowed to (a
    /// maintainer's `arev:` reply, 👎, or resolving the thread): not posted again, not gated.
    #[serde(default)]
    pub dismissed: Vec<DismissalRecord>,
    /// Fingerprints whose thread this attempt resolved (fixed findings).
    #[serde(default)]
    pub resolved: Vec<String>,
    /// Replies this attempt posted in arev's threads (one per event per thread).
    #[serde(default)]
    pub replies: usize,
}

/// A dismissal as recorded (from the forge, validated and cut to one line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DismissalRecord {
    pub fingerprint: String,
    /// The login of who dismissed it.
    pub by: String,
    /// `false-positive`, `wont-fix`, `ack`, `thumbs-down` or `resolved`.
    pub kind: String,
    pub reason: String,
}

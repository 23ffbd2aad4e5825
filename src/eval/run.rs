//! `arev eval run`: every case reviewed by the real `arev run` (a child process of this very
//! binary, `--format json`, its own run dir under `<out>/runs/`) in a detached checkout of
//! the buggy revision, up to `--jobs` at once; each result scored and written to
//! `<out>/cases/<id>.json` the moment it finishes, with `<out>/eval.json` and `eval.md`
//! rewritten after it. A case already scored with the same case digest and configuration
//! digest is not re-run. Ctrl-C (SIGINT/SIGTERM) is forwarded to the running reviews
//! (`interrupt`), which finish as interrupted; the finished cases' results stay. Cases run
//! on plain threads.

use super::cache::{original_cost, CostView};
use super::cases::ResolvedCase;
use super::checkout;
use super::error::EvalError;
use super::interrupt::Interrupt;
use super::model::{
    CaseResult, CaseStatus, EvalReport, EvalStatus, ReviewOutcome, ScoredFinding,
    EVAL_SCHEMA_VERSION,
};
use super::render::render_markdown;
use super::score::{score, totals};
use super::write::{write_bytes, write_json};
use crate::findings::Severity;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Everything one evaluation needs, resolved by `setup::prepare_run`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub cases_dir: PathBuf,
    pub out_dir: PathBuf,
    /// `--config FILE`, absolute; passed to every review.
    pub config: Option<PathBuf>,
    pub jobs: usize,
    pub tolerance: u32,
    /// The `arev` executable that reviews each case.
    pub exe: PathBuf,
    /// The user's repository root (its arev configuration is the panel's).
    pub user_root: PathBuf,
    /// The user's common git dir (the checkouts borrow its objects).
    pub git_dir: PathBuf,
    /// The resolved configuration's digest (what a review's meta.json records).
    pub config_digest: String,
    /// `--use-cache`: the reviews may reuse verdict-cache entries (otherwise each runs with
    /// `--no-cache`, so that every case's cost is a review's).
    pub use_cache: bool,
    /// The verdict cache's directory (where a cached case's original cost is looked up).
    pub cache_dir: Option<PathBuf>,
    /// `--prove`: each review proves its confirmed findings (`arev run --prove`), and every
    /// reproducer that failed at the buggy revision runs again at the fix commit.
    pub prove: Option<crate::resolve::ProvePlan>,
}

/// One case's progress event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Kept from an earlier run.
    Resumed,
    Started,
    Finished,
}

/// The evaluation, and whether Ctrl-C cut it short.
#[derive(Debug)]
pub struct Evaluation {
    pub report: EvalReport,
    pub interrupted: bool,
}

/// `<out>/cases/<id>.json`.
pub fn result_path(out: &Path, id: &str) -> PathBuf {
    out.join("cases").join(format!("{id}.json"))
}

/// The case's runs base: an opaque name, so that nothing about the case (its id, the fix)
/// reaches the agents through the run dir's path.
pub fn runs_base(out: &Path, id: &str) -> PathBuf {
    let h = hex::encode(&Sha256::digest(id.as_bytes())[..8]);
    out.join("runs").join(h)
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Results so far, and the aggregate files rewritten after each case.
struct Board<'a> {
    opts: &'a RunOptions,
    cases: &'a [ResolvedCase],
    results: Mutex<BTreeMap<String, CaseResult>>,
    started_at: String,
    started: Instant,
}

impl Board<'_> {
    fn report(&self, status: EvalStatus) -> EvalReport {
        let results = self.results.lock().map(|r| r.clone()).unwrap_or_default();
        let not_run: Vec<String> = self
            .cases
            .iter()
            .filter(|c| !results.contains_key(&c.case.id))
            .map(|c| c.case.id.clone())
            .collect();
        let cases: Vec<CaseResult> = self
            .cases
            .iter()
            .filter_map(|c| results.get(&c.case.id).cloned())
            .collect();
        let totals = totals(
            &cases,
            u32::try_from(self.cases.len()).unwrap_or(u32::MAX),
            u32::try_from(not_run.len()).unwrap_or(u32::MAX),
        );
        EvalReport {
            schema_version: EVAL_SCHEMA_VERSION,
            arev_version: env!("CARGO_PKG_VERSION").to_string(),
            config_digest: self.opts.config_digest.clone(),
            tolerance: self.opts.tolerance,
            cases_dir: self.opts.cases_dir.display().to_string(),
            out_dir: self.opts.out_dir.display().to_string(),
            use_cache: self.opts.use_cache,
            prove: self.opts.prove.is_some(),
            status,
            started_at: self.started_at.clone(),
            finished_at: now(),
            duration_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            cases,
            not_run,
            totals,
        }
    }

    /// Record a result: its own file first, then the aggregates.
    fn record(&self, result: CaseResult, status: EvalStatus) -> Result<EvalReport, EvalError> {
        if !result.resumed {
            write_json(&result_path(&self.opts.out_dir, &result.case_id), &result)?;
        }
        if let Ok(mut r) = self.results.lock() {
            r.insert(result.case_id.clone(), result);
        }
        self.write_aggregate(status)
    }

    fn write_aggregate(&self, status: EvalStatus) -> Result<EvalReport, EvalError> {
        let report = self.report(status);
        write_json(&self.opts.out_dir.join("eval.json"), &report)?;
        write_bytes(
            &self.opts.out_dir.join("eval.md"),
            render_markdown(&report).as_bytes(),
        )?;
        Ok(report)
    }
}

/// A stored result that can stand for this case under this panel.
fn resumable(opts: &RunOptions, case: &ResolvedCase) -> Option<CaseResult> {
    let text = std::fs::read_to_string(result_path(&opts.out_dir, &case.case.id)).ok()?;
    let mut r: CaseResult = serde_json::from_str(&text).ok()?;
    let same = r.case_digest == case.digest
        && r.config_digest == opts.config_digest
        && r.outcome != ReviewOutcome::Failed
        && r.proved == opts.prove.is_some();
    if !same {
        return None;
    }
    r.origin = case.case.origin.clone();
    score(&mut r, opts.tolerance);
    r.resumed = true;
    Some(r)
}

/// Run the evaluation. `progress` is called for every case event (from worker threads).
pub fn run_eval(
    opts: &RunOptions,
    cases: &[ResolvedCase],
    progress: &(dyn Fn(Event, &str, Option<&CaseResult>) + Sync),
) -> Result<Evaluation, EvalError> {
    for d in ["cases", "runs", "logs"] {
        let p = opts.out_dir.join(d);
        std::fs::create_dir_all(&p).map_err(|e| EvalError::write(&p, e))?;
    }
    let interrupt = Interrupt::install()?;
    let board = Board {
        opts,
        cases,
        results: Mutex::new(BTreeMap::new()),
        started_at: now(),
        started: Instant::now(),
    };
    let mut pending = Vec::new();
    for c in cases {
        match resumable(opts, c) {
            Some(r) => {
                progress(Event::Resumed, &c.case.id, Some(&r));
                if let Ok(mut m) = board.results.lock() {
                    m.insert(r.case_id.clone(), r);
                }
            }
            None => pending.push(c),
        }
    }
    board.write_aggregate(EvalStatus::Interrupted)?;
    let next = AtomicUsize::new(0);
    let failure: Mutex<Option<EvalError>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, pending.len().max(1)) {
            s.spawn(|| loop {
                if interrupt.fired() || failure.lock().map_or(true, |f| f.is_some()) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(case) = pending.get(i) else { break };
                progress(Event::Started, &case.case.id, None);
                let Some(result) = run_case(opts, case, &interrupt) else {
                    // Interrupted: no result; the case runs again next time.
                    break;
                };
                progress(Event::Finished, &case.case.id, Some(&result));
                if let Err(e) = board.record(result, EvalStatus::Interrupted) {
                    if let Ok(mut f) = failure.lock() {
                        f.get_or_insert(e);
                    }
                }
            });
        }
    });
    if let Some(e) = failure.lock().ok().and_then(|mut f| f.take()) {
        return Err(e);
    }
    // Workers stop early only on Ctrl-C: a case without a result was interrupted.
    let interrupted = board.results.lock().map_or(true, |r| r.len() < cases.len());
    let status = if interrupted {
        EvalStatus::Interrupted
    } else {
        EvalStatus::Complete
    };
    let report = board.write_aggregate(status)?;
    Ok(Evaluation {
        report,
        interrupted,
    })
}

/// The parts of report.json the score needs (read leniently).
#[derive(Debug, Deserialize)]
struct ReportView {
    run_dir: String,
    status: String,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    abort_reason: Option<String>,
    #[serde(default)]
    abort_detail: Option<String>,
    confirmed: Vec<FindingView>,
    debunked: Vec<serde::de::IgnoredAny>,
    unresolved: Vec<serde::de::IgnoredAny>,
    cost: CostView,
    #[serde(default)]
    cached_from: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FindingView {
    #[serde(default)]
    id: String,
    #[serde(default)]
    round: u32,
    file: Option<String>,
    line: Option<u32>,
    severity: Severity,
    category: String,
    /// `--prove`: the finding's proof at the buggy revision.
    #[serde(default)]
    proof: Option<crate::records::Evidence>,
}

/// How the child review ended.
enum Review {
    Report(Box<ReportView>),
    Interrupted,
    Failed(String),
}

/// Review and score one case; None when Ctrl-C interrupted it.
fn run_case(opts: &RunOptions, case: &ResolvedCase, interrupt: &Interrupt) -> Option<CaseResult> {
    let started_at = now();
    let t0 = Instant::now();
    let mut result = CaseResult {
        case_id: case.case.id.clone(),
        case_digest: case.digest.clone(),
        config_digest: opts.config_digest.clone(),
        arev_version: env!("CARGO_PKG_VERSION").to_string(),
        commit: case.commit.to_string(),
        targets: case.case.targets.clone(),
        expected: case.case.expected.clone(),
        origin: case.case.origin.clone(),
        outcome: ReviewOutcome::Failed,
        detail: None,
        run_dir: None,
        confirmed: vec![],
        debunked: 0,
        unresolved: 0,
        cost_usd: 0.0,
        tokens: 0,
        unpriced_tokens: 0,
        wall_ms: 0,
        started_at,
        finished_at: String::new(),
        status: CaseStatus::Failed,
        unmatched: 0,
        tolerance: opts.tolerance,
        resumed: false,
        cached_from: None,
        cost_unknown: false,
        proved: false,
    };
    let review = match checkout::create(&opts.git_dir, case.commit, &opts.user_root) {
        Ok(co) => {
            let review = review(opts, case, &co.root, interrupt);
            if let Err(e) = co.remove() {
                crate::output::warn(&format!(
                    "eval: case {}: cannot remove its checkout: {e}",
                    case.case.id
                ));
            }
            review
        }
        Err(e) => Review::Failed(e.to_string()),
    };
    match review {
        Review::Interrupted => return None,
        Review::Failed(msg) => result.detail = Some(msg),
        Review::Report(v) => {
            let proofs = fill(&mut result, *v, opts);
            prove_at_fix(&mut result, proofs, opts, case);
        }
    }
    result.wall_ms = u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX);
    result.finished_at = now();
    score(&mut result, opts.tolerance);
    Some(result)
}

/// `--prove`: each confirmed finding's proof (`proofs`, in `result.confirmed`'s order), its
/// reproducer run again at the case's fix commit.
fn prove_at_fix(
    result: &mut CaseResult,
    proofs: Vec<Option<(String, crate::records::Evidence)>>,
    opts: &RunOptions,
    case: &ResolvedCase,
) {
    let (Some(prove), Some(run_dir)) = (&opts.prove, result.run_dir.clone()) else {
        return;
    };
    if result.outcome != ReviewOutcome::Complete {
        return;
    }
    let cancel = tokio_util::sync::CancellationToken::new();
    let fix = case.case.origin.commit.as_deref();
    for (f, p) in result.confirmed.iter_mut().zip(proofs) {
        let Some((key, evidence)) = p else { continue };
        let kept = super::prove::Kept {
            evidence,
            dir: Path::new(&run_dir),
            key,
        };
        f.proof = Some(super::prove::at_fix(
            prove,
            &opts.user_root,
            fix,
            kept,
            &cancel,
        ));
    }
    result.proved = true;
}

/// Copy a child's report into the result; returns each confirmed finding's proof key and
/// evidence (`--prove`).
fn fill(
    result: &mut CaseResult,
    v: ReportView,
    opts: &RunOptions,
) -> Vec<Option<(String, crate::records::Evidence)>> {
    result.run_dir = Some(v.run_dir.clone());
    result.cost_usd = v.cost.usd;
    result.tokens = v.cost.tokens;
    result.unpriced_tokens = v.cost.unpriced_tokens;
    if let Some(from) = &v.cached_from {
        // A replayed verdict costs nothing now; its price is the review that produced it.
        match opts
            .cache_dir
            .as_deref()
            .and_then(|d| original_cost(d, from))
        {
            Some((usd, tokens, unpriced)) => {
                result.cost_usd = usd;
                result.tokens = tokens;
                result.unpriced_tokens = unpriced;
            }
            None => result.cost_unknown = true,
        }
        result.cached_from = Some(from.clone());
    }
    match v.status.as_str() {
        "complete" | "empty" => {
            result.outcome = ReviewOutcome::Complete;
            result.detail = v.stop_reason;
        }
        "aborted" => {
            result.outcome = ReviewOutcome::Aborted;
            result.detail = Some(format!(
                "{}: {}",
                v.abort_reason.as_deref().unwrap_or("aborted"),
                v.abort_detail.as_deref().unwrap_or("no detail")
            ));
        }
        other => {
            result.detail = Some(format!("the review ended with status {other}"));
            return vec![];
        }
    }
    // The review must have run with the panel the results are filed under.
    let meta = Path::new(&v.run_dir).join("meta.json");
    let digest = crate::store::read_capped(&meta, crate::store::MAX_RECORD_BYTES, "a run record")
        .ok()
        .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
        .and_then(|m| m["config_digest"].as_str().map(str::to_string));
    if digest.as_deref() != Some(opts.config_digest.as_str()) {
        result.outcome = ReviewOutcome::Failed;
        result.detail = Some(format!(
            "the review ran with configuration digest {} instead of {}",
            digest.as_deref().unwrap_or("(unreadable)"),
            opts.config_digest
        ));
        return vec![];
    }
    result.debunked = u32::try_from(v.debunked.len()).unwrap_or(u32::MAX);
    result.unresolved = u32::try_from(v.unresolved.len()).unwrap_or(u32::MAX);
    let mut proofs = vec![];
    result.confirmed = v
        .confirmed
        .into_iter()
        .map(|f| {
            proofs.push(
                f.proof
                    .map(|p| (crate::review::proof_key(f.round, &f.id), p)),
            );
            ScoredFinding {
                file: f.file,
                line: f.line,
                severity: f.severity,
                category: f.category,
                matches: None,
                proof: None,
            }
        })
        .collect();
    proofs
}

/// `arev run <targets> --format json` in the checkout, as a child in its own process group
/// (so a terminal's Ctrl-C reaches it once, forwarded by us).
fn review(opts: &RunOptions, case: &ResolvedCase, root: &Path, interrupt: &Interrupt) -> Review {
    if interrupt.fired() {
        return Review::Interrupted;
    }
    let base = runs_base(&opts.out_dir, &case.case.id);
    let log = opts
        .out_dir
        .join("logs")
        .join(format!("{}.stderr.log", case.case.id));
    let stderr = match std::fs::File::create(&log) {
        Ok(f) => f,
        Err(e) => return Review::Failed(format!("cannot write {}: {e}", log.display())),
    };
    let mut cmd = Command::new(&opts.exe);
    cmd.args([
        "run",
        "--format",
        "json",
        "-q",
        "--fail-on",
        "never",
        "--run-dir",
    ])
    .arg(&base);
    if let Some(c) = &opts.config {
        cmd.arg("--config").arg(c);
    }
    if !opts.use_cache {
        cmd.arg("--no-cache");
    }
    if let Some(p) = &opts.prove {
        cmd.args(["--prove", "--prove-sandbox", p.sandbox.as_str()]);
    }
    cmd.arg("--")
        .args(&case.case.targets)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        // The reviewers may be Claude Code sessions: arev's own hooks stay off inside them.
        .env("AREV_DISABLE", "1")
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Review::Failed(format!("cannot start {} ({e})", opts.exe.display())),
    };
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    interrupt.register(pid);
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = out.read_to_end(&mut stdout);
    }
    let status = child.wait();
    interrupt.unregister(pid);
    let code = status.ok().and_then(|s| s.code());
    let view = serde_json::from_slice::<ReportView>(&stdout).ok();
    if code == Some(crate::exit_codes::INTERRUPTED)
        || view.as_ref().is_some_and(|v| v.status == "interrupted")
        || (interrupt.fired() && view.is_none())
    {
        return Review::Interrupted;
    }
    match view {
        Some(mut v) => {
            // Findings name repository-relative files; an absolute one is made relative.
            for f in &mut v.confirmed {
                if let Some(rel) = f
                    .file
                    .as_deref()
                    .and_then(|p| Path::new(p).strip_prefix(root).ok())
                    .and_then(|p| p.to_str())
                {
                    f.file = Some(rel.to_string());
                }
            }
            Review::Report(Box::new(v))
        }
        None => {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let last = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no message")
                .trim()
                .to_string();
            Review::Failed(format!(
                "`arev run` exited with {} and no report: {last}",
                code.map_or("a signal".to_string(), |c| format!("code {c}"))
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_base_is_opaque_and_stable() {
        let out = Path::new("/o");
        let a = runs_base(out, "fix-0123456789ab");
        assert_eq!(a, runs_base(out, "fix-0123456789ab"));
        assert_ne!(a, runs_base(out, "fix-0123456789ac"));
        let name = a.file_name().unwrap().to_str().unwrap();
        assert_eq!(name.len(), 16);
        assert!(!name.contains("fix"));
    }
}

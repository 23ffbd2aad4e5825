//! `arev eval bench`: every benchmark PR fetched (its base and head, `forge`), checked out
//! at its head in a detached checkout with the user's arev configuration (`checkout`), and
//! reviewed by the real `arev run diff --base <base>` (a child process of this binary,
//! `--format json`, its run dir under `<out>/runs/`), up to `--jobs` at once. Each PR's
//! result goes to `<out>/prs/<hash>.json` as it finishes; `candidates.json` (the
//! benchmark's layout) and `bench.json` are rewritten after each. A PR already reviewed with
//! the same url, configuration digest, arev version and `--prove` is kept, not reviewed
//! again; a PR that cannot be fetched or reviewed is reported and tried again next time.
//! Ctrl-C (SIGINT/SIGTERM) is forwarded to the running reviews (`interrupt`): no PR starts
//! after it, an interrupted PR gets no result (it stays in `not_run` and is reviewed next
//! time), and the finished PRs' results stay.

use super::bench_model::{
    BenchOutcome, BenchPrResult, BenchReport, Candidate, CandidatesFile, BENCH_SCHEMA_VERSION,
    TOOL, TOOL_UNRESOLVED,
};
use super::error::EvalError;
use super::forge::Forge;
use super::golden::BenchPr;
use super::interrupt::Interrupt;
use super::write::write_json;
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

/// The longest candidate text kept (characters).
const MAX_TEXT_CHARS: usize = 4000;

/// Everything the reviews need, resolved by `setup::prepare_bench`.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub golden: PathBuf,
    pub out_dir: PathBuf,
    pub config: Option<PathBuf>,
    pub jobs: usize,
    pub exe: PathBuf,
    /// Whose arev configuration every checkout gets.
    pub user_root: PathBuf,
    pub config_digest: String,
    pub use_cache: bool,
    /// `--prove`, with `--prove-sandbox`'s mode.
    pub prove: Option<String>,
    pub forge: Forge,
}

/// One PR's progress event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchEvent {
    Kept,
    Started,
    Finished,
}

fn hash16(s: &str) -> String {
    hex::encode(&Sha256::digest(s.as_bytes())[..8])
}

/// `<out>/prs/<hash of the url>.json`.
pub fn pr_result_path(out: &Path, url: &str) -> PathBuf {
    out.join("prs").join(format!("{}.json", hash16(url)))
}

/// The resumption key: url, configuration digest, arev version, `--prove`.
pub fn resume_key(url: &str, config_digest: &str, prove: bool) -> String {
    let mut h = Sha256::new();
    for part in [url, config_digest, env!("CARGO_PKG_VERSION")] {
        h.update(part.as_bytes());
        h.update(b"\n");
    }
    h.update(if prove { b"prove" as &[u8] } else { b"" });
    hex::encode(h.finalize())
}

fn kept(opts: &BenchOptions, pr: &BenchPr) -> Option<BenchPrResult> {
    let path = pr_result_path(&opts.out_dir, &pr.url);
    let bytes =
        crate::store::read_capped(&path, crate::store::MAX_REPORT_BYTES, "a bench result").ok()?;
    let r: BenchPrResult = serde_json::from_slice(&bytes).ok()?;
    let key = resume_key(&pr.url, &opts.config_digest, opts.prove.is_some());
    (r.key == key && r.url == pr.url && r.outcome != BenchOutcome::Failed).then_some(r)
}

/// The candidates file of `results` (a PR whose review did not complete has none).
pub fn candidates_of(results: &[BenchPrResult]) -> CandidatesFile {
    let mut out = CandidatesFile::new();
    for r in results.iter().filter(|r| r.outcome != BenchOutcome::Failed) {
        let tools = out.entry(r.url.clone()).or_default();
        tools.insert(TOOL.into(), r.confirmed.clone());
        tools.insert(TOOL_UNRESOLVED.into(), r.unresolved.clone());
    }
    out
}

/// Results so far, written after each PR.
struct Board<'a> {
    opts: &'a BenchOptions,
    prs: &'a [BenchPr],
    results: Mutex<BTreeMap<String, BenchPrResult>>,
}

impl Board<'_> {
    fn report(&self) -> BenchReport {
        let results = self.results.lock().map(|r| r.clone()).unwrap_or_default();
        let prs: Vec<BenchPrResult> = self
            .prs
            .iter()
            .filter_map(|p| results.get(&p.url).cloned())
            .collect();
        BenchReport {
            schema_version: BENCH_SCHEMA_VERSION,
            arev_version: env!("CARGO_PKG_VERSION").into(),
            config_digest: self.opts.config_digest.clone(),
            golden: self.opts.golden.display().to_string(),
            out_dir: self.opts.out_dir.display().to_string(),
            not_run: self
                .prs
                .iter()
                .filter(|p| !results.contains_key(&p.url))
                .map(|p| p.url.clone())
                .collect(),
            cost_usd: prs.iter().map(|p| p.cost_usd).sum(),
            tokens: prs.iter().map(|p| p.tokens).sum(),
            unpriced_tokens: prs.iter().map(|p| p.unpriced_tokens).sum(),
            prs,
            score: None,
        }
    }

    fn write(&self) -> Result<BenchReport, EvalError> {
        let report = self.report();
        write_json(
            &self.opts.out_dir.join("candidates.json"),
            &candidates_of(&report.prs),
        )?;
        write_json(&self.opts.out_dir.join("bench.json"), &report)?;
        Ok(report)
    }

    fn record(&self, r: BenchPrResult, fresh: bool) -> Result<(), EvalError> {
        if fresh {
            write_json(&pr_result_path(&self.opts.out_dir, &r.url), &r)?;
        }
        if let Ok(mut m) = self.results.lock() {
            m.insert(r.url.clone(), r);
        }
        self.write().map(|_| ())
    }
}

/// Review every PR (kept ones aside); `progress` gets every event (from worker threads).
/// After Ctrl-C the report's `not_run` lists the PRs without a result.
pub fn run_bench(
    opts: &BenchOptions,
    prs: &[BenchPr],
    progress: &(dyn Fn(BenchEvent, &BenchPr, Option<&BenchPrResult>) + Sync),
) -> Result<BenchReport, EvalError> {
    for d in ["prs", "runs", "logs", "repos"] {
        let p = opts.out_dir.join(d);
        std::fs::create_dir_all(&p).map_err(|e| EvalError::write(&p, e))?;
    }
    let interrupt = Interrupt::install()?;
    let board = Board {
        opts,
        prs,
        results: Mutex::new(BTreeMap::new()),
    };
    let mut pending = vec![];
    for p in prs {
        match kept(opts, p) {
            Some(r) => {
                progress(BenchEvent::Kept, p, Some(&r));
                if let Ok(mut m) = board.results.lock() {
                    m.insert(r.url.clone(), r);
                }
            }
            None => pending.push(p),
        }
    }
    board.write()?;
    // One fetch at a time per source repository (its bare repository is shared).
    let locks: BTreeMap<String, Mutex<()>> =
        prs.iter().map(|p| (p.pr.slug(), Mutex::new(()))).collect();
    let next = AtomicUsize::new(0);
    let failure: Mutex<Option<EvalError>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, pending.len().max(1)) {
            s.spawn(|| loop {
                if interrupt.fired() || failure.lock().map_or(true, |f| f.is_some()) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(pr) = pending.get(i) else { break };
                progress(BenchEvent::Started, pr, None);
                let Some(r) = review_pr(opts, pr, locks.get(&pr.pr.slug()), &interrupt) else {
                    // Interrupted: no result; the PR is reviewed next time.
                    break;
                };
                progress(BenchEvent::Finished, pr, Some(&r));
                if let Err(e) = board.record(r, true) {
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
    board.write()
}

fn blank(opts: &BenchOptions, pr: &BenchPr) -> BenchPrResult {
    BenchPrResult {
        schema_version: BENCH_SCHEMA_VERSION,
        url: pr.url.clone(),
        repo: pr.pr.slug(),
        source: pr.source.clone(),
        key: resume_key(&pr.url, &opts.config_digest, opts.prove.is_some()),
        config_digest: opts.config_digest.clone(),
        arev_version: env!("CARGO_PKG_VERSION").into(),
        prove: opts.prove.is_some(),
        base: None,
        head: None,
        outcome: BenchOutcome::Failed,
        detail: None,
        run_dir: None,
        cost_usd: 0.0,
        tokens: 0,
        unpriced_tokens: 0,
        wall_ms: 0,
        confirmed: vec![],
        unresolved: vec![],
    }
}

/// Fetch, check out and review one PR; None when Ctrl-C interrupted it.
fn review_pr(
    opts: &BenchOptions,
    pr: &BenchPr,
    lock: Option<&Mutex<()>>,
    interrupt: &Interrupt,
) -> Option<BenchPrResult> {
    let t0 = Instant::now();
    let mut r = blank(opts, pr);
    let fetched = opts.forge.lookup(&pr.pr).and_then(|revs| {
        let _guard = lock.and_then(|l| l.lock().ok());
        opts.forge.fetch(&pr.pr, &revs).map(|dir| (revs, dir))
    });
    let (revs, git_dir) = match fetched {
        Ok(x) => x,
        Err(e) => {
            r.detail = Some(e.to_string());
            r.wall_ms = elapsed(t0);
            return Some(r);
        }
    };
    r.base = Some(revs.base.clone());
    r.head = Some(revs.head.clone());
    let head = match git2::Oid::from_str(&revs.head) {
        Ok(o) => o,
        Err(e) => {
            r.detail = Some(format!("bad head commit: {e}"));
            return Some(r);
        }
    };
    let mut interrupted = false;
    match super::checkout::create(&git_dir, head, &opts.user_root) {
        Ok(co) => {
            interrupted = review_in(opts, pr, &revs.base, &co.root, &mut r, interrupt);
            if let Err(e) = co.remove() {
                crate::output::warn(&format!(
                    "eval bench: {}: cannot remove its checkout: {e}",
                    pr.url
                ));
            }
        }
        Err(e) => r.detail = Some(e.to_string()),
    }
    r.wall_ms = elapsed(t0);
    (!interrupted).then_some(r)
}

fn elapsed(t0: Instant) -> u64 {
    u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The parts of report.json the candidates need (read leniently).
#[derive(Debug, Deserialize)]
struct ReportView {
    run_dir: String,
    status: String,
    #[serde(default)]
    abort_reason: Option<String>,
    #[serde(default)]
    abort_detail: Option<String>,
    confirmed: Vec<FindingView>,
    unresolved: Vec<FindingView>,
    cost: CostView,
}

#[derive(Debug, Deserialize)]
struct FindingView {
    file: Option<String>,
    line: Option<u32>,
    description: String,
    #[serde(default)]
    resolution: Option<String>,
}

#[derive(Debug, Deserialize)]
struct CostView {
    usd: f64,
    tokens: u64,
    #[serde(default)]
    unpriced_tokens: u64,
}

/// A finding as the maintainer reads it: its description, then the Judge's resolution.
fn candidate(f: &FindingView, source: &str, root: &Path) -> Candidate {
    let mut text = f.description.trim().to_string();
    if let Some(res) = f
        .resolution
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        text.push_str("\n\n");
        text.push_str(res);
    }
    let path = f.file.as_deref().map(|p| {
        Path::new(p)
            .strip_prefix(root)
            .ok()
            .and_then(|r| r.to_str())
            .unwrap_or(p)
            .to_string()
    });
    Candidate {
        text: text.chars().take(MAX_TEXT_CHARS).collect(),
        path,
        line: f.line,
        source: source.into(),
    }
}

/// `arev run diff --base <base> --format json` in the checkout, as a child in its own
/// process group (so a terminal's Ctrl-C reaches it once, forwarded by us). True when it
/// was interrupted (`r` then holds no result).
fn review_in(
    opts: &BenchOptions,
    pr: &BenchPr,
    base: &str,
    root: &Path,
    r: &mut BenchPrResult,
    interrupt: &Interrupt,
) -> bool {
    if interrupt.fired() {
        return true;
    }
    let h = hash16(&pr.url);
    let runs = opts.out_dir.join("runs").join(&h);
    let log = opts.out_dir.join("logs").join(format!("{h}.stderr.log"));
    let stderr = match std::fs::File::create(&log) {
        Ok(f) => f,
        Err(e) => {
            r.detail = Some(format!("cannot write {}: {e}", log.display()));
            return false;
        }
    };
    let mut cmd = Command::new(&opts.exe);
    cmd.args([
        "run",
        "diff",
        "--base",
        base,
        "--allow-empty",
        "--format",
        "json",
    ])
    .args(["-q", "--fail-on", "never", "--run-dir"])
    .arg(&runs);
    if let Some(c) = &opts.config {
        cmd.arg("--config").arg(c);
    }
    if !opts.use_cache {
        cmd.arg("--no-cache");
    }
    if let Some(sandbox) = &opts.prove {
        cmd.args(["--prove", "--prove-sandbox", sandbox]);
    }
    cmd.current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        // The reviewers may be Claude Code sessions: arev's own hooks stay off inside them.
        .env("AREV_DISABLE", "1")
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            r.detail = Some(format!("cannot start {} ({e})", opts.exe.display()));
            return false;
        }
    };
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    interrupt.register(pid);
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = out
            .by_ref()
            .take(crate::store::MAX_REPORT_BYTES)
            .read_to_end(&mut stdout);
    }
    let status = child.wait();
    interrupt.unregister(pid);
    let code = status.ok().and_then(|s| s.code());
    let view = serde_json::from_slice::<ReportView>(&stdout).ok();
    if code == Some(crate::exit_codes::INTERRUPTED)
        || view.as_ref().is_some_and(|v| v.status == "interrupted")
        || (interrupt.fired() && view.is_none())
    {
        return true;
    }
    let Some(v) = view else {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        r.detail = Some(format!(
            "`arev run diff` exited with {} and no report: {}",
            code.map_or("a signal".to_string(), |c| format!("code {c}")),
            last.trim()
        ));
        return false;
    };
    fill(r, &v, root);
    false
}

/// `r` with what the review's report says.
fn fill(r: &mut BenchPrResult, v: &ReportView, root: &Path) {
    r.run_dir = Some(v.run_dir.clone());
    r.cost_usd = v.cost.usd;
    r.tokens = v.cost.tokens;
    r.unpriced_tokens = v.cost.unpriced_tokens;
    match v.status.as_str() {
        "complete" | "empty" => {
            r.outcome = BenchOutcome::Complete;
            r.confirmed = v
                .confirmed
                .iter()
                .map(|f| candidate(f, TOOL, root))
                .collect();
            r.unresolved = v
                .unresolved
                .iter()
                .map(|f| candidate(f, TOOL_UNRESOLVED, root))
                .collect();
        }
        "aborted" => {
            r.outcome = BenchOutcome::Aborted;
            r.detail = Some(format!(
                "{}: {}",
                v.abort_reason.as_deref().unwrap_or("aborted"),
                v.abort_detail.as_deref().unwrap_or("no detail")
            ));
        }
        other => r.detail = Some(format!("the review ended with status {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resumption_key_names_url_panel_and_proofs() {
        let a = resume_key("u", "d", false);
        assert_eq!(a, resume_key("u", "d", false));
        assert_ne!(a, resume_key("u2", "d", false));
        assert_ne!(a, resume_key("u", "d2", false));
        assert_ne!(a, resume_key("u", "d", true));
        let p = pr_result_path(Path::new("/o"), "https://github.com/a/b/pull/1");
        assert!(p.starts_with("/o/prs"));
        assert!(!p.to_string_lossy().contains("github"));
    }

    #[test]
    fn a_candidate_reads_as_the_maintainer_would() {
        let f = FindingView {
            file: Some("/co/src/a.rs".into()),
            line: Some(3),
            description: "off by one ".into(),
            resolution: Some("v[1] skips the first".into()),
        };
        let c = candidate(&f, TOOL, Path::new("/co"));
        assert_eq!(c.text, "off by one\n\nv[1] skips the first");
        assert_eq!((c.path.as_deref(), c.line), (Some("src/a.rs"), Some(3)));
        assert_eq!(c.source, "arev");
    }
}

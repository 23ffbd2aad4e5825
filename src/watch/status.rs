//! The one-screen status of a run (`arev status`, and `arev result` while a run still
//! goes): status (with the derived `abandoned`), target, where a live run stands from
//! progress.json, counts, elapsed time, and the commands to run next. Pure: a `RunView`, the
//! report's confirmed findings when there is one, and the time now, in; text out.

use crate::findings::Severity;
use crate::records::{LiveAgent, LiveStatus, Meta, RunProgress};
pub use crate::store::fmt_duration;
use crate::store::{agent_elapsed_ms, running_agents, spent_line};
use crate::store::{Phase, RunState, RunView};
use chrono::{DateTime, Utc};
use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

/// The commands that get a run's report, its status, and stop it: `(command, what for)`.
/// `base` is the runs base when it has to be named (`--run-dir`).
pub fn next_commands(run_id: &str, base: Option<&Path>) -> [(String, &'static str); 3] {
    let tail = base.map_or(String::new(), |b| format!(" --run-dir {}", b.display()));
    [
        (
            format!("arev result {run_id}{tail}"),
            "the report once the run is done (exit 4 until then)",
        ),
        (format!("arev status {run_id}{tail}"), "where it stands"),
        (format!("arev cancel {run_id}{tail}"), "stop it"),
    ]
}

/// What `arev run --background` prints: the run is going on in the background (`waited`:
/// after `--wait` ran out), where it is, and the commands that follow it up.
pub fn render_started(
    run_id: &str,
    run_dir: &Path,
    waited: Option<Duration>,
    base: Option<&Path>,
) -> String {
    let mut s = match waited {
        None => "arev: the review runs in the background.\n".to_string(),
        Some(w) => format!(
            "arev: no verdict within {}; the review goes on in the background.\n",
            fmt_duration(w)
        ),
    };
    let _ = writeln!(s, "run id    {run_id}");
    let _ = writeln!(s, "run dir   {}", run_dir.display());
    let _ = writeln!(
        s,
        "log       {}",
        run_dir.join(crate::process::LOG_FILE).display()
    );
    let next = next_commands(run_id, base);
    let width = next.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    for (i, (cmd, why)) in next.iter().enumerate() {
        let k = if i == 0 { "next" } else { "" };
        let _ = writeln!(s, "{k:<9} {cmd:<width$}   {why}");
    }
    s
}

fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Confirmed findings by severity, most severe first: `1 high, 2 medium`.
fn by_severity(confirmed: &[Severity]) -> String {
    let mut parts = vec![];
    for sev in [
        Severity::Critical,
        Severity::High,
        Severity::Medium,
        Severity::Low,
    ] {
        let n = confirmed.iter().filter(|s| **s == sev).count();
        if n > 0 {
            parts.push(format!("{n} {}", sev.as_str()));
        }
    }
    parts.join(", ")
}

/// The status screen. `confirmed`: the severities of the report's confirmed findings (None
/// without a report); `base`: the runs base to name in the next commands, if needed.
pub fn render_status(
    view: &RunView,
    confirmed: Option<&[Severity]>,
    now: DateTime<Utc>,
    base: Option<&Path>,
) -> String {
    let mut s = String::new();
    let id = view
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    row(&mut s, "run", &id);
    let (meta, state) = match (&view.meta, view.state) {
        (Ok(m), Some(st)) => (m, st),
        (Err(e), _) => {
            row(&mut s, "status", &format!("unreadable ({e})"));
            row(&mut s, "run dir", &view.dir.display().to_string());
            return s;
        }
        (Ok(_), None) => return s,
    };
    let progress = view.progress.as_ref();
    row(
        &mut s,
        "status",
        &status_text(meta, state, progress, confirmed),
    );
    let t = &meta.target;
    row(
        &mut s,
        "target",
        &format!(
            "{} ({}, {} file(s), {})",
            t.display,
            t.kind.as_str(),
            t.files,
            meta.mode.as_str()
        ),
    );
    if let Some(p) = progress {
        progress_rows(&mut s, p, state, now);
    }
    let started = parse_time(&meta.started_at);
    let end = match state {
        RunState::Running => Some(now),
        // Gone without finishing: as far as progress.json got.
        RunState::Abandoned => progress.and_then(|p| parse_time(&p.updated_at)),
        _ => meta.finished_at.as_deref().and_then(parse_time),
    };
    if let (Some(a), Some(b)) = (started, end) {
        let d = (b - a).to_std().unwrap_or_default();
        row(
            &mut s,
            "elapsed",
            &format!("{} (started {})", fmt_duration(d), meta.started_at),
        );
    }
    if let Some(code) = meta.exit_code {
        row(&mut s, "exit code", &code.to_string());
    }
    row(&mut s, "run dir", &view.dir.display().to_string());
    let [result, _, cancel] = next_commands(&id, base);
    let next: Vec<(String, &str)> = match state {
        RunState::Running => vec![result, cancel],
        RunState::Abandoned => vec![(
            format!("arev run {}", t.display),
            "review it again (round-N.json hold what was done)",
        )],
        _ => vec![(result.0, "the report, exit code its verdict")],
    };
    for (i, (cmd, why)) in next.iter().enumerate() {
        row(
            &mut s,
            if i == 0 { "next" } else { "" },
            &format!("{cmd}   {why}"),
        );
    }
    s
}

/// One `key value` row of the screen.
fn row(s: &mut String, k: &str, v: &str) {
    let _ = writeln!(s, "{k:<9} {v}");
}

/// The status row: the run's state and what it says (where a live run stands, why it
/// stopped, what it confirmed).
fn status_text(
    meta: &Meta,
    state: RunState,
    progress: Option<&RunProgress>,
    confirmed: Option<&[Severity]>,
) -> String {
    let pid = meta.process.map(|p| p.pid);
    match state {
        RunState::Running => running_text(meta, progress),
        RunState::Abandoned => format!(
            "abandoned — its arev process (pid {}) is gone and the run never finished: there will be no verdict",
            pid.map_or("?".into(), |p| p.to_string())
        ),
        RunState::Complete => complete_text(meta, confirmed),
        RunState::Aborted => format!(
            "aborted — {}: {} (no verdict)",
            meta.abort_reason.map_or("-".to_string(), |r| r.to_string()),
            meta.abort_detail.as_deref().unwrap_or("-")
        ),
        RunState::Interrupted => "interrupted (no verdict)".to_string(),
        RunState::Empty => "empty — nothing to review".to_string(),
    }
}

/// A running run's status: its iteration phase or round, tier and latest dispatch, and pid.
fn running_text(meta: &Meta, progress: Option<&RunProgress>) -> String {
    let pid = meta.process.map(|p| p.pid);
    let mut v = "running".to_string();
    if let Some(p) = progress {
        if let (Some(i), Phase::Fix | Phase::Verify) = (p.iteration, p.phase) {
            let what = if p.phase == Phase::Fix {
                "fixing"
            } else {
                "verifying"
            };
            let _ = write!(v, " — iteration {i}, {what}");
        } else if let Some(r) = p.round {
            let _ = write!(v, " — round {r} of {}", meta.rounds_planned);
            if let Some(t) = p.tier {
                let _ = write!(v, " ({t})");
            }
            if let (Some(role), Some(st)) = (p.role, p.state) {
                let pass = p.pass.map_or(String::new(), |k| format!(" pass {k}"));
                let st = match st {
                    crate::store::DispatchState::Started => "started",
                    crate::store::DispatchState::Finished => "finished",
                };
                let _ = write!(v, ", {role}{pass} {st}");
            }
        } else {
            v.push_str(" — starting");
        }
    }
    if let Some(pid) = pid {
        let _ = write!(v, "; pid {pid}");
    }
    v
}

/// A complete run's status: its stop reason and what it confirmed, by severity.
fn complete_text(meta: &Meta, confirmed: Option<&[Severity]>) -> String {
    let mut v = format!(
        "complete — {}",
        meta.stop_reason.map_or("-".to_string(), |r| r.to_string())
    );
    match confirmed {
        Some([]) => v.push_str("; nothing confirmed"),
        Some(c) => {
            let _ = write!(v, "; {} confirmed ({})", c.len(), by_severity(c));
        }
        None => {}
    }
    v
}

/// A live run's agents (with how long each has run, measured against `now`), its counts
/// and its spend from progress.json.
fn progress_rows(s: &mut String, p: &RunProgress, state: RunState, now: DateTime<Utc>) {
    if state == RunState::Running && !p.running.is_empty() {
        row(s, "agents", &running_agents(p, now));
    }
    let c = &p.counts;
    row(
            s,
            "counts",
            &format!(
                "{} round(s) recorded · {} finding(s) judged: {} confirmed, {} debunked · {}/{} dispatches finished",
                c.rounds, c.findings, c.confirmed, c.debunked, c.dispatches_finished, c.dispatches_started
            ),
        );
    row(s, "spent", &spent_line(p));
}

/// `arev status --json`: the run in `view` measured at `now` (each running agent's elapsed
/// time against now, not progress.json's last write).
pub fn live_status(view: &RunView, now: DateTime<Utc>) -> LiveStatus {
    let id = view
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let meta = view.meta.as_ref().ok();
    let p = view.progress.as_ref();
    let running = match (view.state, p) {
        (Some(RunState::Running), Some(p)) => p
            .running
            .iter()
            .map(|a| LiveAgent {
                role: a.role,
                pass: a.pass,
                label: a.label.clone(),
                elapsed_ms: agent_elapsed_ms(p, a, now),
                retries: a.retries,
                spent: a.spent.clone(),
            })
            .collect(),
        _ => vec![],
    };
    let elapsed_ms = meta.and_then(|m| {
        let start = parse_time(&m.started_at)?;
        let end = match view.state {
            Some(RunState::Running) => Some(now),
            Some(RunState::Abandoned) => p.and_then(|p| parse_time(&p.updated_at)),
            _ => m.finished_at.as_deref().and_then(parse_time),
        }?;
        Some((end - start).num_milliseconds().max(0) as u64)
    });
    LiveStatus {
        run_id: id,
        run_dir: view.dir.display().to_string(),
        state: view.state.and_then(|s| {
            serde_json::to_value(s)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
        }),
        phase: p.map(|p| p.phase),
        round: p.and_then(|p| p.round),
        tier: p.and_then(|p| p.tier),
        running,
        counts: p.map(|p| p.counts.clone()),
        spent: p.map(|p| p.spent.clone()),
        elapsed_ms,
        exit_code: meta.and_then(|m| m.exit_code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Liveness, Meta, RunStatus};

    fn view(status: RunStatus, liveness: Liveness) -> RunView {
        let meta: Meta = serde_json::from_value(serde_json::json!({
            "run_id": "20260101-120000-abcdef-src-lib-rs", "status": status,
            "stop_reason": (status == RunStatus::Complete).then_some("zero-findings"),
            "abort_reason": (status == RunStatus::Aborted).then_some("enthusiast_no_tool_invocation"),
            "abort_detail": (status == RunStatus::Aborted).then_some("the judge never read"),
            "target": {"kind": "file", "display": "src/lib.rs", "path": "/r/src/lib.rs",
                "sha256": "00", "sha256_final": null, "drift": false, "files": 1, "skipped": 0},
            "mode": "LIGHTWEIGHT", "target_type": "code", "rounds_planned": 3,
            "rounds_completed": 1, "passes": 1, "model_start": "sonnet",
            "model_current": "sonnet", "model_history": ["sonnet"], "arev_version": "0",
            "config_digest": "c", "started_at": "2026-01-01T12:00:00.000Z",
            "finished_at": (status != RunStatus::Running).then_some("2026-01-01T12:04:10.000Z"),
            "process": {"pid": 4242, "start_time": 1}, "exit_code": null
        }))
        .unwrap();
        let progress = serde_json::from_value(serde_json::json!({
            "run_id": meta.run_id, "phase": "review", "iteration": null, "round": 2,
            "tier": "opus", "role": "judge", "pass": null, "state": "started",
            "running": [{"role": "judge", "pass": null, "label": "judge", "since_ms": 60000}],
            "counts": {"dispatches_started": 5, "dispatches_finished": 4, "rounds": 1,
                "findings": 3, "confirmed": 2, "debunked": 1, "retries": 1},
            "spent": {"cost_usd": 0.031, "tokens": 4200},
            "started_at": "2026-01-01T12:00:00.000Z", "updated_at": "2026-01-01T12:02:00.000Z",
            "elapsed_ms": 120000
        }))
        .unwrap();
        RunView {
            dir: format!("/r/.arev/runs/{}", meta.run_id).into(),
            state: Some(crate::store::RunState::derive(status, liveness)),
            meta: Ok(meta),
            liveness,
            progress: Some(progress),
        }
    }

    fn now() -> DateTime<Utc> {
        parse_time("2026-01-01T12:03:05.000Z").unwrap()
    }

    #[test]
    fn a_running_run_says_where_it_stands_and_what_to_run_next() {
        let s = render_status(
            &view(RunStatus::Running, Liveness::Alive),
            None,
            now(),
            None,
        );
        assert!(
            s.contains("status    running — round 2 of 3 (opus), judge started; pid 4242"),
            "{s}"
        );
        // Measured against now (12:03:05), not progress.json's last write (12:02:00): the
        // Judge started at 12:01:00.
        assert!(s.contains("agents    judge (2m 05s)"), "{s}");
        assert!(
            s.contains("spent     $0.0310 · 4200 tokens (finished dispatches) · 1 retry"),
            "{s}"
        );
        assert!(
            s.contains("1 round(s) recorded · 3 finding(s) judged: 2 confirmed"),
            "{s}"
        );
        assert!(s.contains("elapsed   3m 05s"), "{s}");
        assert!(
            s.contains("next      arev result 20260101-120000-abcdef-src-lib-rs   the report once"),
            "{s}"
        );
        assert!(
            s.contains("arev cancel 20260101-120000-abcdef-src-lib-rs"),
            "{s}"
        );
    }

    #[test]
    fn status_json_measures_each_running_agent_against_now() {
        let v = live_status(&view(RunStatus::Running, Liveness::Alive), now());
        assert_eq!(v.state.as_deref(), Some("running"));
        assert_eq!(
            (v.round, v.tier),
            (Some(2), Some(crate::records::Tier::Opus))
        );
        assert_eq!(v.running.len(), 1);
        assert_eq!(v.running[0].label, "judge");
        assert_eq!(v.running[0].elapsed_ms, 125_000, "12:01:00 → 12:03:05");
        assert_eq!(v.elapsed_ms, Some(185_000));
        assert_eq!(v.spent.as_ref().map(|s| s.tokens), Some(4200));
        assert_eq!(v.counts.as_ref().map(|c| c.retries), Some(1));
        // A finished run has nobody running and its own end.
        let v = live_status(&view(RunStatus::Complete, Liveness::Unknown), now());
        assert!(v.running.is_empty());
        assert_eq!(v.state.as_deref(), Some("complete"));
        assert_eq!(v.elapsed_ms, Some(250_000));
    }

    #[test]
    fn finished_abandoned_and_aborted_runs() {
        let sev = [Severity::High, Severity::Low, Severity::High];
        let s = render_status(
            &view(RunStatus::Complete, Liveness::Unknown),
            Some(&sev),
            now(),
            Some(Path::new("/tmp/runs")),
        );
        assert!(
            s.contains("complete — zero-findings; 3 confirmed (2 high, 1 low)"),
            "{s}"
        );
        assert!(s.contains("elapsed   4m 10s"), "{s}");
        assert!(!s.contains("agents"), "{s}");
        assert!(
            s.contains("--run-dir /tmp/runs   the report, exit code its verdict"),
            "{s}"
        );
        let s = render_status(&view(RunStatus::Running, Liveness::Gone), None, now(), None);
        assert!(
            s.contains("abandoned — its arev process (pid 4242) is gone"),
            "{s}"
        );
        assert!(
            s.contains("elapsed   2m 00s"),
            "as far as progress got: {s}"
        );
        assert!(s.contains("next      arev run src/lib.rs"), "{s}");
        let s = render_status(
            &view(RunStatus::Aborted, Liveness::Unknown),
            None,
            now(),
            None,
        );
        assert!(
            s.contains(
                "aborted — enthusiast_no_tool_invocation: the judge never read (no verdict)"
            ),
            "{s}"
        );
    }

    #[test]
    fn a_started_run_names_its_id_dir_and_next_commands() {
        let s = render_started("id-1", Path::new("/r/id-1"), None, None);
        assert!(
            s.starts_with("arev: the review runs in the background.\n"),
            "{s}"
        );
        assert!(
            s.contains("run id    id-1\nrun dir   /r/id-1\nlog       /r/id-1/arev.log\n"),
            "{s}"
        );
        assert!(
            s.contains("next      arev result id-1   the report once"),
            "{s}"
        );
        assert!(s.contains("          arev cancel id-1   stop it"), "{s}");
        let s = render_started(
            "id-1",
            Path::new("/r/id-1"),
            Some(Duration::from_secs(100)),
            Some(Path::new("/r")),
        );
        assert!(
            s.starts_with("arev: no verdict within 1m 40s; the review goes on"),
            "{s}"
        );
        assert!(
            s.contains("arev status id-1 --run-dir /r   where it stands"),
            "{s}"
        );
    }
}

//! A live run in words, measured against now: how long each running agent has been at it,
//! what the run has spent, and the heartbeat — a line on stderr at a fixed interval while
//! agents run (also when stderr is not a terminal), so a slow first byte is never silent.
//! Shared by `arev status` (watch) and the run itself (the round driver's heartbeat).

use crate::records::{RunProgress, RunningAgent};
use crate::store::ProgressLog;
use chrono::{DateTime, Utc};
use std::fmt::Write;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// `1h 02m`, `4m 10s`, `12s`.
pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s:02}s"),
        (h, m, _) => format!("{h}h {m:02}m"),
    }
}

fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// How long each running agent has been at it, measured against `now` (not against
/// progress.json's last write, which is as old as the last dispatch event): `enthusiast-p1
/// (1m 30s), judge-retry (12s, retry 1)`.
pub fn running_agents(p: &RunProgress, now: DateTime<Utc>) -> String {
    let agents: Vec<String> = p
        .running
        .iter()
        .map(|a| {
            let mut v = format!(
                "{} ({}",
                a.label,
                fmt_duration(Duration::from_millis(agent_elapsed_ms(p, a, now)))
            );
            if a.spent.tokens > 0 {
                let _ = write!(v, ", {}", a.spent.usd_text());
            }
            if a.retries > 0 {
                let _ = write!(v, ", retry {}", a.retries);
            }
            v.push(')');
            v
        })
        .collect();
    agents.join(", ")
}

/// Milliseconds agent `a` has run at `now`: since `started_at + since_ms`; without a
/// readable start, as far as progress.json got.
pub fn agent_elapsed_ms(p: &RunProgress, a: &RunningAgent, now: DateTime<Utc>) -> u64 {
    match parse_time(&p.started_at) {
        Some(start) => {
            let at = start + chrono::Duration::milliseconds(a.since_ms as i64);
            (now - at).num_milliseconds().max(0) as u64
        }
        None => p.elapsed_ms.saturating_sub(a.since_ms),
    }
}

/// The run's spend so far: `$0.0312 · 4210 tokens (finished dispatches) · 2 retries`, with
/// `+ $0.0100 · 900 tokens running` when the agents in flight have spent something. Tokens
/// of a model without a known price read `price unknown`, never `$0`.
pub fn spent_line(p: &RunProgress) -> String {
    let mut v = format!(
        "{} · {} tokens (finished dispatches)",
        p.spent.usd_text(),
        p.spent.tokens
    );
    let mut running = crate::records::Spend::default();
    for a in &p.running {
        running.add(&a.spent);
    }
    if running.tokens > 0 {
        let _ = write!(
            v,
            " + {} · {} tokens running",
            running.usd_text(),
            running.tokens
        );
    }
    match p.counts.retries {
        0 => {}
        1 => v.push_str(" · 1 retry"),
        n => {
            let _ = write!(v, " · {n} retries");
        }
    }
    v
}

/// The heartbeat's line: `arev: waiting · round 1 · enthusiast-p1 (1m 30s), adversary (1m
/// 30s) · spent $0.0200 · 300 tokens (finished dispatches)`.
pub fn heartbeat_line(p: &RunProgress, now: DateTime<Utc>) -> String {
    let round = p.round.map_or(String::new(), |r| format!(" · round {r}"));
    format!(
        "waiting{round} · {} · spent {}",
        running_agents(p, now),
        spent_line(p)
    )
}

/// A thread that prints [`heartbeat_line`] every `every` while agents run; stopped (and
/// joined) when dropped.
pub struct Heartbeat {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeat {
    pub fn start(log: ProgressLog, every: Duration) -> Self {
        let (tx, rx) = channel::<()>();
        let thread = std::thread::Builder::new()
            .name("heartbeat".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    match log.snapshot() {
                        Some(p) if !p.running.is_empty() => {
                            crate::output::progress(&heartbeat_line(&p, Utc::now()));
                        }
                        _ => {}
                    }
                }
            })
            .ok();
        Self {
            stop: Some(tx),
            thread,
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heartbeat_names_each_agent_with_its_time_and_the_spend() {
        let p: RunProgress = serde_json::from_value(serde_json::json!({
            "run_id": "r", "phase": "review", "iteration": null, "round": 1,
            "tier": "opus", "role": "adversary", "pass": null, "state": "started",
            "running": [
                {"role": "enthusiast", "pass": 1, "label": "enthusiast-p1", "since_ms": 0},
                {"role": "adversary", "pass": null, "label": "adversary-retry", "since_ms": 30000, "retries": 1,
                 "spent": {"cost_usd": 0.0125, "tokens": 2400}}
            ],
            "counts": {"dispatches_started": 3, "dispatches_finished": 1, "rounds": 0,
                "findings": 0, "confirmed": 0, "debunked": 0, "retries": 1},
            "spent": {"cost_usd": 0.02, "tokens": 300},
            "started_at": "2026-01-01T12:00:00.000Z", "updated_at": "2026-01-01T12:00:30.000Z",
            "elapsed_ms": 30000
        }))
        .unwrap();
        let now = parse_time("2026-01-01T12:01:30.000Z").unwrap();
        assert_eq!(
            heartbeat_line(&p, now),
            "waiting · round 1 · enthusiast-p1 (1m 30s), adversary-retry (1m 00s, $0.0125, retry 1) · \
             spent $0.0200 · 300 tokens (finished dispatches) + $0.0125 · 2400 tokens running · 1 retry"
        );
    }

    /// An agent on a model without a price: its running spend and the run's read `price
    /// unknown`, the priced part counted beside it, never `$0`.
    #[test]
    fn unpriced_spend_reads_price_unknown_never_zero_dollars() {
        let p: RunProgress = serde_json::from_value(serde_json::json!({
            "run_id": "r", "phase": "review", "iteration": null, "round": 1,
            "tier": "opus", "role": "adversary", "pass": null, "state": "started",
            "running": [
                {"role": "adversary", "pass": null, "label": "adversary", "since_ms": 0,
                 "spent": {"cost_usd": 0.0, "tokens": 900, "unpriced_tokens": 900}}
            ],
            "counts": {"dispatches_started": 2, "dispatches_finished": 1, "rounds": 0,
                "findings": 0, "confirmed": 0, "debunked": 0},
            "spent": {"cost_usd": 0.01, "tokens": 450, "unpriced_tokens": 150},
            "started_at": "2026-01-01T12:00:00.000Z", "updated_at": "2026-01-01T12:00:30.000Z",
            "elapsed_ms": 30000
        }))
        .unwrap();
        let now = parse_time("2026-01-01T12:00:30.000Z").unwrap();
        assert_eq!(
            heartbeat_line(&p, now),
            "waiting · round 1 · adversary (30s, price unknown) · spent $0.0100 + price unknown · \
             450 tokens (finished dispatches) + price unknown · 900 tokens running"
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(fmt_duration(Duration::from_secs(12)), "12s");
        assert_eq!(fmt_duration(Duration::from_secs(250)), "4m 10s");
        assert_eq!(fmt_duration(Duration::from_secs(3720)), "1h 02m");
    }
}

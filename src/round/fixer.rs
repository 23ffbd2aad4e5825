//! The Fixer's dispatch (iterate mode, docs/architecture.md §13): the same context, prompt
//! contract and gates as the reviewers (authenticity retry, Read of the target, read
//! membership, schema re-dispatch), plus a write gate — every Edit/Write must land inside
//! the worktree.

use super::context::Ctx;
use super::role::{run_role, Checks, RoleOutput, RoleRun, Who};
use super::DispatchRecord;
use crate::findings::{FixerOutput, Role, Tier};
use crate::gates::Abort;
use crate::resolve::RunPlan;
use crate::store::{ProgressLog, RunDir};
use crate::target::PinnedTarget;
use std::path::{Component, Path, PathBuf};
use tokio_util::sync::CancellationToken;

/// How the Fixer's dispatch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixerEnd {
    Answered(FixerOutput),
    /// Invalid twice: the changes it made still count, its account does not.
    Malformed(String),
    Aborted(Abort),
    Interrupted,
    /// Stopped when its spend passed what was left of the budget, before it answered: its
    /// edits (if any) stay uncommitted in the worktree.
    BudgetExhausted,
}

/// The Fixer's result and every dispatch attempt.
#[derive(Debug, Clone)]
pub struct FixerRun {
    pub end: FixerEnd,
    pub records: Vec<DispatchRecord>,
    /// Edit/Write attempts the agent CLI denied (listed in `permission_denials`): paths.
    pub denied_writes: Vec<String>,
}

/// Claude Code's tools that write files, and the input key holding the path. Another
/// backend's write tools (Codex `file_change`, Gemini `write_file`/`replace`, OpenCode
/// `edit`/`write`) name their paths in the tool use's derived `access.write`.
const WRITE_TOOLS: &[(&str, &str)] = &[
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("Write", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

/// Dispatch the Fixer for `iteration` on `target` (pinned inside the worktree; cwd = its
/// root), with `rulings` rendered as JSON into `<rulings>`. Its agent dir is
/// `<run>/agents/fix/fixer[-retry]/`; its dispatches go to `progress`. `link_gate` checks
/// the worktree for a link leading outside it after every dispatch (before a re-dispatch,
/// and at the end whatever the Fixer answered): an abort there ends the Fixer.
#[allow(clippy::too_many_arguments)]
pub async fn run_fixer<T: serde::Serialize>(
    plan: &RunPlan,
    target: &PinnedTarget,
    run: &RunDir,
    iteration: u32,
    tier: Tier,
    rulings: &T,
    fix_files: &[String],
    link_gate: &(dyn Fn() -> Option<Abort> + Sync),
    cancel: &CancellationToken,
    progress: &ProgressLog,
) -> FixerRun {
    let ctx = match Ctx::new(plan, target, run) {
        Ok(c) => c,
        Err((_, detail)) => {
            return FixerRun {
                end: FixerEnd::Aborted(Abort::DispatchUnavailable {
                    role: Role::Fixer,
                    detail,
                }),
                records: vec![],
                denied_writes: vec![],
            }
        }
    };
    let view = match ctx.view(iteration, None) {
        // Its writes are judged by the write gate below, not as reads.
        Ok(mut v) => {
            v.scope = v.scope.with_writes_gated_elsewhere();
            v
        }
        Err(e) => {
            return FixerRun {
                end: FixerEnd::Aborted(Abort::DispatchUnavailable {
                    role: Role::Fixer,
                    detail: format!("cannot prepare the target view: {e}"),
                }),
                records: vec![],
                denied_writes: vec![],
            }
        }
    };
    let prompt = ctx.fixer_prompt(&view, iteration, rulings, fix_files);
    let who = Who {
        role: Role::Fixer,
        pass: None,
        round: iteration,
        tier,
        // What is left of `--budget-usd` (the plan's budgets are what the loop has left).
        max_usd: plan.budget_usd,
        finding: None,
    };
    // A gate abort cancels the token it is given: keep that local to this dispatch. The
    // Fixer is stopped once its spend passes what is left of the budget.
    let local = cancel.child_token();
    ctx.meter.arm(&local);
    let checks = Checks {
        before_redispatch: Some(link_gate),
        ..Checks::none()
    };
    let r: RoleRun<FixerOutput> =
        run_role(&ctx, &view, who, prompt, &local, progress, checks).await;
    let end = match r.output {
        _ if cancel.is_cancelled() => FixerEnd::Interrupted,
        RoleOutput::Cancelled if ctx.meter.tripped() => {
            link_gate().map_or(FixerEnd::BudgetExhausted, FixerEnd::Aborted)
        }
        RoleOutput::Cancelled => FixerEnd::Interrupted,
        RoleOutput::Abort(a) => FixerEnd::Aborted(a),
        out => match write_violation(&target.root, &r.records)
            .map(|path| Abort::OfftargetWrite {
                role: Role::Fixer,
                path,
            })
            .or_else(link_gate)
        {
            Some(abort) => FixerEnd::Aborted(abort),
            None => match out {
                RoleOutput::Valid(o) => FixerEnd::Answered(o),
                RoleOutput::Malformed(e) => FixerEnd::Malformed(e),
                RoleOutput::Abort(a) => FixerEnd::Aborted(a),
                RoleOutput::Lost(detail) => FixerEnd::Aborted(Abort::DispatchUnavailable {
                    role: Role::Fixer,
                    detail,
                }),
                RoleOutput::Cancelled => FixerEnd::Interrupted,
            },
        },
    };
    let denied_writes = write_attempts(&target.root, &r.records)
        .into_iter()
        .filter(|(_, denied)| *denied)
        .map(|(p, _)| p)
        .collect();
    FixerRun {
        end,
        records: r.records,
        denied_writes,
    }
}

/// Every Edit/Write (over every attempt): (resolved path, denied by the CLI's permissions).
pub(super) fn write_attempts(root: &Path, records: &[DispatchRecord]) -> Vec<(String, bool)> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut out = vec![];
    for r in records {
        let denied: Vec<&str> = r
            .outcome
            .result
            .iter()
            .flat_map(|res| res.permission_denials.iter())
            .filter_map(|d| d.get("tool_use_id").and_then(|v| v.as_str()))
            .collect();
        for t in &r.outcome.tool_uses {
            let paths: Vec<&str> = match WRITE_TOOLS.iter().find(|(name, _)| *name == t.name) {
                Some((_, key)) => vec![t.input.get(*key).and_then(|v| v.as_str()).unwrap_or("")],
                None => t.access.write.iter().map(String::as_str).collect(),
            };
            for raw in paths {
                out.push((
                    resolve(Path::new(raw), &root).display().to_string(),
                    denied.contains(&t.id.as_str()),
                ));
            }
        }
    }
    out
}

/// The first Edit/Write outside `root` that the CLI did not deny. (A denied attempt wrote
/// nothing: it is recorded, not an abort.)
pub(super) fn write_violation(root: &Path, records: &[DispatchRecord]) -> Option<String> {
    let canon = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    write_attempts(root, records)
        .into_iter()
        .find(|(p, denied)| !denied && !Path::new(p).starts_with(&canon))
        .map(|(p, _)| p)
}

/// Absolute, `.`/`..` resolved lexically, then the longest existing prefix canonicalised
/// (the file itself may not exist yet).
fn resolve(p: &Path, cwd: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let mut lexical = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other.as_os_str()),
        }
    }
    let mut base = lexical.clone();
    let mut rest = vec![];
    while !base.exists() {
        match (base.file_name().map(|n| n.to_os_string()), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                base = parent.to_path_buf();
            }
            _ => return lexical,
        }
    }
    let mut out = base.canonicalize().unwrap_or(base);
    for n in rest.into_iter().rev() {
        out.push(n);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{AgentOutcome, ProcessEnd, ToolUse};

    fn rec(tools: Vec<(&str, serde_json::Value)>) -> DispatchRecord {
        DispatchRecord {
            role: Role::Fixer,
            pass: None,
            label: "fixer".into(),
            dir: "agents/fix/fixer".into(),
            outcome: AgentOutcome {
                tool_uses: tools
                    .into_iter()
                    .enumerate()
                    .map(|(i, (n, input))| ToolUse {
                        id: format!("t{i}"),
                        access: crate::dispatch::claude_access(n, &input),
                        name: n.into(),
                        input,
                    })
                    .collect(),
                ..AgentOutcome::empty(
                    "fixer",
                    "claude",
                    Role::Fixer,
                    Tier::Opus,
                    "opus",
                    ProcessEnd::Exited { code: 0 },
                )
            },
            gates: Default::default(),
            context_reads: vec![],
        }
    }

    #[test]
    fn writes_must_stay_inside_the_worktree() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("wt");
        std::fs::create_dir_all(root.join("src")).unwrap();
        let root = root.canonicalize().unwrap();
        let ok = rec(vec![
            ("Read", serde_json::json!({"file_path": "/etc/passwd"})),
            (
                "Edit",
                serde_json::json!({"file_path": root.join("src/lib.rs")}),
            ),
            ("Write", serde_json::json!({"file_path": "src/new/x.rs"})),
        ]);
        assert_eq!(write_violation(&root, std::slice::from_ref(&ok)), None);
        let up = rec(vec![(
            "Write",
            serde_json::json!({"file_path": "../../x.rs"}),
        )]);
        assert!(write_violation(&root, &[ok, up]).is_some());
        let abs = rec(vec![(
            "Edit",
            serde_json::json!({"file_path": "/tmp/x.rs"}),
        )]);
        assert_eq!(write_violation(&root, &[abs]).as_deref(), Some("/tmp/x.rs"));
        let mut denied = rec(vec![(
            "Write",
            serde_json::json!({"file_path": "/tmp/x.rs"}),
        )]);
        denied.outcome.result = Some(crate::dispatch::ResultEvent {
            is_error: false,
            subtype: "success".into(),
            text: Some("{}".into()),
            total_cost_usd: 0.0,
            usage: Default::default(),
            permission_denials: vec![
                serde_json::json!({"tool_name": "Write", "tool_use_id": "t0"}),
            ],
            num_turns: None,
        });
        assert_eq!(write_violation(&root, std::slice::from_ref(&denied)), None);
        assert_eq!(
            write_attempts(&root, &[denied]),
            [("/tmp/x.rs".to_string(), true)]
        );
        std::os::unix::fs::symlink(d.path(), root.join("link")).unwrap();
        let via_link = rec(vec![(
            "Write",
            serde_json::json!({"file_path": "link/y.rs"}),
        )]);
        assert!(write_violation(&root, &[via_link]).is_some());
    }
}

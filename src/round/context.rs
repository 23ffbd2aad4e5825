//! The per-run dispatch context (agents, assets, symbols) and the per-round view of the
//! target (tag, guide, read scope, RELEVANT_FILES budget), plus prompt building.

use super::prompt::{
    embed_json, escape_text, first_line, intent_block, render, target_guide, target_tag,
    PromptError, PromptVars,
};
use super::{blocks, Assets, RoundFinding};
use crate::dispatch::AgentSpec;
use crate::findings::{AdversaryOutput, Role, Ruling};
use crate::gates::ScopeLines;
use crate::gates::{check_place, Outline, Place, ReadScope};
use crate::resolve::{match_paths, Panel, RunPlan};
use crate::store::{write_record, RunDir};
use crate::target::{PinnedTarget, TargetKind, TargetType};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// What a finding's place is checked against besides the target's files: the spec
/// document's headings and the context (project rules) files.
#[derive(Clone, Copy)]
pub(super) struct Places<'a> {
    pub outline: Option<&'a Outline>,
    pub context: &'a [String],
}

impl Places<'_> {
    pub(super) fn check<'f>(
        &self,
        file: &'f str,
        line: Option<u32>,
        target: &PinnedTarget,
    ) -> Place<'f> {
        check_place(file, line, target, self.outline, self.context)
    }
}

/// Everything that stays fixed for a run.
pub(super) struct Ctx<'a> {
    pub plan: &'a RunPlan,
    pub target: &'a PinnedTarget,
    pub run: &'a RunDir,
    pub assets: Assets,
    panel: Panel,
    /// The rendered `<localization>` block per role ("" when not configured).
    localization: BTreeMap<&'static str, String>,
    /// The rendered `<intent>` block per role ("" without `--intent`).
    intent: BTreeMap<&'static str, String>,
    /// The `<path_instructions>` block for this target ("" when no glob matched).
    path_instructions: String,
    /// Project rules files agents may Read (absolute; context, not target).
    rules_paths: Vec<PathBuf>,
    /// The same, repository-relative (a finding naming one is dropped, not an abort).
    rules_files: Vec<String>,
    /// The spec document's headings (spec targets only): sections must exist.
    outline: Option<Outline>,
    /// The review's spend against its budgets while agents run (docs/contracts.md §19.3).
    pub meter: super::meter::Meter,
    /// What context citations are checked against (docs/contracts.md §22.2).
    pub cite_src: ScopeLines<'a>,
    /// The `<context_map>` block, the same for every role and round ("" without a map).
    context_map: String,
}

/// What one round's agents are pointed at.
pub(super) struct RoundView {
    pub tag: String,
    pub guide: String,
    pub scope: ReadScope,
    /// The files of a RELEVANT_FILES budget (None = the whole target).
    pub relevant: Option<Vec<String>>,
}

/// What earlier rounds established, for prompts.
#[derive(Debug, Clone, Default)]
pub(super) struct History {
    /// (round, finding id, file, line) of every confirmed ruling.
    pub confirmed: Vec<(u32, String, String, u32)>,
    pub prior_summary: Option<String>,
    /// Every ruling of the earlier rounds, with its round (the Judge's prior rulings).
    pub rulings: Vec<(u32, Ruling)>,
    /// (file, line) of every suppressed finding: on the Enthusiasts' BLOCKLIST with the
    /// confirmed locations, never sent to the Judge.
    pub suppressed: Vec<(String, u32)>,
    /// Every finding the Judge dismissed in an earlier round: a repeat is kept from the
    /// Judge, and the Enthusiasts get their places beside the BLOCKLIST.
    pub debunked: Vec<super::debunked::Debunked>,
}

impl History {
    pub fn locations(&self) -> Vec<(String, u32)> {
        self.confirmed
            .iter()
            .map(|(_, _, f, l)| (f.clone(), *l))
            .collect()
    }

    /// The confirmed and the suppressed locations: what is not raised again.
    pub fn blocklist(&self) -> Vec<(String, u32)> {
        let mut v = self.locations();
        v.extend(self.suppressed.iter().cloned());
        v
    }
}

fn localization_block(role: Role, primary: &str, allowed: &[String]) -> String {
    if primary.trim().is_empty() {
        return String::new();
    }
    let allowed_list = allowed.join(", ");
    let mandate = match role {
        Role::Enthusiast => "Flag content written in a language other than the primary one (category `localization`): a mix inside one file, or a whole file",
        Role::Adversary => "Map content that is legitimately in another language as safe zones with evidence",
        Role::Judge => "Rule localization findings on their merit, like any other",
        Role::Fixer | Role::Prover | Role::Matcher => {
            "Write new comments and text in the primary language"
        }
    };
    format!(
        "<localization primary=\"{}\" allowed=\"{}\">{mandate}. Exempt: i18n and locale \
         resources, quoted foreign text and error messages, proper nouns, identifiers, and the \
         allowed languages. Write your own descriptions and resolutions in {}.</localization>",
        escape_text(primary),
        escape_text(&allowed_list),
        escape_text(primary)
    )
}

impl<'a> Ctx<'a> {
    /// Resolve every agent binary and load the assets; a failure is a dispatch failure.
    pub fn new(
        plan: &'a RunPlan,
        target: &'a PinnedTarget,
        run: &'a RunDir,
    ) -> Result<Self, (Role, String)> {
        let panel = Panel::resolve(plan)?;
        // The repository inputs were read once, when the plan was resolved (for iterate mode
        // from the user's repository, not the worktree the target was pinned in).
        let assets = Assets::new(&plan.repo_inputs);
        let loc = &plan.settings.localization;
        let localization = [Role::Enthusiast, Role::Adversary, Role::Judge, Role::Fixer]
            .into_iter()
            .map(|r| {
                (
                    r.as_str(),
                    localization_block(r, &loc.primary, &loc.allowed),
                )
            })
            .collect();
        let intent = [Role::Enthusiast, Role::Adversary, Role::Judge, Role::Fixer]
            .into_iter()
            .map(|r| (r.as_str(), intent_block(r, plan.intent.as_deref())))
            .collect();
        let matched = match_paths(&plan.context.paths, target.allowed_files());
        let outline = (target.target_type == TargetType::Spec)
            .then(|| target.files.first())
            .flatten()
            .and_then(|doc| std::fs::read_to_string(target.root.join(&doc.path)).ok())
            .map(|text| Outline::parse(&text));
        Ok(Self {
            plan,
            target,
            run,
            assets,
            panel,
            localization,
            intent,
            path_instructions: blocks::path_instructions(&matched),
            rules_paths: plan.context.rules_paths(&target.root),
            rules_files: plan.context.rules.iter().map(|r| r.path.clone()).collect(),
            outline,
            meter: super::meter::Meter::new(plan.budget_usd, plan.budget_tokens),
            // Judged as pinned (docs/contracts.md §22.2).
            cite_src: ScopeLines::of_target(target, plan.settings.review.max_file_bytes),
            context_map: super::map::context_map(plan, target, run),
        })
    }

    /// What findings' and rulings' places are checked against besides the target's files.
    pub fn places(&self) -> Places<'_> {
        Places {
            outline: self.outline.as_ref(),
            context: &self.rules_files,
        }
    }

    /// The agent that plays `role` (in pass `pass`: Enthusiast agents round-robin).
    pub fn agent(&self, role: Role, pass: Option<u32>) -> &AgentSpec {
        self.panel.agent(role, pass)
    }

    fn spec_track(&self) -> bool {
        self.target.target_type == TargetType::Spec
    }

    /// The role's system prompt (the `-spec` variant for spec targets).
    pub fn body(&self, role: Role) -> &str {
        self.assets.body(role, self.spec_track())
    }

    /// What the agent gets as its system prompt: the role body and, for an Enthusiast on a
    /// code target, the escape checklist. Both stay the same across passes and rounds, so
    /// they belong to the prefix every dispatch of the role shares (what prompt caching
    /// reads back at a tenth of the price); the per-round prompt follows them.
    pub fn system_prompt(&self, role: Role) -> String {
        let body = self.body(role);
        if role == Role::Enthusiast && !self.spec_track() {
            format!("{}\n\n{}\n", body.trim_end(), self.assets.checklist.trim())
        } else {
            body.to_string()
        }
    }

    pub(super) fn mode(&self) -> &'static str {
        self.target.mode.as_str()
    }

    /// The path in the `<target>` tag for the whole target.
    pub fn target_path(&self) -> PathBuf {
        match (&self.target.file_path, &self.target.artefact) {
            (Some(p), _) => p.clone(),
            (None, Some(a)) => self.run.target_dir().join(a.name),
            (None, None) => self.run.target_dir(),
        }
    }

    /// `target/context.txt`: the context scope's listing.
    pub fn context_list(&self) -> PathBuf {
        self.run.target_dir().join(crate::store::CONTEXT_LIST)
    }

    /// What the backends' permission layers refuse inside the repository (`.git`, ignored,
    /// untracked and left-out paths), the run's target artefacts and the project rules kept
    /// readable; just `.git` without a scope.
    pub fn hidden(&self) -> Vec<PathBuf> {
        let root = &self.target.root;
        match &self.target.context {
            Some(c) => {
                let mut keep = vec![self.run.target_dir()];
                keep.extend(self.rules_paths.iter().cloned());
                let keep: Vec<PathBuf> = keep
                    .into_iter()
                    .map(|p| p.canonicalize().unwrap_or(p))
                    .collect();
                c.hidden(&keep)
            }
            None => vec![root.join(".git")],
        }
    }

    /// Whether agents may read the context scope (`[review] context = "tree"`).
    pub fn reads_context(&self) -> bool {
        self.target
            .context
            .as_ref()
            .is_some_and(|c| c.mode() == crate::target::ContextMode::Tree)
    }

    /// The round's view: the whole target, or (round > 1, multi-file manifest) only
    /// RELEVANT_FILES via `target/relevant-<N>.txt`.
    pub fn view(&self, round: u32, relevant: Option<Vec<String>>) -> std::io::Result<RoundView> {
        let root = &self.target.root;
        let relevant = relevant.filter(|r| {
            self.target.kind == TargetKind::Manifest
                && !r.is_empty()
                && r.len() < self.target.files.len()
        });
        let Some(files) = relevant else {
            let path = self.target_path();
            return Ok(RoundView {
                tag: target_tag(&path, self.target.kind.as_str(), &self.target.sha256),
                guide: target_guide(self.target, &path),
                scope: ReadScope::new(root, self.target.allowed_files(), &path, &self.rules_paths)
                    .with_context(self.target.context.clone(), &[self.context_list()]),
                relevant: None,
            });
        };
        let path = self.run.target_dir().join(format!("relevant-{round}.txt"));
        let mut listing = String::new();
        let mut sums = String::new();
        for f in &files {
            listing.push_str(f);
            listing.push('\n');
            let sha = self.target.file(f).map_or("", |t| t.sha256.as_str());
            sums.push_str(&format!("{sha}  {f}\n"));
        }
        write_record(&path, listing.as_bytes())?;
        let sha = hex::encode(Sha256::digest(sums.as_bytes()));
        let may_read = if self.reads_context() {
            "Findings name only the target's files; what else may be read is in the Scope rules."
        } else {
            "Only the target's files may be read."
        };
        let guide = format!(
            "This round reviews only RELEVANT_FILES: the {} file(s) listed at {} (files with \
             confirmed findings so far), a subset of the target. Read that list first, then \
             Read each listed file at {}/<path>. {may_read}",
            files.len(),
            path.display(),
            root.display()
        );
        let mut extra = vec![self.target_path()];
        extra.extend(self.rules_paths.iter().cloned());
        Ok(RoundView {
            tag: target_tag(&path, "relevant_manifest", &sha),
            guide,
            scope: ReadScope::new(root, self.target.allowed_files(), &path, &extra)
                .with_context(self.target.context.clone(), &[self.context_list()]),
            relevant: Some(files),
        })
    }

    pub(super) fn base_vars(&self, view: &RoundView, round: u32, role: Role) -> PromptVars {
        let mut v = PromptVars::default();
        v.set("round", round.to_string())
            .set("mode", self.mode())
            .set("target_tag", view.tag.clone())
            .set("target_guide", view.guide.clone())
            .set("brief", escape_text(&self.target.brief))
            .set("context_map", self.context_map.clone())
            .set(
                "localization",
                self.localization
                    .get(role.as_str())
                    .cloned()
                    .unwrap_or_default(),
            )
            .set(
                "project_rules",
                blocks::project_rules(role, &self.plan.context.rules),
            )
            .set("path_instructions", self.path_instructions.clone())
            .set(
                "focus",
                blocks::focus(role, self.plan.context.focus.as_deref()),
            )
            .set(
                "intent",
                self.intent.get(role.as_str()).cloned().unwrap_or_default(),
            )
            .set(
                "read_scope",
                blocks::read_scope(
                    role,
                    self.reads_context().then(|| self.context_list()).as_deref(),
                ),
            )
            .set("prior_rounds", "")
            .set("checklist", "")
            .set("findings", "[]")
            .set("adversarial_context", "{}")
            .set("pass", "1")
            .set("passes", "1");
        v
    }

    pub fn enthusiast_prompt(
        &self,
        view: &RoundView,
        round: u32,
        pass: u32,
        history: &History,
    ) -> Result<String, PromptError> {
        let mut v = self.base_vars(view, round, Role::Enthusiast);
        v.set("pass", pass.to_string())
            .set("passes", self.plan.passes.to_string())
            .set(
                "prior_rounds",
                prior_rounds_section(history, Role::Enthusiast),
            );
        let header = first_line(
            round,
            self.mode(),
            Role::Enthusiast,
            Some((pass, self.plan.passes)),
        );
        render(&header, self.assets.template(Role::Enthusiast), &v)
    }

    pub fn adversary_prompt(&self, view: &RoundView, round: u32) -> Result<String, PromptError> {
        let v = self.base_vars(view, round, Role::Adversary);
        let header = first_line(round, self.mode(), Role::Adversary, None);
        render(&header, self.assets.template(Role::Adversary), &v)
    }

    pub fn judge_prompt(
        &self,
        view: &RoundView,
        round: u32,
        findings: &[RoundFinding],
        map: &AdversaryOutput,
        history: &History,
    ) -> Result<String, PromptError> {
        let mut v = self.base_vars(view, round, Role::Judge);
        let list: Vec<_> = findings.iter().map(|f| &f.finding).collect();
        v.set("findings", embed_json(&list))
            .set("adversarial_context", embed_json(map))
            .set("prior_rounds", prior_rounds_section(history, Role::Judge));
        let header = first_line(round, self.mode(), Role::Judge, None);
        render(&header, self.assets.template(Role::Judge), &v)
    }
}

impl Ctx<'_> {
    /// The Fixer's prompt (iterate mode): first line `[AR Round {iteration} — {MODE}] Fixer`,
    /// the target tag, and the confirmed rulings as JSON inside `<rulings>…</rulings>`.
    pub fn fixer_prompt<T: serde::Serialize>(
        &self,
        view: &RoundView,
        iteration: u32,
        rulings: &T,
        fix_files: &[String],
    ) -> Result<String, PromptError> {
        let mut v = self.base_vars(view, iteration, Role::Fixer);
        let files = if fix_files.is_empty() {
            "(none named)".to_string()
        } else {
            fix_files
                .iter()
                .map(|f| format!("`{}`", escape_text(f)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        v.set("rulings", embed_json(rulings))
            .set("fix_files", files);
        let header = first_line(iteration, self.mode(), Role::Fixer, None);
        render(&header, self.assets.template(Role::Fixer), &v)
    }
}

/// RELEVANT_FILES for round > 1: files with confirmed findings ∪ files never reviewed.
pub(super) fn relevant_files(
    target: &PinnedTarget,
    file_finding_counts: &BTreeMap<String, u32>,
    reviewed: &BTreeSet<String>,
) -> Vec<String> {
    target
        .allowed_files()
        .filter(|f| file_finding_counts.get(*f).is_some_and(|n| *n > 0) || !reviewed.contains(*f))
        .map(String::from)
        .collect()
}

/// The Judge's prior rulings listed at most (the most recent are kept).
const PRIOR_RULINGS_LISTED: usize = 100;

/// One earlier ruling as the Judge sees it.
#[derive(serde::Serialize)]
struct PriorRuling<'a> {
    round: u32,
    finding_id: &'a str,
    file: Option<&'a str>,
    line: Option<u32>,
    winner: crate::findings::Winner,
    final_severity: &'a str,
    resolution: &'a str,
}

/// The `<prior_rulings>` block: every earlier ruling with its place, winner, severity and
/// resolution, so the Judge can rule consistently and judge convergence ("the same
/// severity") on facts (docs/architecture.md §19.6).
fn prior_rulings_block(h: &History) -> String {
    if h.rulings.is_empty() {
        return String::new();
    }
    let skip = h.rulings.len().saturating_sub(PRIOR_RULINGS_LISTED);
    let list: Vec<PriorRuling<'_>> = h.rulings[skip..]
        .iter()
        .map(|(round, r)| PriorRuling {
            round: *round,
            finding_id: &r.finding_id,
            file: r.file.as_deref(),
            line: r.line,
            winner: r.winner,
            final_severity: r.final_severity.as_str(),
            resolution: &r.resolution,
        })
        .collect();
    let note = if skip > 0 {
        format!(
            " (the latest {PRIOR_RULINGS_LISTED} of {})",
            h.rulings.len()
        )
    } else {
        String::new()
    };
    format!(
        "Rulings of earlier rounds{note}:\n<prior_rulings>\n{}\n</prior_rulings>\n\
         Rule consistently with them unless the code shows they were wrong. `convergence` may \
         be true only if every ruling you confirm now matches a confirmed prior ruling within \
         5 lines (the same section, for a spec) with the same final_severity.\n",
        embed_json(&list)
    )
}

/// The Enthusiasts' DEBUNKED line (empty when nothing was dismissed): the places and
/// categories the Judge dismissed, which arev keeps from the Judge if raised again.
fn debunked_line(h: &History) -> String {
    if h.debunked.is_empty() {
        return String::new();
    }
    let list: Vec<String> = h
        .debunked
        .iter()
        .map(|d| {
            let place = match (&d.finding.file, d.finding.line) {
                (Some(f), Some(l)) => format!("{f}:{l}"),
                (Some(f), None) => f.clone(),
                (None, _) => "(target-wide)".into(),
            };
            format!(
                "{place} {} (round {} {})",
                d.finding.category, d.round, d.finding.id
            )
        })
        .collect();
    format!(
        "DEBUNKED — dismissed by the Judge, do not re-raise (the same defect is dropped unjudged): {}\n",
        escape_text(&list.join(", "))
    )
}

fn prior_rounds_section(h: &History, role: Role) -> String {
    if h.confirmed.is_empty()
        && h.prior_summary.is_none()
        && h.rulings.is_empty()
        && h.suppressed.is_empty()
        && h.debunked.is_empty()
    {
        return String::new();
    }
    let mut list: Vec<String> = h
        .confirmed
        .iter()
        .map(|(r, id, f, l)| format!("{f}:{l} (round {r} {id})"))
        .collect();
    if role != Role::Judge {
        list.extend(
            h.suppressed
                .iter()
                .map(|(f, l)| format!("{f}:{l} (suppressed)")),
        );
    }
    let list = if list.is_empty() {
        "(none)".to_string()
    } else {
        list.join(", ")
    };
    let summary = escape_text(h.prior_summary.as_deref().unwrap_or("(none)"));
    match role {
        Role::Judge => format!(
            "## Earlier rounds\nConfirmed before this round: {list}\nPrior Judge summary: {summary}\n\
             A finding within ±5 lines of one of these, or with `prior_finding_id`, builds on \
             earlier work: rule on it on its own merit.\n{}",
            prior_rulings_block(h)
        ),
        _ => format!(
            "## Earlier rounds\nBLOCKLIST — already confirmed, do not re-raise (±5 lines): {list}\n\
             {}Prior Judge summary: {summary}\nReport only defects NOT in the blocklist. When a \
             finding builds on an earlier one, set `prior_finding_id` to that id.\n",
            debunked_line(h)
        ),
    }
}

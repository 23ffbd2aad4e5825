//! The parts of a report that are accumulated, assembled in one place for every report arev
//! writes (one review, an iterate run, a merge of shards): the cost per role, tier and agent
//! — from dispatch records or from other reports' costs —, the report target of a pinned
//! target, the order of confirmed findings, the severity counts and the debunk rate.
//! `Report::mixed_panel` reads `cost.by_agent`, so every report must fill it here.

use super::{BySeverity, Cost, CostLine, Quality, ReportFinding, ReportTarget, UnpricedModel};
use crate::round::DispatchRecord;
use crate::store::MetaTarget;
use crate::target::PinnedTarget;

impl CostLine {
    fn absorb(&mut self, other: &CostLine) {
        self.usd += other.usd;
        self.tokens += other.tokens;
        self.unpriced_tokens += other.unpriced_tokens;
        self.dispatches += other.dispatches;
        self.context_files += other.context_files;
        self.context_tokens += other.context_tokens;
    }
}

impl Cost {
    /// Count one dispatch: its USD and tokens, under its role, its tier and its agent; a
    /// dispatch without a known price adds its tokens to `unpriced_tokens` and its model to
    /// `unpriced`, never $0 to a price.
    pub fn add_dispatch(&mut self, d: &DispatchRecord) {
        let unpriced_tokens = d.outcome.unpriced_tokens();
        let line = CostLine {
            usd: d.outcome.cost_usd(),
            tokens: d.outcome.tokens(),
            unpriced_tokens,
            dispatches: 1,
            context_files: d.context_reads.len() as u64,
            context_tokens: d.context_reads.iter().map(|r| r.tokens).sum(),
        };
        self.usd += line.usd;
        self.tokens += line.tokens;
        if unpriced_tokens > 0 {
            self.add_unpriced(&d.outcome.agent, &d.outcome.model, unpriced_tokens);
        }
        for (map, key) in [
            (&mut self.by_role, d.role.as_str()),
            (&mut self.by_tier, d.outcome.tier.as_str()),
            (&mut self.by_agent, d.outcome.agent.as_str()),
        ] {
            map.entry(key.to_string()).or_default().absorb(&line);
        }
    }

    /// The cost of `dispatches`.
    pub fn from_dispatches<'a>(dispatches: impl IntoIterator<Item = &'a DispatchRecord>) -> Self {
        let mut c = Cost::default();
        for d in dispatches {
            c.add_dispatch(d);
        }
        c
    }

    /// `tokens` of `agent` running `model`, which has no known price.
    fn add_unpriced(&mut self, agent: &str, model: &str, tokens: u64) {
        self.unpriced_tokens += tokens;
        match self
            .unpriced
            .iter_mut()
            .find(|u| u.agent == agent && u.model == model)
        {
            Some(u) => u.tokens += tokens,
            None => {
                self.unpriced.push(UnpricedModel {
                    agent: agent.to_string(),
                    model: model.to_string(),
                    tokens,
                });
                self.unpriced.sort();
            }
        }
    }

    /// Add another cost (of a review, a fix or a shard) with every breakdown.
    pub fn absorb(&mut self, other: &Cost) {
        self.usd += other.usd;
        self.tokens += other.tokens;
        for u in &other.unpriced {
            self.add_unpriced(&u.agent, &u.model, u.tokens);
        }
        for (mine, theirs) in [
            (&mut self.by_role, &other.by_role),
            (&mut self.by_tier, &other.by_tier),
            (&mut self.by_agent, &other.by_agent),
        ] {
            for (k, v) in theirs {
                mine.entry(k.clone()).or_default().absorb(v);
            }
        }
    }
}

impl ReportTarget {
    /// The report target of `target` as pinned, with its re-pin (`sha256_final`, `drift`)
    /// as recorded in meta.json.
    pub fn new(target: &PinnedTarget, repinned: &MetaTarget) -> Self {
        Self {
            kind: target.kind,
            display: target.display.clone(),
            sha256: target.sha256.clone(),
            sha256_final: repinned.sha256_final.clone(),
            drift: repinned.drift,
            base: target.base.clone(),
            target_type: target.target_type,
            mode: target.mode,
            allowed_files: target.allowed_files().map(String::from).collect(),
            commit: target.in_repo.then(|| head_commit(&target.root)).flatten(),
            context_sha: target.context.as_ref().map(|c| c.sha().to_owned()),
        }
    }
}

/// The commit HEAD names in the git repository at `root` (None when unborn or not a repo).
pub fn head_commit(root: &std::path::Path) -> Option<String> {
    let repo = git2::Repository::open(root).ok()?;
    let head = repo.head().ok()?.peel_to_commit().ok()?;
    Some(head.id().to_string())
}

/// The debunk rate a healthy review lands in.
pub const HEALTHY_BAND: [f64; 2] = [0.20, 0.35];

/// Confirmed findings in report order: highest severity first, then file, then line.
pub(super) fn sort_confirmed(confirmed: &mut [ReportFinding]) {
    confirmed.sort_by(|a, b| {
        (std::cmp::Reverse(a.severity), &a.file, a.line).cmp(&(
            std::cmp::Reverse(b.severity),
            &b.file,
            b.line,
        ))
    });
}

impl BySeverity {
    /// The severity counts of `findings`.
    pub fn of(findings: &[ReportFinding]) -> Self {
        let mut by = Self::default();
        for f in findings {
            by.add(f.severity);
        }
        by
    }
}

impl Quality {
    /// debunked / (confirmed + debunked) and whether it lies in `band`; null without rulings.
    pub(super) fn debunk_rate(
        confirmed: usize,
        debunked: usize,
        band: [f64; 2],
    ) -> (Option<f64>, Option<bool>) {
        let judged = (confirmed + debunked) as f64;
        let rate = (judged > 0.0).then(|| debunked as f64 / judged);
        (rate, rate.map(|r| (band[0]..=band[1]).contains(&r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{AgentOutcome, ProcessEnd, ResultEvent, Usage};
    use crate::findings::{Role, Tier};
    use crate::round::GateResults;

    fn dispatch(agent: &str, role: Role, tier: Tier, usd: f64, tokens: u64) -> DispatchRecord {
        DispatchRecord {
            role,
            pass: None,
            label: role.as_str().into(),
            dir: String::new(),
            outcome: AgentOutcome {
                result: Some(ResultEvent {
                    is_error: false,
                    subtype: "success".into(),
                    text: None,
                    total_cost_usd: usd,
                    usage: Usage {
                        input_tokens: tokens,
                        ..Usage::default()
                    },
                    permission_denials: vec![],
                    num_turns: None,
                }),
                ..AgentOutcome::empty(
                    role.as_str(),
                    agent,
                    role,
                    tier,
                    tier.as_str(),
                    ProcessEnd::Exited { code: 0 },
                )
            },
            gates: GateResults::default(),
            context_reads: vec![],
        }
    }

    #[test]
    fn dispatches_are_counted_per_role_tier_and_agent() {
        let ds = [
            dispatch("claude", Role::Enthusiast, Tier::Sonnet, 0.25, 10),
            dispatch("codex", Role::Enthusiast, Tier::Sonnet, 0.5, 20),
            dispatch("claude", Role::Judge, Tier::Opus, 1.0, 5),
        ];
        let c = Cost::from_dispatches(&ds);
        assert_eq!((c.usd, c.tokens), (1.75, 35));
        assert_eq!(c.by_role["enthusiast"].dispatches, 2);
        assert_eq!(c.by_role["enthusiast"].tokens, 30);
        assert_eq!(c.by_tier["opus"].usd, 1.0);
        assert_eq!(c.by_agent["claude"].dispatches, 2);
        assert_eq!(c.by_agent["codex"].usd, 0.5);
    }

    #[test]
    fn absorbing_keeps_every_breakdown_the_per_agent_one_included() {
        let a = Cost::from_dispatches(&[dispatch("claude", Role::Judge, Tier::Opus, 1.0, 5)]);
        let b = Cost::from_dispatches(&[
            dispatch("codex", Role::Enthusiast, Tier::Opus, 0.5, 20),
            dispatch("claude", Role::Judge, Tier::Opus, 0.25, 1),
        ]);
        let mut total = Cost::default();
        total.absorb(&a);
        total.absorb(&b);
        assert_eq!((total.usd, total.tokens), (1.75, 26));
        assert_eq!(total.by_agent.len(), 2, "{:?}", total.by_agent);
        assert_eq!(total.by_agent["claude"].dispatches, 2);
        assert_eq!(total.by_role["judge"].usd, 1.25);
        assert_eq!(total.by_tier["opus"].dispatches, 3);
    }

    /// A dispatch of a model without a price adds its tokens as unpriced, names its agent
    /// and model, and adds nothing to the USD (the known part); absorbing keeps both.
    #[test]
    fn unpriced_dispatches_are_counted_apart_and_named() {
        let mut local = dispatch("local", Role::Adversary, Tier::Opus, 0.0, 150);
        local.outcome.unpriced = true;
        local.outcome.model = "local-coder".into();
        let priced = dispatch("claude", Role::Enthusiast, Tier::Opus, 0.02, 300);
        let c = Cost::from_dispatches(&[priced, local.clone()]);
        assert_eq!((c.usd, c.tokens, c.unpriced_tokens), (0.02, 450, 150));
        assert_eq!(c.by_role["adversary"].unpriced_tokens, 150);
        assert_eq!(c.by_role["enthusiast"].unpriced_tokens, 0);
        assert_eq!(c.by_agent["local"].unpriced_tokens, 150);
        assert_eq!(
            c.unpriced,
            vec![UnpricedModel {
                agent: "local".into(),
                model: "local-coder".into(),
                tokens: 150
            }]
        );
        let mut total = Cost::default();
        total.absorb(&c);
        total.absorb(&Cost::from_dispatches(&[local]));
        assert_eq!((total.unpriced_tokens, total.unpriced.len()), (300, 1));
        assert_eq!(total.unpriced[0].tokens, 300);
    }

    #[test]
    fn the_debunk_rate_and_its_band() {
        assert_eq!(Quality::debunk_rate(0, 0, HEALTHY_BAND), (None, None));
        assert_eq!(
            Quality::debunk_rate(3, 1, HEALTHY_BAND),
            (Some(0.25), Some(true))
        );
        assert_eq!(
            Quality::debunk_rate(1, 1, HEALTHY_BAND),
            (Some(0.5), Some(false))
        );
    }

    #[test]
    fn a_merge_keeps_the_per_agent_cost_of_a_mixed_panel() {
        use super::super::fixtures::shard;
        use crate::report::{merge_reports, MergeInput};
        use crate::store::RunStatus;
        let mut a = shard(1, 2, &["a.rs", "b.rs"], RunStatus::Complete);
        a.cost = Cost::from_dispatches(&[dispatch("claude", Role::Judge, Tier::Opus, 1.0, 5)]);
        let mut b = shard(2, 2, &["c.rs", "d.rs"], RunStatus::Complete);
        b.cost = Cost::from_dispatches(&[dispatch("codex", Role::Judge, Tier::Opus, 1.0, 5)]);
        assert!(!a.mixed_panel() && !b.mixed_panel());
        let inputs = [a, b].map(|report| MergeInput {
            name: report.run_id.clone(),
            report,
        });
        let m = merge_reports(inputs.into()).unwrap();
        assert!(m.mixed_panel(), "{:?}", m.cost.by_agent);
        assert_eq!(m.cost.by_agent["codex"].dispatches, 1);
    }
}

//! The reviewer panel of one run: every agent a role or pass uses, resolved to an
//! `AgentSpec` (binary found, models, per-agent timeout) once, at the start of the review.

use super::RunPlan;
use crate::config::{AgentConfig, Config};
use crate::dispatch::{price_of, resolve_binary, AgentSpec};
use crate::findings::{Role, Tier};
use std::collections::BTreeMap;

/// Resolved agents by name, and the plan's role → agent assignment.
#[derive(Debug, Clone)]
pub struct Panel {
    specs: BTreeMap<String, AgentSpec>,
    enthusiasts: Vec<String>,
    adversary: String,
    judge: String,
}

/// The dispatchable spec of agent `name`. A missing binary is an error here (at dispatch,
/// so that it aborts the run with `agent_dispatch_unavailable`, exit 3).
pub fn agent_spec(config: &Config, name: &str, cfg: &AgentConfig) -> Result<AgentSpec, String> {
    let binary = resolve_binary(&cfg.binary)
        .map_err(|e| format!("agent `{name}` ({} backend): {e}", cfg.backend.as_str()))?;
    let format = cfg
        .event_format()
        .ok_or_else(|| format!("agent `{name}`: a command agent needs `format`"))?;
    Ok(AgentSpec {
        name: name.to_string(),
        backend: cfg.backend,
        format,
        binary,
        extra_args: cfg.extra_args.clone(),
        models: cfg.tier_models(),
        max_turns: cfg.max_turns,
        timeout: config.agent_timeout_of(name).map_err(|e| e.to_string())?,
        pass_env: cfg.pass_env.clone(),
        fallback_model: cfg.fallback_model.clone(),
    })
}

/// A USD budget prices every token (docs/configuration.md `[prices]`): every model the
/// plan's agents may run — each tier from the first round's up, as escalation only climbs —
/// must have a price, or the budget could never trip. The first that has none, named with
/// the way out (`--budget-tokens`). Nothing to check without a USD budget.
pub fn check_usd_prices(plan: &RunPlan) -> Result<(), String> {
    if plan.budget_usd.is_none() {
        return Ok(());
    }
    let mut names: Vec<&str> = plan.enthusiasts.iter().map(String::as_str).collect();
    names.extend(plan.agents.iter().map(|a| a.name.as_str()));
    let tiers = [Tier::Haiku, Tier::Sonnet, Tier::Opus]
        .into_iter()
        .filter(|t| *t >= plan.tier_start);
    for name in names {
        // An unknown agent is reported where it is dispatched.
        let Ok(cfg) = plan.config.agent(name) else {
            continue;
        };
        let Some(format) = cfg.event_format() else {
            continue;
        };
        let models = cfg.tier_models();
        for tier in tiers.clone() {
            let model = models.get(tier);
            if price_of(format, model, &plan.config.prices).is_none() {
                return Err(format!(
                    "a USD budget (--budget-usd, [budget] usd) needs the price of every model \
                     the review may run, and agent `{name}` ({} backend) runs model `{model}` \
                     (tier {tier}) whose price is not known: add [prices.\"{model}\"] \
                     (input, output, cache_read, cache_write in USD per million tokens) to \
                     your config, or bound the run with --budget-tokens instead",
                    cfg.backend.as_str()
                ));
            }
        }
    }
    Ok(())
}

impl Panel {
    /// Resolve every agent the plan uses. On failure: the first role whose agent cannot be
    /// dispatched, and why.
    pub fn resolve(plan: &RunPlan) -> Result<Panel, (Role, String)> {
        let adversary = plan.agent_name(Role::Adversary, None).to_string();
        let judge = plan.agent_name(Role::Judge, None).to_string();
        let enthusiasts = if plan.enthusiasts.is_empty() {
            vec![plan.agent_name(Role::Enthusiast, None).to_string()]
        } else {
            plan.enthusiasts.clone()
        };
        let mut specs = BTreeMap::new();
        let uses = enthusiasts
            .iter()
            .map(|n| (Role::Enthusiast, n))
            .chain([(Role::Adversary, &adversary), (Role::Judge, &judge)]);
        for (role, name) in uses {
            if specs.contains_key(name) {
                continue;
            }
            let spec = plan
                .config
                .agent(name)
                .map_err(|e| e.to_string())
                .and_then(|cfg| agent_spec(&plan.config, name, cfg))
                .map_err(|e| (role, e))?;
            specs.insert(name.clone(), spec);
        }
        Ok(Panel {
            specs,
            enthusiasts,
            adversary,
            judge,
        })
    }

    /// The agent for one dispatch: Enthusiast pass `p` uses `enthusiasts[(p-1) % len]`;
    /// the Fixer uses the first Enthusiast agent.
    pub fn agent(&self, role: Role, pass: Option<u32>) -> &AgentSpec {
        let name = match role {
            Role::Enthusiast | Role::Fixer => {
                let i = pass.map_or(0, |p| (p.max(1) - 1) as usize % self.enthusiasts.len());
                &self.enthusiasts[i]
            }
            Role::Adversary => &self.adversary,
            Role::Judge => &self.judge,
        };
        &self.specs[name]
    }
}

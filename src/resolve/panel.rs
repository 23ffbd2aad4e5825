//! The reviewer panel of one run: every agent a role or pass uses, resolved to an
//! `AgentSpec` (binary found, models, per-agent timeout) once, at the start of the review.

use super::error::AgentSpecError;
use super::RunPlan;
use crate::config::{AgentConfig, Settings};
use crate::dispatch::{resolve_binary, AgentSpec};
use crate::findings::Role;
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
pub fn agent_spec(
    config: &Settings,
    name: &str,
    cfg: &AgentConfig,
) -> Result<AgentSpec, AgentSpecError> {
    let binary = resolve_binary(&cfg.binary).map_err(|source| AgentSpecError::Binary {
        name: name.to_string(),
        backend: cfg.backend.as_str(),
        source,
    })?;
    let format = cfg
        .event_format()
        .ok_or_else(|| AgentSpecError::NoFormat(name.to_string()))?;
    Ok(AgentSpec {
        name: name.to_string(),
        backend: cfg.backend,
        format,
        binary,
        extra_args: own_args(cfg),
        models: cfg.tier_models(),
        max_turns: cfg.max_turns,
        timeout: config.agent_timeout(name),
        // A self-hosted endpoint's key reaches this agent only.
        pass_env: cfg
            .pass_env
            .iter()
            .chain(&cfg.api_key_env)
            .cloned()
            .collect(),
        fallback_model: cfg.fallback_model.clone(),
        base_url: cfg.base_url.clone(),
        api_key_env: cfg.api_key_env.clone(),
    })
}

/// The agent's `extra_args`, after the arguments its backend takes for its `base_url`.
fn own_args(cfg: &AgentConfig) -> Vec<String> {
    let mut args = cfg
        .base_url
        .as_deref()
        .and_then(|url| {
            cfg.backend
                .backend()
                .endpoint_args(url, cfg.api_key_env.as_deref())
        })
        .unwrap_or_default();
    args.extend(cfg.extra_args.iter().cloned());
    args
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
                .settings
                .agent(name)
                .map_err(AgentSpecError::from)
                .and_then(|cfg| agent_spec(&plan.settings, name, cfg))
                // The round names the role it could not dispatch.
                .map_err(|e| (role, e.to_string()))?;
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
    /// the Fixer and the Prover use the first Enthusiast agent.
    pub fn agent(&self, role: Role, pass: Option<u32>) -> &AgentSpec {
        let name = match role {
            Role::Enthusiast | Role::Fixer | Role::Prover => {
                let i = pass.map_or(0, |p| (p.max(1) - 1) as usize % self.enthusiasts.len());
                &self.enthusiasts[i]
            }
            Role::Adversary => &self.adversary,
            // The Matcher (`arev eval bench --score`) is played by the Judge's agent.
            Role::Judge | Role::Matcher => &self.judge,
        };
        &self.specs[name]
    }
}

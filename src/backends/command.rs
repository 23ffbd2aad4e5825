//! The `command` backend: any executable, given exactly its `extra_args` (`{model}` replaced
//! by the tier's model) and the prompt, with the role body appended, on stdin. It prints
//! the events of a declared `format`, decoded by that format's backend; arev interprets
//! none of its argv (no floor) and knows nothing of its credentials.

use super::backend::{Backend, Profile};
use super::event::Decoder;
use super::spec::{AgentSpec, DispatchRequest, Invocation};
use crate::records::{Role, ToolUse};

/// The `command` backend's profile.
static PROFILE: Profile = Profile {
    name: "command",
    npm: None,
    credentials: None,
    env_prefixes: &[],
    default_models: ["haiku", "sonnet", "opus"],
    list_prices: &[],
    reports_cost: false,
    floor: None,
    personal_context: "an arbitrary program: whatever it loads is up to it",
};

/// Any executable.
pub struct Command;

impl Backend for Command {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    fn invocation(&self, agent: &AgentSpec, req: &DispatchRequest) -> Invocation {
        let model = agent.models.get(req.tier);
        Invocation {
            args: agent
                .extra_args
                .iter()
                .map(|a| a.replace("{model}", model))
                .collect(),
            stdin: Some(
                prompt_with_role(&req.prompt, &req.system_prompt)
                    .into_bytes()
                    .into(),
            ),
            env: vec![],
            files: vec![],
        }
    }

    /// Never used: a `command` agent's stream is decoded by its declared format's backend.
    fn decoder(&self, model: &str) -> Box<dyn Decoder> {
        super::EventFormat::Claude.backend().decoder(model)
    }

    /// Never used: its tool calls are judged by its declared format's backend.
    fn permits(&self, _role: Role, _t: &ToolUse) -> bool {
        false
    }
}

/// The prompt text with the role body appended (for backends without a system-prompt flag).
pub fn prompt_with_role(prompt: &str, system_prompt: &str) -> String {
    if system_prompt.trim().is_empty() {
        return prompt.to_string();
    }
    format!(
        "{}\n\n<role_instructions>\n{}\n</role_instructions>\n",
        prompt.trim_end(),
        system_prompt.trim()
    )
}

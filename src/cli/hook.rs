//! `arev hook` and `arev install` arguments: arev inside Claude Code.

use clap::{Args, ValueEnum};

pub(super) const HOOK_HELP: &str = "\
Events:
  prompt  UserPromptSubmit: a prompt starting with #arev turns review on for the session and
          records the baseline (a snapshot of the working tree, untracked files included);
          `#arev off` turns it off. The user's prompts are recorded as the review's intent;
          prompts Claude Code writes itself (<task-notification>, …) are ignored.
  stop    Stop: reviews the session's changes since the baseline (once per diff sha) and
          blocks on confirmed medium/high findings, ends the turn on critical ones or when
          the agent stops again without a change; an approval moves the baseline. Any
          internal error, or a review out of [hook] timeout, lets the agent stop, with a
          message saying why.
AREV_DISABLE=1 turns every hook off. Config: the [hook] section (mode prefix|always|off,
prefix, max_nudges, max_blocks, timeout).";

#[derive(Debug, Args)]
pub struct HookArgs {
    /// Which hook event this invocation answers.
    #[arg(value_enum)]
    pub event: HookEvent,
}

/// `arev hook` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookEvent {
    /// The Stop hook.
    Stop,
    /// The UserPromptSubmit hook.
    Prompt,
}

impl HookEvent {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Prompt => "prompt",
        }
    }
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The agent to wire arev into.
    #[arg(value_enum)]
    pub agent: InstallAgent,
    /// `project`: <repo>/.claude; `user`: ~/.claude.
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    pub scope: Scope,
    /// Remove exactly what a previous install added.
    #[arg(long)]
    pub uninstall: bool,
}

/// `arev install` targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InstallAgent {
    /// Claude Code.
    Claude,
}

/// `arev install --scope` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    Project,
    User,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::User => "user",
        }
    }
}

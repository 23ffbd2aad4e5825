//! Tool gate (fail closed): a tool call the role may not make aborts the review, whether or
//! not the agent CLI ran it. Which calls a role may make is the backend's to say
//! (`dispatch::tool_permitted`): a reviewer only the read-only tools, the Fixer also its
//! write tools.

use crate::dispatch::{tool_permitted, EventFormat, ToolUse};
use crate::findings::Role;

/// The longest command quoted in a description.
const MAX_COMMAND_CHARS: usize = 200;

/// The first tool call in `uses` that `role` may not make, described for humans: its name;
/// for a tool given a `command`, also the command (cut at 200 characters) and, when arev
/// derived its file accesses, why it is not read-only.
pub fn forbidden_tool(format: EventFormat, role: Role, uses: &[ToolUse]) -> Option<String> {
    let t = uses.iter().find(|t| !tool_permitted(format, role, t))?;
    let mut s = if t.name.is_empty() {
        "a tool without a name".to_string()
    } else {
        t.name.clone()
    };
    let Some(command) = t.input.get("command").and_then(|c| c.as_str()) else {
        return Some(s);
    };
    let mut quoted: String = command.chars().take(MAX_COMMAND_CHARS).collect();
    if quoted.len() < command.len() {
        quoted.push('…');
    }
    s = format!("{s} `{quoted}`");
    match (&t.access.unknown, t.access.write.first()) {
        (Some(reason), _) => s = format!("{s} (not provably read-only: {reason})"),
        (None, Some(w)) => s = format!("{s} (writes {w})"),
        (None, None) => {}
    }
    Some(s)
}

//! `arev hook stop|prompt`: stdin → `crate::hook` → one JSON object (or nothing) on stdout.
//! Always exit 0: a hook that errs fails open, visibly, and a panic is caught and said.

use crate::cli::{HookArgs, HookEvent};
use crate::hook::{prompt, stop, system_message, HookEnv};
use crate::output;
use std::io::Read;

pub(crate) fn hook_command(args: &HookArgs) -> i32 {
    let env = HookEnv::from_process();
    // The input is always drained (also when disabled) so Claude Code never writes into a
    // closed pipe.
    let mut stdin = Vec::new();
    let read = std::io::stdin().read_to_end(&mut stdin);
    // AREV_DISABLE=1: nothing at all.
    if env.disabled {
        return crate::exit_codes::OK;
    }
    if let Err(e) = read {
        output::hook_response(&system_message(&format!(
            "arev: hook {} did not run: cannot read stdin ({e})",
            args.event.as_str()
        )));
        return crate::exit_codes::OK;
    }
    let event = args.event;
    let result = std::panic::catch_unwind(|| match event {
        HookEvent::Stop => stop(&stdin, &env).1,
        HookEvent::Prompt => prompt(&stdin, &env),
    });
    match result {
        Ok(Some(json)) => output::hook_response(&json),
        Ok(None) => {}
        Err(p) => {
            let why = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            output::hook_response(&system_message(&format!(
                "arev: the review did NOT run: hook {} crashed ({why}). The agent was allowed to stop unreviewed.",
                event.as_str()
            )));
        }
    }
    crate::exit_codes::OK
}

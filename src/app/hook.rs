//! `arev hook stop|prompt`: stdin → `crate::hook` → one JSON object (or nothing) on stdout.
//! Always exit 0: a hook that errs fails open, visibly, and a panic is caught and said.

use crate::cli::{HookArgs, HookEvent};
use crate::hook::{prompt, stop, system_message, HookEnv};
use crate::output;
use std::io::Read;

/// The most of a hook's stdin arev keeps (a prompt with pasted files fits many times over);
/// the rest is drained unread, so memory never follows the input.
pub const MAX_HOOK_INPUT: u64 = 4 << 20;

pub(crate) fn hook_command(args: &HookArgs) -> i32 {
    let env = HookEnv::from_process();
    // The input is always drained (also when disabled) so Claude Code never writes into a
    // closed pipe; only its first MAX_HOOK_INPUT bytes (and one more) are kept.
    let mut stdin = Vec::new();
    let mut input = std::io::stdin().lock();
    let read = (&mut input)
        .take(MAX_HOOK_INPUT + 1)
        .read_to_end(&mut stdin)
        .and_then(|_| std::io::copy(&mut input, &mut std::io::sink()));
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
    if stdin.len() as u64 > MAX_HOOK_INPUT {
        output::hook_response(&system_message(&format!(
            "arev: hook {} did not run: its input is over {} MiB, the most arev reads",
            args.event.as_str(),
            MAX_HOOK_INPUT >> 20
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

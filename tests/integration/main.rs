//! Integration tests for `arev` (single test binary; needs `--features fake-agent`).
//!
//! Tests that drive real agent CLIs skip themselves unless `AREV_TEST_CLAUDE_BIN` (etc.) is
//! set; with `AREV_REQUIRE_REAL_CLIS=1` a missing CLI is a failure instead.

// Loopback fake Anthropic Messages API that the real `claude` CLI can be pointed at.
mod fake_anthropic;
// End-to-end checks of the real Claude Code CLI against `fake_anthropic`.
mod real_claude;
// TestRepo / Arev builder, fake-agent wiring, run-dir readers.
mod harness;
// End-to-end reviews with the scripted fake agent.
mod review;
// Every gate of SPEC §6, each through the real path.
mod gates;
// Bad input: one line on stderr, exit 2, no run dir.
mod inputs;
// Ctrl-C: exit 130, status interrupted, no agent survives.
mod interrupt;
// Multi-round protocol: every stop reason, tiers per round, budgets, spec targets.
mod protocol;
// Iterate mode: review → fix in a worktree → re-review; every outer stop reason.
mod iterate;

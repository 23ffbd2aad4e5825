//! Integration tests for `arev` (single test binary; needs `--features fake-agent`).
//!
//! Tests that drive real agent CLIs skip themselves unless `AREV_TEST_CLAUDE_BIN` (etc.) is
//! set; with `AREV_REQUIRE_REAL_CLIS=1` a missing CLI is a failure instead.

// Loopback fake Anthropic Messages API that the real `claude` CLI can be pointed at.
mod fake_anthropic;
// End-to-end checks of the real Claude Code CLI against `fake_anthropic`.
mod real_claude;

//! Integration tests for `arev` (single test binary; needs `--features fake-agent`).
//!
//! Tests that drive real agent CLIs skip themselves unless `AREV_TEST_CLAUDE_BIN` (etc.) is
//! set; with `AREV_REQUIRE_REAL_CLIS=1` a missing CLI is a failure instead.
// Test code: a broken fixture or a failed expectation panics.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A scenario test reads top to bottom: the 100-line rule (Cargo.toml) is for `src/`.
#![allow(clippy::too_many_lines)]

// A loopback axum server on its own thread (shared by the fake model APIs).
mod background;
// Loopback fake Anthropic Messages API that the real `claude` CLI can be pointed at.
mod fake_anthropic;
// End-to-end checks of the real Claude Code CLI against `fake_anthropic`.
mod real_claude;
// API faults (429/529/401/400, refusal, max_tokens, a stalled pass) through the real Claude CLI.
mod real_faults;
// The same faults through the real Codex and Gemini CLIs.
mod real_backend_faults;
// Script, request log and server thread shared by `fake_openai` and `fake_gemini`.
mod fake_llm;
// Loopback fake OpenAI Responses API that the real `codex` CLI can be pointed at.
mod fake_openai;
// Its Chat Completions side (`/v1/chat/completions`, `/v1/models`), for OpenCode and self-hosted panels.
mod fake_chat;
// Loopback fake Gemini API that the real `gemini` CLI can be pointed at.
mod fake_gemini;
// Real Codex and Gemini CLIs through whole rounds, and the mixed three-vendor panel.
mod real_backends;
// Reviewer panels on a self-hosted OpenAI-compatible endpoint, and what a repository may not set.
mod self_hosted;
// The real OpenCode CLI in its filesystem view: no plugin of a hostile repository runs.
mod opencode_view;
// A reproducer's output with terminal controls: escaped in every rendering and the PR summary.
mod proof_controls;
// TestRepo / Arev builder, fake-agent wiring, run-dir readers.
mod harness;
// SARIF validation against the in-repo SARIF 2.1.0 schema (shared with the unit tests).
#[path = "../support/sarif_schema.rs"]
mod sarif_schema;
// End-to-end reviews with the scripted fake agent.
mod review;
// Every gate of docs/architecture.md §10, each through the real path.
mod gates;
// Agent configuration with the fake agent: command agents, round-robin, timeouts, init, errors.
mod backends;
// Bad input: one line on stderr, exit 2, no run dir.
mod inputs;
// Hostile trees and agents: links, caps, run dirs, odd names, escaping, environment, stderr.
mod hostile;
// progress.json at every dispatch, meta.json's process, `abandoned` after SIGKILL.
mod records;
// The layers of docs/architecture.md §3.1: no upward import, no module or file cycle.
mod layers;
// No file of src/ over 700 production lines (functions: clippy's too_many_lines).
mod sizes;
// Every section citation names a numbered heading of a page the repository holds.
mod citations;
// Signals (exit 130/143/129, status interrupted) and leftover processes: none survives.
mod interrupt;
// `run --background [--wait]`, `status`, `result`, `cancel`: detached runs at real speed.
mod long_runs;
// CI outputs: SARIF (schema-validated), Markdown, GitHub annotations, `report`, `runs`, fingerprints.
mod outputs;
// `--shard i/n` and `arev merge`: partition, coverage checks, merge equals an unsharded run.
mod shard;
// Multi-round protocol: every stop reason, tiers per round, budgets, spec targets.
mod protocol;
// `arev hook prompt|stop`: hook JSON on stdin, every branch of the Stop-hook decision table.
mod hook;
// `arev run --intent FILE|-`: the <intent> block for every role, category `intent`, limits.
mod intent;
// Concurrent Stop hooks of one session share one review (the session's review lock).
mod hook_lock;
// The repo as a Claude Code plugin through the real CLI: validate, Stop-hook loop, slash command.
mod claude_plugin;
// A review longer than Claude Code's 120 s Bash limit: background slash command, status, result.
mod claude_long;
// `arev install claude`: merge into settings.json, idempotence, uninstall.
mod install;
// What reading runs back trusts: the recorded gate of result/merge, run-dir size caps,
// C1 controls in status/runs JSON.
mod run_dir_trust;
// `arev doctor` and the preflight of `arev run` (missing agent CLIs, exit 2, no run dir).
mod setup;
// The terminal report: descriptions, resolutions, fixes, cost; colour on a TTY only.
mod terminal;
// A fake release on loopback (docs/contracts.md §20.1) and install.sh against it.
mod release;
// The plugin launcher bin/arev: PATH, CLAUDE_PLUGIN_DATA, install on first use, fail open.
mod launcher;
// A mixed panel's attribution in merged and iterate reports.
mod attribution;
// Iterate mode: review → fix in a worktree → re-review; every outer stop reason.
mod iterate;
// Loopback fake GitHub REST API (PR files, comments, reviews, pages, faults).
mod fake_github;
// Replies, reactions, resolution and permissions for the fake forges.
mod fake_talk;
// The fake forges' compare endpoints answer from the test's git repository.
mod fake_git;
// Request bodies checked against GitHub's OpenAPI description (npm @octokit/openapi).
mod openapi;
// GraphQL documents checked against GitHub's schema (npm @octokit/graphql-schema).
mod graphql;
// The conversation on a pull request: dismissals, fixes resolving threads, nothing twice.
mod publish_talk;
// `arev publish` / `run --publish` to GitHub: pushes, fixes, retries, failures, dry run.
mod publish;
// Untrusted run dirs in the publishing job, other authors' markers, redirects, bounds.
mod publish_trust;
// Loopback fake GitLab REST API v4 (MR versions, diffs, notes, discussions, pages, faults).
mod fake_gitlab;
// `arev publish gitlab` / `run --publish gitlab`: sticky note, positioned discussions.
mod publish_gitlab;
// "Fixed" only when the forge's compare diff changes the line; else "not raised again".
mod publish_fixed;
// `arev eval dispositions` over the pull requests the forge lists (pages, --limit, --state).
mod dispositions;
// The composite GitHub Action (action.yml) run step by step as the runner would.
mod action;
// `arev eval mine|run|compare`: scripted histories, exact scores, resumption, jobs, Ctrl-C.
mod eval;
mod eval_map;
// The fail-closed tool gate per event format, and the output cap named.
mod tool_gate;
// Untrusted pull requests: --repo-config, the argv floor, and (real CLIs) no repository
// settings in reviewer sessions, no reads outside the repository in run files.
mod trust;
// Review context: project rules, path instructions, excludes, focus.
mod context;
// Context citations: kept, dropped and counted, a failed guard (docs/contracts.md §22.2).
mod context_cites;
// What reviewers may read: the context scope (docs/trust.md).
mod context_scope;
// Names no permission rule can hold (not UTF-8): hidden from every CLI.
mod unnamed_paths;
// The <context_map> block every role gets.
mod context_map;
// Protocol details of the source protocol: each rule driven by scripted answers.
mod fidelity;
// Review memory: baselines, suppressions, incremental re-review, the verdict cache.
mod memory;
// Economics: debunked once, a cancelled Adversary, live time and cost, budgets.
mod economics;
// Budgets: no verdict is never green, every backend's tokens priced (real CLIs too).
mod budget;
// A model without a price: "price unknown" in every rendering, never $0.
mod unpriced;
// The Prover's sandbox with the real bubblewrap: hostile reproducers contained, offline cargo.
mod prove_sandbox;
// `arev run --prove`: Provers write reproducers, arev runs them: every status, rejections.
mod prove;
// `arev run --iterate --prove`: a fix counts only when its reproducer passes on the fix commit.
mod prove_iterate;
// `arev eval run --prove`: reproducers scored against the real fix commit.
mod eval_prove;
// `arev eval bench`: the offline benchmark's PRs over local repositories and a fake forge.
mod eval_bench;
// The real Codex and Gemini CLIs as the Prover.
mod real_prover;
// The real Codex, Gemini and OpenCode CLIs as the Fixer of --iterate.
mod real_iterate;

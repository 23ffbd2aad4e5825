//! How each rendering shows a proof (`--prove`, docs/prove.md "Reports"): the text report's
//! `proof:` line, the Markdown badge and collapsed reproducer, the summary counts — and in
//! every one of them, when reproducers ran unsandboxed, that they did. The command, files,
//! reason and output come from an agent and from code it wrote: they are escaped like any
//! agent text.

use super::escape::{md_block, md_code, md_text, term_text, MdContext};
use super::{Report, ReportFinding};
use crate::records::{Evidence, ProofStatus, RunRecord, SandboxMode};
use std::fmt::Write;

/// The statement every rendering carries when reproducers ran outside the sandbox.
pub const UNSANDBOXED: &str =
    "reproducers ran UNSANDBOXED ([prove] sandbox = \"none\"), as the user running arev";

/// The argv as one line a shell would take (each word quoted when it needs it).
pub fn command_line(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What one run showed: `exit 1 in 0.4 s`, `timed out after 300.0 s`, `killed by signal 9`,
/// `sandbox error`.
pub fn run_outcome(r: &RunRecord) -> String {
    let secs = r.duration_ms as f64 / 1000.0;
    if r.sandbox_error.is_some() {
        "the sandbox did not start".into()
    } else if r.timed_out {
        format!("timed out after {secs:.1} s")
    } else if let Some(sig) = r.signal {
        format!("killed by signal {sig} after {secs:.1} s")
    } else if let Some(code) = r.exit {
        format!("exit {code} in {secs:.1} s")
    } else {
        "no exit status".into()
    }
}

/// The status and what the runs showed, in one line of arev's words plus escaped agent
/// text: `reproduced — \`python3 t.py\`: exit 1 in 0.1 s on the change, exit 0 in 0.1 s on
/// the base`.
fn summary(e: &Evidence, code: impl Fn(&str) -> String, text: impl Fn(&str) -> String) -> String {
    let mut s = e.status.as_str().to_string();
    let mut parts = vec![];
    if let Some(h) = &e.head {
        let mut runs = format!("{} on the reviewed code", run_outcome(h));
        if let Some(b) = &e.base {
            runs.push_str(&format!(", {} on the base", run_outcome(b)));
        }
        parts.push(format!("{}: {runs}", code(&command_line(&e.command))));
    }
    if let Some(r) = &e.reason {
        parts.push(text(r));
    }
    if !parts.is_empty() {
        s.push_str(" — ");
        s.push_str(&parts.join("; "));
    }
    if e.sandbox == SandboxMode::None && e.head.is_some() {
        s.push_str(" (UNSANDBOXED)");
    }
    s
}

/// The text report's `proof:` detail of a finding.
pub fn text_line(e: &Evidence) -> String {
    summary(e, |c| format!("`{c}`"), |t| t.to_string())
}

/// The text and Markdown summary of the phase: `proofs: 1 reproduced, 1 not_reproduced
/// (sandbox bwrap)`, and the unsandboxed statement when it applies.
pub fn phase_line(r: &Report) -> Option<String> {
    let p = r.prove.as_ref()?;
    let mut s = format!(
        "proofs: {} (sandbox {}{})",
        p.counts.line(),
        p.sandbox.as_str(),
        if p.require_proof {
            "; --require-proof: only pre-existing and below-threshold findings are let through"
        } else {
            ""
        }
    );
    if p.sandbox == SandboxMode::None {
        s.push_str(&format!(" — {UNSANDBOXED}"));
    }
    Some(s)
}

/// The text report's footer line (agent text escaped).
pub fn text_footer(r: &Report) -> Option<String> {
    phase_line(r).map(|l| term_text(&l, ""))
}

/// The Markdown badge of a status.
pub fn badge(s: ProofStatus) -> &'static str {
    match s {
        ProofStatus::Reproduced => "🔴 **Reproduced**",
        ProofStatus::Preexisting => "🟠 **Reproduced (pre-existing)**",
        ProofStatus::NotReproduced => "⚪ **Not reproduced**",
        ProofStatus::Inconclusive => "❔ **Inconclusive**",
        ProofStatus::NotAttempted => "➖ Not attempted",
    }
}

/// The last `n` lines of an output tail.
fn last_lines(s: &str, n: usize) -> &str {
    let mut idx = s.len();
    let mut count = 0;
    for (i, c) in s.trim_end().char_indices().rev() {
        if c == '\n' {
            count += 1;
            if count == n {
                idx = i + 1;
                break;
            }
        }
    }
    if count < n {
        s
    } else {
        &s[idx..]
    }
}

/// Lines of output a Markdown block keeps of each run.
const MD_OUTPUT_LINES: usize = 40;

/// The Markdown section of the confirmed findings' proofs: for each, its badge, and for a
/// run one, the reproducer (command, files, where they are kept) and its output, collapsed.
pub fn markdown_section(s: &mut String, r: &Report) {
    let Some(line) = phase_line(r) else {
        return;
    };
    let _ = writeln!(s, "### Proofs\n\n{}\n", md_text(&line, MdContext::Inline));
    for f in r.confirmed.iter() {
        let Some(e) = &f.proof else {
            continue;
        };
        markdown_proof(s, r, f, e);
    }
}

fn markdown_proof(s: &mut String, r: &Report, f: &ReportFinding, e: &Evidence) {
    let place = match (&f.file, f.line) {
        (Some(p), Some(l)) => md_code(&format!("{p}:{l}"), MdContext::Inline),
        (Some(p), None) => md_code(p, MdContext::Inline),
        _ => "—".into(),
    };
    let why = e
        .reason
        .as_deref()
        .map(|w| format!(" — {}", md_text(w, MdContext::Inline)))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "- {} {} {} {}{why}",
        badge(e.status),
        md_code(&f.id, MdContext::Inline),
        place,
        md_text(&f.category, MdContext::Inline)
    );
    let Some(head) = &e.head else {
        return;
    };
    let _ = writeln!(
        s,
        "\n  <details><summary>Reproducer: {}</summary>\n",
        md_code(&command_line(&e.command), MdContext::Inline)
    );
    let files: Vec<String> = e
        .files
        .iter()
        .map(|p| md_code(p, MdContext::Inline))
        .collect();
    let _ = writeln!(
        s,
        "  Files: {} (kept in {}).\n",
        files.join(", "),
        md_code(
            &format!("{}/proofs/r{}-{}/", r.run_dir, f.round, f.id),
            MdContext::Inline
        )
    );
    for (what, run) in [
        ("On the reviewed code", Some(head)),
        ("On the base", e.base.as_ref()),
    ] {
        let Some(run) = run else { continue };
        let _ = writeln!(
            s,
            "  {what}: {}{}.\n",
            run_outcome(run),
            if e.sandbox == SandboxMode::None {
                " (unsandboxed)"
            } else {
                ""
            }
        );
        let out = last_lines(&run.output_tail, MD_OUTPUT_LINES);
        if !out.trim().is_empty() {
            let block = md_block(out);
            for l in block.lines() {
                let _ = writeln!(s, "  {l}");
            }
            s.push('\n');
        }
    }
    let _ = writeln!(s, "  </details>\n");
}

/// SARIF `properties.evidence` of a finding: its evidence as report.json has it.
pub fn sarif_evidence(f: &ReportFinding) -> Option<serde_json::Value> {
    f.proof.as_ref().and_then(|e| serde_json::to_value(e).ok())
}

/// The annotation title's note of a proof: ` · reproduced`.
pub fn annotation_note(f: &ReportFinding) -> String {
    f.proof
        .as_ref()
        .map(|e| {
            let unsandboxed = if e.sandbox == SandboxMode::None && e.head.is_some() {
                ", unsandboxed"
            } else {
                ""
            };
            format!(" · proof: {}{unsandboxed}", e.status.as_str())
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_shown_as_a_shell_would_take_them() {
        let argv = ["python3", "-m", "unittest", "it's a test", ""].map(String::from);
        assert_eq!(
            command_line(&argv),
            r"python3 -m unittest 'it'\''s a test' ''"
        );
    }

    #[test]
    fn a_fence_is_longer_than_any_backtick_run_inside() {
        let f = md_block("a ```` b\n<!-- arev-report -->\n");
        assert!(f.starts_with("`````text\n"), "{f}");
        assert!(f.ends_with("\n`````"), "{f}");
        assert!(!f.contains("<!--"));
        assert_eq!(last_lines("1\n2\n3\n4\n", 2), "3\n4\n");
        assert_eq!(last_lines("1\n2", 5), "1\n2");
    }
}

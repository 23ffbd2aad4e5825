//! JSON Schemas of the public wire types (`arev schema`, `schemas/`, checked for drift by a test).

use schemars::schema_for;

/// (file stem, pretty JSON) of every published schema.
pub fn schemas() -> Vec<(&'static str, String)> {
    let render = |v: schemars::Schema| {
        let mut s = crate::output::json_string(&v, true).unwrap_or_default();
        s.push('\n');
        s
    };
    vec![
        ("report", render(schema_for!(crate::report::Report))),
        ("meta", render(schema_for!(crate::store::Meta))),
        ("runs", render(schema_for!(Vec<crate::store::RunSummary>))),
        ("summary", render(schema_for!(crate::report::ReportSummary))),
        ("progress", render(schema_for!(crate::store::RunProgress))),
        ("status", render(schema_for!(crate::records::LiveStatus))),
        ("round", render(schema_for!(crate::round::RoundRecord))),
        ("config", render(schema_for!(crate::config::Config))),
        (
            "enthusiast",
            render(schema_for!(crate::findings::EnthusiastOutput)),
        ),
        (
            "adversary",
            render(schema_for!(crate::findings::AdversaryOutput)),
        ),
        ("judge", render(schema_for!(crate::findings::JudgeOutput))),
        ("fixer", render(schema_for!(crate::findings::FixerOutput))),
        ("prover", render(schema_for!(crate::findings::ProverOutput))),
        (
            "matcher",
            render(schema_for!(crate::records::MatcherOutput)),
        ),
        (
            "hook-session",
            render(schema_for!(crate::hook::SessionState)),
        ),
        ("hook-verdict", render(schema_for!(crate::hook::Verdict))),
        (
            "publish-payload",
            render(schema_for!(crate::publish::Payload)),
        ),
        (
            "publish-result",
            render(schema_for!(crate::publish::PublishRecord)),
        ),
        ("eval-case", render(schema_for!(crate::eval::EvalCase))),
        ("eval-report", render(schema_for!(crate::eval::EvalReport))),
        ("eval-compare", render(schema_for!(crate::eval::Comparison))),
        (
            "eval-bench-candidates",
            render(schema_for!(crate::eval::CandidatesFile)),
        ),
        (
            "eval-bench-report",
            render(schema_for!(crate::eval::BenchReport)),
        ),
    ]
}

#[cfg(test)]
mod tests {
    /// `schemas/` is generated: fail when it drifts from the types (regenerate with
    /// `cargo run -- schema --write schemas`).
    #[test]
    fn committed_schemas_match_the_types() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        for (name, text) in super::schemas() {
            let path = dir.join(format!("{name}.schema.json"));
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == text,
                "{} is out of date: run `cargo run -- schema --write schemas`",
                path.display()
            );
        }
    }
}

//! What the verdict cache says of an earlier run: the cost its report recorded (an eval case
//! answered from the cache is priced by the review that produced the verdict).

use serde::Deserialize;
use std::path::Path;

/// A report's `cost`, as far as an eval reads it.
#[derive(Debug, Deserialize)]
pub(super) struct CostView {
    pub usd: f64,
    pub tokens: u64,
    #[serde(default)]
    pub unpriced_tokens: u64,
}

/// The cost (USD, tokens) of the run `run_id`, as the verdict-cache entry it stored
/// records it (the cache's `verdicts/*.json`, each the report of the review that produced
/// it); None when no entry is that run's.
pub fn original_cost(cache_dir: &Path, run_id: &str) -> Option<(f64, u64, u64)> {
    #[derive(Deserialize)]
    struct Entry {
        run_id: String,
        report: EntryReport,
    }
    #[derive(Deserialize)]
    struct EntryReport {
        cost: CostView,
    }
    let entries = std::fs::read_dir(cache_dir.join("verdicts")).ok()?;
    entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| {
            crate::store::read_capped(
                &e.path(),
                crate::store::MAX_REPORT_BYTES,
                "a verdict-cache entry",
            )
            .ok()
        })
        .filter_map(|b| serde_json::from_slice::<Entry>(&b).ok())
        .find(|e| e.run_id == run_id)
        .map(|e| {
            let c = e.report.cost;
            (c.usd, c.tokens, c.unpriced_tokens)
        })
}

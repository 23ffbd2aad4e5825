//! Re-dispatching after a transient API fault (docs/contracts.md §19.2): exponential backoff with
//! jitter, the API's retry-after honoured where the CLI shows it, all within a bounded
//! window; each retry is recorded in the failed dispatch's directory (`retry.json`) and
//! announced on stderr.

use crate::dispatch::Fault;
use crate::store::write_json_record;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// The first backoff; each retry doubles it, up to [`CAP`].
const BASE: Duration = Duration::from_secs(1);
const CAP: Duration = Duration::from_secs(30);

/// The wait before retry number `retry` (0-based): `BASE · 2^retry` capped at [`CAP`],
/// with ±25 % jitter so that parallel passes hit by the same fault do not retry in step,
/// and never shorter than the API asked for (`retry_after_ms`).
pub(super) fn backoff(retry: u32, retry_after_ms: Option<u64>) -> Duration {
    let exp = BASE.saturating_mul(1u32 << retry.min(16)).min(CAP);
    let mut seed = [0u8; 8];
    // Without randomness the jitter is zero: the backoff stays exponential.
    let r = getrandom::fill(&mut seed)
        .map(|()| u64::from_le_bytes(seed))
        .unwrap_or(u64::MAX / 2);
    // A factor in [0.75, 1.25).
    let factor = 0.75 + (r % 10_000) as f64 / 20_000.0;
    let jittered = exp.mul_f64(factor);
    let asked = Duration::from_millis(retry_after_ms.unwrap_or(0));
    jittered.max(asked)
}

/// `retry.json`: why a dispatch is retried, after how long, as which attempt.
#[derive(Serialize)]
struct RetryRecord<'a> {
    fault: &'a Fault,
    /// The retry's number (1 = the first re-dispatch).
    retry: u32,
    delay_ms: u64,
    /// The label (dispatch directory) of the re-dispatch.
    next: &'a str,
}

/// Record a retry in the failed dispatch's directory `dir`.
pub(super) fn record(dir: &Path, fault: &Fault, retry: u32, delay: Duration, next: &str) {
    let rec = RetryRecord {
        fault,
        retry,
        delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
        next,
    };
    let path = dir.join("retry.json");
    if let Err(e) = write_json_record(&path, &rec) {
        tracing::debug!("cannot write {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_caps_and_honours_retry_after() {
        for retry in 0..8 {
            let exp = BASE.saturating_mul(1 << retry).min(CAP);
            for _ in 0..20 {
                let d = backoff(retry, None);
                assert!(
                    d >= exp.mul_f64(0.75) && d < exp.mul_f64(1.25),
                    "{retry}: {d:?}"
                );
            }
        }
        assert!(backoff(30, None) < CAP.mul_f64(1.25));
        assert!(backoff(0, Some(7_000)) >= Duration::from_secs(7));
    }
}

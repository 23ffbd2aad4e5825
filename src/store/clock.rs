//! The wall-clock time a run's records carry (meta.json's `started_at` and `finished_at`,
//! progress.json's `updated_at`): UTC, RFC 3339 to the millisecond.

/// Now, as the run's records write it.
pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

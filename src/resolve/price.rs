//! What a dispatch's tokens cost: `[prices]` (and Claude's families), else $0 for an agent
//! on a self-hosted endpoint.

use crate::config::Settings;

/// The price of `model` run by agent `name`: `[prices]` (and Claude's families), else $0 for
/// an agent on a self-hosted endpoint (docs/self-hosted.md: its tokens are free unless a
/// price is configured), else unknown.
pub fn price_for(
    settings: &Settings,
    name: &str,
    format: crate::config::EventFormat,
    model: &str,
) -> Option<crate::config::ModelPrice> {
    crate::dispatch::price_of(format, model, &settings.prices).or_else(|| {
        settings
            .agents
            .get(name)
            .and_then(|a| a.base_url.as_ref())
            .map(|_| crate::config::ModelPrice {
                input: 0.0,
                output: 0.0,
                cache_read: None,
                cache_write: None,
            })
    })
}

//! One publish: the forge's client from the settings, then its adapter.

use super::env::Settings;
use super::error::PublishError;
use super::http::RetryPolicy;
use super::model::{Forge, Payload};
use super::plan::Published;
use super::{github, gitlab};

/// Send `payload` with `settings` (in dry-run mode: reads only, writes printed).
pub fn send(
    payload: &Payload,
    settings: Settings,
    policy: RetryPolicy,
    dry_run: bool,
) -> Result<Published, PublishError> {
    match settings.forge {
        Forge::Github => {
            let api = github::client(&settings.api_url, settings.token, policy, dry_run);
            github::publish(&api, payload)
        }
        Forge::Gitlab => {
            let api = gitlab::client(&settings.api_url, settings.token, policy, dry_run);
            gitlab::publish(&api, payload)
        }
    }
}

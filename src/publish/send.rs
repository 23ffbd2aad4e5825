//! One publish: the forge's client from the settings, the identity the token publishes as
//! (asked once), then its adapter.

use super::env::Settings;
use super::error::PublishError;
use super::http::RetryPolicy;
use super::model::{Forge, Payload};
use super::plan::Published;
use super::talk::DismissBy;
use super::{github, gitlab};

/// Send `payload` with `settings` (in dry-run mode: reads only, writes printed);
/// `dismiss_by`: who may dismiss a finding on the pull request (trusted config).
pub fn send(
    payload: &Payload,
    settings: Settings,
    policy: RetryPolicy,
    dry_run: bool,
    dismiss_by: DismissBy,
) -> Result<Published, PublishError> {
    match settings.forge {
        Forge::Github => {
            let graphql = settings
                .graphql_url
                .clone()
                .unwrap_or_else(|| github::graphql_url(&settings.api_url));
            let api = github::client(&settings.api_url, settings.token, policy, dry_run);
            let me = github::identity(&api, &graphql)?;
            github::publish(&api, &graphql, payload, &me, dismiss_by)
        }
        Forge::Gitlab => {
            let api = gitlab::client(&settings.api_url, settings.token, policy, dry_run);
            let me = gitlab::identity(&api)?;
            gitlab::publish(&api, payload, me, dismiss_by)
        }
    }
}

/// A dismissal read from a pull request, with where its thread is.
#[derive(Debug, Clone)]
pub struct Disposition {
    pub dismissal: super::talk::Dismissal,
    pub path: String,
    pub line: Option<u32>,
}

/// The dismissals on arev's open threads of the pull request `settings` names (reads only):
/// what `arev suppress --from-pr` exports.
pub fn dispositions(
    settings: Settings,
    policy: RetryPolicy,
    dismiss_by: DismissBy,
) -> Result<Vec<Disposition>, PublishError> {
    let (repo, n) = (settings.target.repository.clone(), settings.target.number);
    let existing = match settings.forge {
        Forge::Github => {
            let graphql = settings
                .graphql_url
                .clone()
                .unwrap_or_else(|| github::graphql_url(&settings.api_url));
            let api = github::client(&settings.api_url, settings.token, policy, false);
            let me = github::identity(&api, &graphql)?;
            github::threads(&api, &graphql, &repo, n, &me, dismiss_by)?
        }
        Forge::Gitlab => {
            let api = gitlab::client(&settings.api_url, settings.token, policy, false);
            let me = gitlab::identity(&api)?;
            gitlab::threads(&api, &repo, n, me, dismiss_by)?
        }
    };
    let mut seen = std::collections::BTreeSet::new();
    Ok(existing
        .iter()
        .filter_map(|e| {
            let fp = e.open_fp()?;
            let d = e.talk.dismissal(fp)?;
            seen.insert(fp.to_string()).then(|| Disposition {
                dismissal: d,
                path: e.path.clone(),
                line: e.line,
            })
        })
        .collect())
}

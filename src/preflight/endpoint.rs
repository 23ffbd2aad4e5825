//! `arev doctor`'s check of an agent's self-hosted endpoint (docs/self-hosted.md): that
//! `GET <base_url>/models` answers (with the key `api_key_env` names), and that it lists the
//! models the agent's tiers use.

use crate::config::AgentConfig;
use std::time::Duration;

/// How long the endpoint has to answer.
const TIMEOUT: Duration = Duration::from_secs(5);
/// The most of its answer that is read.
const MAX_ANSWER_BYTES: u64 = 1 << 20;

/// How the endpoint check went (doctor's ok, warn and FAIL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Level {
    Ok,
    Warn,
    Fail,
}

/// The endpoint line of agent `who`, or None when it has no `base_url`.
pub(super) fn endpoint_check(who: &str, agent: &AgentConfig) -> Option<(Level, String)> {
    let base = agent.base_url.as_deref()?.trim_end_matches('/');
    let url = format!("{base}/models");
    let key = match agent.api_key_env.as_deref() {
        Some(var) => match std::env::var(var) {
            Ok(k) if !k.is_empty() => Some(k),
            _ => {
                return Some((
                    Level::Fail,
                    format!("{who}: {var} is not set — export the key of {base} as {var}"),
                ))
            }
        },
        None => None,
    };
    let models = match list_models(&url, key.as_deref()) {
        Ok(m) => m,
        Err(why) => {
            return Some((
                Level::Fail,
                format!(
                    "{who}: the endpoint {url} {why} — start the model server or fix \
                     `base_url` (docs/self-hosted.md)"
                ),
            ))
        }
    };
    let tiers = agent.tier_models();
    let mut missing: Vec<&str> = [&tiers.haiku, &tiers.sonnet, &tiers.opus]
        .into_iter()
        .map(String::as_str)
        .filter(|m| !models.iter().any(|s| s == m))
        .collect();
    missing.dedup();
    if missing.is_empty() {
        return Some((
            Level::Ok,
            format!("{who}: the endpoint {base} answers and serves its models"),
        ));
    }
    Some((
        Level::Warn,
        format!(
            "{who}: the endpoint {base} answers but does not list {} (it lists: {}) — pull \
             the model or fix the agent's `models`",
            missing.join(", "),
            match models.len() {
                0 => "nothing".to_string(),
                n if n > 20 => format!("{}, … {} more", models[..20].join(", "), n - 20),
                _ => models.join(", "),
            }
        ),
    ))
}

/// The model ids of an OpenAI `GET /models` answer (`{"data": [{"id": …}]}`), or why there
/// are none.
fn list_models(url: &str, key: Option<&str>) -> Result<Vec<String>, String> {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(TIMEOUT))
        .user_agent(format!("arev/{}", env!("CARGO_PKG_VERSION")))
        .build();
    let agent = ureq::Agent::new_with_config(config);
    let mut req = agent.get(url);
    if let Some(k) = key {
        req = req.header("authorization", format!("Bearer {k}"));
    }
    let mut resp = req.call().map_err(|e| format!("does not answer ({e})"))?;
    let status = resp.status().as_u16();
    if status != 200 {
        return Err(format!("answered HTTP {status}"));
    }
    let text = resp
        .body_mut()
        .with_config()
        .limit(MAX_ANSWER_BYTES)
        .read_to_string()
        .map_err(|e| format!("sent an unreadable answer ({e})"))?;
    parse_models(&text).ok_or_else(|| "answered, but not with an OpenAI model list".into())
}

fn parse_models(text: &str) -> Option<Vec<String>> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let data = v.get("data")?.as_array()?;
    Some(
        data.iter()
            .filter_map(|m| m.get("id")?.as_str())
            .map(|s| crate::output::inert_line(s).into_owned())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_lists_are_read_from_the_openai_shape() {
        assert_eq!(
            parse_models(r#"{"object":"list","data":[{"id":"qwen3-coder:30b"},{"id":"m1"}]}"#),
            Some(vec!["qwen3-coder:30b".to_string(), "m1".to_string()])
        );
        assert_eq!(parse_models(r#"{"models":[]}"#), None);
        assert_eq!(parse_models("<html>"), None);
    }
}

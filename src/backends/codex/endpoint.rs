//! Codex's self-hosted endpoint: the `-c` provider arguments arev passes for a `base_url`,
//! and the `-c` values of an agent's `extra_args` that choose the host (docs/self-hosted.md,
//! docs/trust.md).

/// The `codex -c` keys (first dotted segment) that choose the host Codex sends requests to.
const CODEX_ENDPOINT_KEYS: &[&str] = &["model_provider", "model_providers", "openai_base_url"];

/// The first `-c`/`--config` value of `args` that sets a Codex endpoint key.
pub(crate) fn codex_endpoint_arg(args: &[String]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        let value = if arg == "-c" || arg == "--config" {
            args.get(i).cloned()
        } else if let Some(v) = arg.strip_prefix("--config=") {
            Some(v.to_string())
        } else {
            arg.strip_prefix("-c")
                .filter(|_| !arg.starts_with("--"))
                .map(|v| v.trim_start_matches('=').to_string())
        };
        let Some(value) = value else { continue };
        let key = value.split('=').next().unwrap_or_default().trim();
        let first = key
            .split('.')
            .next()
            .unwrap_or_default()
            .trim()
            .trim_matches('"');
        if CODEX_ENDPOINT_KEYS.contains(&first) {
            return Some(value);
        }
    }
    None
}

/// The provider Codex gets for an agent's `base_url`: `-c` arguments defining provider
/// `arev` (the Responses API, the only one Codex 0.169.0 speaks; the key from `key_var`)
/// and selecting it.
pub(super) fn codex_provider_args(base_url: &str, key_var: Option<&str>) -> Vec<String> {
    let s = |v: &str| toml::Value::String(v.to_string()).to_string();
    let key = key_var.map_or_else(String::new, |v| format!(",env_key={}", s(v)));
    vec![
        "-c".into(),
        "model_provider=\"arev\"".into(),
        "-c".into(),
        format!(
            "model_providers.arev={{name=\"arev\",base_url={}{key},wire_api=\"responses\"}}",
            s(base_url)
        ),
    ]
}

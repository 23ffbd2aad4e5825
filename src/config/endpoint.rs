//! Where reviewers send your code and keys: an agent's self-hosted endpoint (`base_url`,
//! `api_key_env`; docs/self-hosted.md) and a Codex agent's `-c` provider settings. Under
//! `--repo-config base` the repository's config may set none of them (docs/trust.md): a
//! repository must not choose the host that receives the code under review and the key of
//! its provider.

use super::{AgentConfig, BackendKind, Config, ConfigError};
use std::path::Path;
use toml::{Table, Value};

impl Config {
    /// An agent's endpoint: a well-formed `base_url` on a backend that can use one (for
    /// Codex, arev's own provider settings: not also a provider in `extra_args`), and a
    /// variable name as `api_key_env`, which needs a `base_url`.
    pub(super) fn check_endpoint(&self, name: &str, a: &AgentConfig) -> Result<(), ConfigError> {
        let key = |k: &str| format!("agents.{name}.{k}");
        if let Some(var) = &a.api_key_env {
            check_key_var(&key("api_key_env"), var)?;
            if a.base_url.is_none() {
                return Err(ConfigError::Invalid {
                    key: key("api_key_env"),
                    message: "names the key of a `base_url`; set that too".into(),
                });
            }
        }
        let Some(url) = &a.base_url else {
            return Ok(());
        };
        check_base_url(&key("base_url"), url)?;
        let backend = a.backend.backend();
        if backend
            .endpoint_args(url, a.api_key_env.as_deref())
            .is_none()
        {
            return Err(ConfigError::Invalid {
                key: key("base_url"),
                message: format!(
                    "backend `{}` cannot use a self-hosted endpoint (docs/self-hosted.md)",
                    a.backend.as_str()
                ),
            });
        }
        if let Some(v) = backend.endpoint_in_args(&a.extra_args) {
            return Err(ConfigError::Invalid {
                key: key("extra_args"),
                message: format!("`{v}` sets a provider besides `base_url`; keep one of them"),
            });
        }
        Ok(())
    }
}

/// Under `--repo-config base`, the repository's layer may not name an endpoint: an agent's
/// `base_url` or `api_key_env`, or a Codex agent's provider in `extra_args`.
pub(super) fn check_repository_layer(layer: &Table, path: &Path) -> Result<(), ConfigError> {
    let Some(Value::Table(agents)) = layer.get("agents") else {
        return Ok(());
    };
    let refuse = |key: String| ConfigError::Untrusted {
        path: path.to_path_buf(),
        key,
        what: "chooses the host that receives the reviewed code and your provider key \
               (refused under --repo-config base)"
            .into(),
    };
    for (name, agent) in agents {
        for key in ["base_url", "api_key_env"] {
            if agent.get(key).is_some() {
                return Err(refuse(format!("agents.{name}.{key}")));
            }
        }
        let args: Vec<String> = agent
            .get("extra_args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        if let Some(v) = BackendKind::ALL
            .iter()
            .find_map(|b| b.backend().endpoint_in_args(&args))
        {
            return Err(refuse(format!("agents.{name}.extra_args ({v})")));
        }
    }
    Ok(())
}

/// A `base_url`: `http://` or `https://`, a host, no whitespace or control characters.
pub(super) fn check_base_url(key: &str, url: &str) -> Result<(), ConfigError> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    let ok = rest.is_some_and(|r| {
        !r.is_empty()
            && !r.starts_with('/')
            && !r.chars().any(|c| c.is_whitespace() || c.is_control())
    });
    if ok {
        return Ok(());
    }
    Err(ConfigError::Invalid {
        key: key.into(),
        message: format!(
            "{url:?} is not an http(s) URL; name the server's OpenAI-compatible API, e.g. \
             \"http://127.0.0.1:11434/v1\""
        ),
    })
}

/// An `api_key_env`: an environment variable's name.
pub(super) fn check_key_var(key: &str, var: &str) -> Result<(), ConfigError> {
    let ok = !var.is_empty()
        && !var.starts_with(|c: char| c.is_ascii_digit())
        && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        return Ok(());
    }
    Err(ConfigError::Invalid {
        key: key.into(),
        message: format!("{var:?} is not an environment variable's name"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::codex_endpoint_arg;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_string()).collect()
    }

    #[test]
    fn codex_endpoint_keys_in_every_spelling() {
        for args in [
            &["-c", "model_provider=\"x\""][..],
            &["-cmodel_providers.x={base_url=\"http://h\"}"],
            &["-c=openai_base_url=\"http://h\""],
            &["--config", "model_providers.x.base_url=\"http://h\""],
            &["--config=\"model_provider\"=\"x\""],
        ] {
            assert!(codex_endpoint_arg(&s(args)).is_some(), "{args:?}");
        }
        for args in [
            &["-c", "model=\"gpt-5.5\""][..],
            &["-c", "model_reasoning_effort=\"high\""],
            &["--color", "never"],
        ] {
            assert_eq!(codex_endpoint_arg(&s(args)), None, "{args:?}");
        }
    }

    #[test]
    fn a_repository_layer_may_not_name_an_endpoint() {
        let p = Path::new("abc:arev.toml");
        for text in [
            "[agents.x]\nbackend = \"opencode\"\nbinary = \"o\"\nbase_url = \"http://evil\"\n",
            "[agents.x]\nbackend = \"opencode\"\nbinary = \"o\"\napi_key_env = \"OPENAI_API_KEY\"\n",
            "[agents.x]\nbackend = \"codex\"\nbinary = \"c\"\nextra_args = [\"-c\", \"openai_base_url=\\\"http://evil\\\"\"]\n",
        ] {
            let layer: Table = text.parse().unwrap();
            let e = check_repository_layer(&layer, p).unwrap_err().to_string();
            assert!(e.contains("agents.x."), "{e}");
            assert!(e.contains("receives the reviewed code"), "{e}");
        }
        let ok: Table = "[agents.x]\nbackend = \"codex\"\nbinary = \"c\"\nextra_args = [\"-c\", \"model=\\\"m\\\"\"]\n"
            .parse()
            .unwrap();
        assert!(check_repository_layer(&ok, p).is_ok());
    }

    #[test]
    fn base_urls_and_key_names_are_checked() {
        for ok in ["http://127.0.0.1:11434/v1", "https://vllm.internal/v1"] {
            assert!(check_base_url("k", ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "127.0.0.1:8000",
            "file:///etc",
            "http://",
            "http:///x",
            "http://a b",
        ] {
            assert!(check_base_url("k", bad).is_err(), "{bad}");
        }
        assert!(check_key_var("k", "VLLM_API_KEY").is_ok());
        for bad in ["", "1X", "A-B", "A B"] {
            assert!(check_key_var("k", bad).is_err(), "{bad}");
        }
    }
}

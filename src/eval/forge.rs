//! Where `arev eval bench` gets each pull request's code: its base and head commits from the
//! forge's API (`GET {api}/repos/{owner}/{repo}/pulls/{n}`: `base.sha`, `head.sha`), then
//! both commits fetched with git into a bare repository per source repository under
//! `<out>/repos/` (a repository fetched once serves all its PRs). `--mirror FROM=TO` rewrites
//! the git URL's prefix (a local mirror, an internal proxy; the tests' bare repositories).
//! What the forge and the golden file control is untrusted: the url is built from checked
//! names only, the shas must be 40 hex digits, every git argv ends its options with `--`,
//! and a value starting with `-` is refused.

use super::golden::PrRef;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The largest API answer read.
const MAX_API_BYTES: u64 = 2 * 1024 * 1024;

/// Why a PR's code could not be had (the PR is reported failed; the others go on).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("the forge API: {0}")]
    Api(String),
    #[error("git fetch {url}: {message}")]
    Git { url: String, message: String },
    #[error("{0}")]
    Refused(String),
}

/// The forge and the URL rewrites.
#[derive(Debug, Clone)]
pub struct Forge {
    /// The API base (`https://api.github.com`).
    pub api: String,
    /// `--mirror FROM=TO`, in order (the first matching prefix applies).
    pub mirrors: Vec<(String, String)>,
    /// `GITHUB_TOKEN`, sent to the API only.
    pub token: Option<String>,
    /// Where the bare repositories live (`<out>/repos`).
    pub repos: PathBuf,
}

/// A PR's base and head commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revs {
    pub base: String,
    pub head: String,
}

fn is_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `--mirror FROM=TO` checked: both sides non-empty, neither starting with `-`.
pub fn parse_mirror(s: &str) -> Result<(String, String), String> {
    let (from, to) = s
        .split_once('=')
        .ok_or_else(|| format!("--mirror {s}: expected FROM=TO (a URL prefix and its rewrite)"))?;
    if from.is_empty() || to.is_empty() || from.starts_with('-') || to.starts_with('-') {
        return Err(format!(
            "--mirror {s}: FROM and TO must be non-empty and not start with `-`"
        ));
    }
    Ok((from.to_string(), to.to_string()))
}

impl Forge {
    /// The git URL of `pr`'s repository after the rewrites.
    pub fn url_of(&self, pr: &PrRef) -> String {
        let url = pr.git_url();
        for (from, to) in &self.mirrors {
            if let Some(rest) = url.strip_prefix(from.as_str()) {
                return format!("{to}{rest}");
            }
        }
        url
    }

    /// The bare repository of `pr`'s source repository.
    pub fn repo_dir(&self, pr: &PrRef) -> PathBuf {
        self.repos.join(&pr.owner).join(format!("{}.git", pr.repo))
    }

    /// `base.sha` and `head.sha` of `pr`, from the API.
    pub fn lookup(&self, pr: &PrRef) -> Result<Revs, FetchError> {
        let api = |m: String| FetchError::Api(m);
        let url = format!(
            "{}/repos/{}/{}/pulls/{}",
            self.api.trim_end_matches('/'),
            pr.owner,
            pr.repo,
            pr.number
        );
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(Duration::from_secs(60)))
            .user_agent(format!("arev/{}", env!("CARGO_PKG_VERSION")))
            .build();
        let agent = ureq::Agent::new_with_config(config);
        let mut req = agent
            .get(&url)
            .header("accept", "application/vnd.github+json");
        if let Some(t) = &self.token {
            req = req.header("authorization", &format!("Bearer {t}"));
        }
        let mut resp = req.call().map_err(|e| api(format!("GET {url}: {e}")))?;
        let status = resp.status().as_u16();
        let body = resp
            .body_mut()
            .with_config()
            .limit(MAX_API_BYTES)
            .read_to_vec()
            .map_err(|e| api(format!("GET {url}: {e}")))?;
        if status != 200 {
            let text: String = String::from_utf8_lossy(&body).chars().take(200).collect();
            return Err(api(format!("GET {url}: HTTP {status}: {}", text.trim())));
        }
        let v: serde_json::Value =
            serde_json::from_slice(&body).map_err(|e| api(format!("GET {url}: not JSON: {e}")))?;
        let sha = |side: &str| -> Result<String, FetchError> {
            let s = v[side]["sha"].as_str().unwrap_or("");
            if is_sha(s) {
                Ok(s.to_ascii_lowercase())
            } else {
                Err(api(format!("GET {url}: `{side}.sha` is not a commit id")))
            }
        };
        Ok(Revs {
            base: sha("base")?,
            head: sha("head")?,
        })
    }

    /// Both commits of `revs` in `pr`'s bare repository (fetched unless already there);
    /// returns its path.
    pub fn fetch(&self, pr: &PrRef, revs: &Revs) -> Result<PathBuf, FetchError> {
        let dir = self.repo_dir(pr);
        let url = self.url_of(pr);
        if url.starts_with('-') || !is_sha(&revs.base) || !is_sha(&revs.head) {
            return Err(FetchError::Refused(format!(
                "refusing to fetch {url} at {}/{}",
                revs.base, revs.head
            )));
        }
        let git_err = |message: String| FetchError::Git {
            url: url.clone(),
            message,
        };
        if !dir.join("HEAD").is_file() {
            std::fs::create_dir_all(&dir).map_err(|e| git_err(e.to_string()))?;
            git(&dir, &["init", "--bare", "-q"]).map_err(git_err)?;
        }
        let have = |sha: &str| git(&dir, &["cat-file", "-e", &format!("{sha}^{{commit}}")]).is_ok();
        if have(&revs.base) && have(&revs.head) {
            return Ok(dir);
        }
        git(
            &dir,
            &[
                "fetch",
                "--no-tags",
                "--no-write-fetch-head",
                "-q",
                "--",
                &url,
                &revs.base,
                &revs.head,
            ],
        )
        .map_err(git_err)?;
        if !(have(&revs.base) && have(&revs.head)) {
            return Err(git_err(
                "the fetched repository lacks the PR's commits".into(),
            ));
        }
        Ok(dir)
    }
}

/// Run git in `dir` (a bare repository) without a terminal prompt; the last line of its
/// stderr on failure.
fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(err
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("failed")
        .trim()
        .chars()
        .take(300)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr() -> PrRef {
        super::super::golden::parse_pr_url("https://github.com/getsentry/sentry/pull/7").unwrap()
    }

    #[test]
    fn mirrors_rewrite_the_url_prefix_and_refuse_options() {
        let mut f = Forge {
            api: "https://api.github.com".into(),
            mirrors: vec![],
            token: None,
            repos: PathBuf::from("/o/repos"),
        };
        assert_eq!(f.url_of(&pr()), "https://github.com/getsentry/sentry.git");
        f.mirrors = vec![parse_mirror("https://github.com/=/srv/m/").unwrap()];
        assert_eq!(f.url_of(&pr()), "/srv/m/getsentry/sentry.git");
        assert_eq!(
            f.repo_dir(&pr()),
            PathBuf::from("/o/repos/getsentry/sentry.git")
        );
        assert!(parse_mirror("nothing").is_err());
        assert!(parse_mirror("a=--upload-pack=x").is_err());
        assert!(parse_mirror("-c=x").is_err());
        let bad = Revs {
            base: "--upload-pack=evil".into(),
            head: "0".repeat(40),
        };
        assert!(matches!(f.fetch(&pr(), &bad), Err(FetchError::Refused(_))));
    }
}

//! Publish settings from trusted inputs only: the CI environment (GitHub Actions, GitLab CI),
//! `--pr`, and the checkout's own `origin` remote when `GITHUB_REPOSITORY`/`CI_PROJECT_ID`
//! is unset — never from a file in the run dir (in the fork flow the run dir is the
//! untrusted side's artifact). Reads the environment through a lookup function so that the
//! resolution is testable; the only I/O is reading `GITHUB_EVENT_PATH` and the git config.

use super::error::PublishError;
use super::model::{Forge, PrTarget};
use serde_json::Value;
use std::path::Path;

/// The environment, as a lookup (empty values count as unset).
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn get(env: EnvLookup<'_>, name: &str) -> Option<String> {
    env(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Where and as whom to publish.
#[derive(Debug)]
pub struct Settings {
    pub forge: Forge,
    /// API base URL, without a trailing slash.
    pub api_url: String,
    pub token: String,
    pub target: PrTarget,
    /// This CI run's page (for the pointer to the full report).
    pub ci_url: Option<String>,
    /// GitHub's GraphQL endpoint (`GITHUB_GRAPHQL_URL`; else derived from the API URL).
    pub graphql_url: Option<String>,
    /// The repository's web URL, for absolute line links (`super::links`); None when the
    /// environment does not say it.
    pub web_url: Option<String>,
}

/// Where and as whom to read a repository, no pull request named (`arev eval
/// dispositions`, which lists them).
#[derive(Debug)]
pub struct RepoAccess {
    /// API base URL, without a trailing slash.
    pub api_url: String,
    pub token: String,
    /// GitHub `owner/name`; GitLab the project id or path.
    pub repository: String,
    /// GitHub's GraphQL endpoint when the environment names it.
    pub graphql_url: Option<String>,
}

/// The repository of `forge` the environment (or the `origin` remote of `root`) names.
pub fn repo_access(
    forge: Forge,
    env: EnvLookup<'_>,
    root: Option<&Path>,
) -> Result<RepoAccess, PublishError> {
    match forge {
        Forge::Github => github_repo(env, root),
        Forge::Gitlab => gitlab_repo(env, root),
    }
}

/// The token variable and its hint, per forge (also used by the pre-flight check).
pub fn token_var(forge: Forge) -> (&'static str, &'static str) {
    match forge {
        Forge::Github => (
            "GITHUB_TOKEN",
            "the token to publish with (in a workflow: `env: GITHUB_TOKEN: ${{ github.token }}`, with `pull-requests: write`)",
        ),
        Forge::Gitlab => (
            "GITLAB_TOKEN",
            "a project or personal access token with the `api` scope (a masked CI/CD variable)",
        ),
    }
}

/// The token of `forge` in the environment ([`token_var`]); unset or blank is a
/// `MissingEnv` naming the variable and what it must hold.
pub fn token(forge: Forge, env: EnvLookup<'_>) -> Result<String, PublishError> {
    let (var, why) = token_var(forge);
    get(env, var).ok_or(PublishError::MissingEnv { var, why })
}

/// The PR number and head sha of a GitHub event file (`pull_request`/`pull_request_target`,
/// or a `workflow_run` that lists its pull request).
fn github_event(path: &Path) -> Result<(Option<u64>, Option<String>), PublishError> {
    let text = std::fs::read_to_string(path).map_err(|e| PublishError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| PublishError::Read {
        path: path.to_path_buf(),
        message: format!("not JSON: {e}"),
    })?;
    let pr = v
        .get("pull_request")
        .or_else(|| v.pointer("/workflow_run/pull_requests/0"));
    Ok(match pr {
        Some(pr) => (
            pr.get("number").and_then(Value::as_u64),
            pr.pointer("/head/sha")
                .and_then(Value::as_str)
                .map(String::from),
        ),
        None => (None, None),
    })
}

/// The `origin` remote's URL of the git repository at `root` (the CI's own checkout).
pub fn origin_url(root: &Path) -> Option<String> {
    let repo = git2::Repository::open(root).ok()?;
    let remote = repo.find_remote("origin").ok()?;
    remote.url().map(String::from)
}

/// The repository path of a remote URL (`https://host/o/r.git`, `git@host:o/r.git`,
/// `ssh://git@host:22/group/sub/r`) → `o/r`, `group/sub/r`; None for anything else.
pub fn remote_path(url: &str) -> Option<String> {
    let url = url.trim();
    let rest = if let Some((_, after)) = url.split_once("://") {
        after.split_once('/')?.1
    } else {
        // scp-like `user@host:path`.
        let (host, path) = url.split_once(':')?;
        if host.contains('/') || path.starts_with('/') {
            return None;
        }
        path
    };
    let path = rest.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let ok = path.split('/').count() >= 2
        && path.split('/').all(|seg| {
            !seg.is_empty()
                && seg != ".."
                && seg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        });
    ok.then(|| path.to_string())
}

/// GitHub: `GITHUB_TOKEN`, `GITHUB_API_URL` (default the public API), `GITHUB_REPOSITORY`
/// (else the `origin` remote of the checkout at `root`), the PR from `--pr` or the event in
/// `GITHUB_EVENT_PATH`, and its head sha from the event when it is the same PR (else the
/// API is asked when publishing).
pub fn github(
    env: EnvLookup<'_>,
    pr: Option<u64>,
    root: Option<&Path>,
) -> Result<Settings, PublishError> {
    let RepoAccess {
        api_url,
        token,
        repository,
        graphql_url,
        ..
    } = github_repo(env, root)?;
    let (known_number, known_head) = match get(env, "GITHUB_EVENT_PATH") {
        None => (None, None),
        Some(p) => github_event(Path::new(&p))?,
    };
    let number = pr.or(known_number).ok_or_else(|| {
        PublishError::BadSetting(
            "no pull request to publish to: pass --pr N, or run on a `pull_request` event (GITHUB_EVENT_PATH)".into(),
        )
    })?;
    let head_sha = if known_number == Some(number) {
        known_head
    } else {
        None
    };
    let ci_url = match (
        get(env, "GITHUB_SERVER_URL"),
        get(env, "GITHUB_REPOSITORY"),
        get(env, "GITHUB_RUN_ID"),
    ) {
        (Some(s), Some(r), Some(id)) => Some(format!("{s}/{r}/actions/runs/{id}")),
        _ => None,
    };
    let web_url = super::links::github_web(
        get(env, "GITHUB_SERVER_URL").as_deref(),
        &api_url,
        &repository,
    );
    Ok(Settings {
        forge: Forge::Github,
        api_url,
        token,
        target: PrTarget {
            repository,
            number,
            head_sha,
        },
        ci_url,
        graphql_url,
        web_url,
    })
}

/// The repository a GitHub token reads (`GITHUB_TOKEN`, `GITHUB_API_URL`,
/// `GITHUB_REPOSITORY` else the `origin` remote of `root`, `GITHUB_GRAPHQL_URL`).
fn github_repo(env: EnvLookup<'_>, root: Option<&Path>) -> Result<RepoAccess, PublishError> {
    let token = token(Forge::Github, env)?;
    let api_url = get(env, "GITHUB_API_URL")
        .unwrap_or_else(|| "https://api.github.com".into())
        .trim_end_matches('/')
        .to_string();
    let repository = match get(env, "GITHUB_REPOSITORY") {
        Some(r) => r,
        None => root
            .and_then(origin_url)
            .and_then(|u| remote_path(&u))
            .filter(|p| p.split('/').count() == 2)
            .ok_or(PublishError::MissingEnv {
                var: "GITHUB_REPOSITORY",
                why: "the `owner/name` of the repository whose pull request to comment on (or a checkout whose `origin` remote names it)",
            })?,
    };
    if repository.split('/').count() != 2 || repository.split('/').any(str::is_empty) {
        return Err(PublishError::BadSetting(format!(
            "GITHUB_REPOSITORY must be `owner/name`, not `{repository}`"
        )));
    }
    Ok(RepoAccess {
        api_url,
        token,
        repository,
        graphql_url: get(env, "GITHUB_GRAPHQL_URL"),
    })
}

/// GitLab: `GITLAB_TOKEN`, `CI_API_V4_URL` (default gitlab.com), `CI_PROJECT_ID` (else the
/// project path of the checkout's `origin` remote), the MR iid from `--pr` or
/// `CI_MERGE_REQUEST_IID`. The head sha always comes from the MR's latest version (with its
/// base and start shas) when publishing.
pub fn gitlab(
    env: EnvLookup<'_>,
    pr: Option<u64>,
    root: Option<&Path>,
) -> Result<Settings, PublishError> {
    let RepoAccess {
        api_url,
        token,
        repository,
        ..
    } = gitlab_repo(env, root)?;
    let env_iid = match get(env, "CI_MERGE_REQUEST_IID") {
        Some(v) => Some(v.parse::<u64>().map_err(|_| {
            PublishError::BadSetting(format!("CI_MERGE_REQUEST_IID is not a number: `{v}`"))
        })?),
        None => None,
    };
    let number = pr
        .or(env_iid)
        .ok_or_else(|| {
            PublishError::BadSetting(
                "no merge request to publish to: pass --pr N, or run in a merge request pipeline (CI_MERGE_REQUEST_IID)".into(),
            )
        })?;
    let web_url = super::links::gitlab_web(
        get(env, "CI_PROJECT_URL").as_deref(),
        (
            get(env, "CI_SERVER_URL").as_deref(),
            get(env, "CI_PROJECT_PATH").as_deref(),
        ),
        &api_url,
        &repository,
    );
    Ok(Settings {
        forge: Forge::Gitlab,
        api_url,
        token,
        target: PrTarget {
            repository,
            number,
            head_sha: None,
        },
        ci_url: get(env, "CI_JOB_URL"),
        graphql_url: None,
        web_url,
    })
}

/// The project a GitLab token reads (`GITLAB_TOKEN`, `CI_API_V4_URL`, `CI_PROJECT_ID` else
/// the project path of the `origin` remote of `root`).
fn gitlab_repo(env: EnvLookup<'_>, root: Option<&Path>) -> Result<RepoAccess, PublishError> {
    let token = token(Forge::Gitlab, env)?;
    let api_url = get(env, "CI_API_V4_URL")
        .unwrap_or_else(|| "https://gitlab.com/api/v4".into())
        .trim_end_matches('/')
        .to_string();
    let repository = match get(env, "CI_PROJECT_ID") {
        Some(r) => r,
        None => root
            .and_then(origin_url)
            .and_then(|u| remote_path(&u))
            .ok_or(PublishError::MissingEnv {
                var: "CI_PROJECT_ID",
                why: "the id of the project whose merge request to comment on (or a checkout whose `origin` remote names it)",
            })?,
    };
    Ok(RepoAccess {
        api_url,
        token,
        repository,
        graphql_url: None,
    })
}

/// The settings of `forge`; `root` is the checkout whose `origin` remote names the
/// repository when the environment does not.
pub fn settings(
    forge: Forge,
    env: EnvLookup<'_>,
    pr: Option<u64>,
    root: Option<&Path>,
) -> Result<Settings, PublishError> {
    match forge {
        Forge::Github => github(env, pr, root),
        Forge::Gitlab => gitlab(env, pr, root),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn github_reads_the_pull_request_event() {
        let dir = tempfile::tempdir().unwrap();
        let ev = dir.path().join("event.json");
        std::fs::write(&ev, r#"{"pull_request":{"number":7,"head":{"sha":"abc"}}}"#).unwrap();
        let env = lookup(&[
            ("GITHUB_TOKEN", "t0ken"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_EVENT_PATH", ev.to_str().unwrap()),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_RUN_ID", "42"),
        ]);
        let s = github(&env, None, None).unwrap();
        assert_eq!(s.api_url, "https://api.github.com");
        assert_eq!(s.target.number, 7);
        assert_eq!(s.target.head_sha.as_deref(), Some("abc"));
        assert_eq!(
            s.ci_url.as_deref(),
            Some("https://github.com/o/r/actions/runs/42")
        );
        assert_eq!(s.web_url.as_deref(), Some("https://github.com/o/r"));
        // Another PR: its head is asked from the API.
        let s = github(&env, Some(8), None).unwrap();
        assert_eq!((s.target.number, s.target.head_sha), (8, None));
    }

    /// The repository's web URL (for absolute line links) comes from the CI's own variables:
    /// GitLab's project URL, else its server URL and project path, else nothing for a
    /// project known by its id alone.
    #[test]
    fn the_web_url_comes_from_the_ci_variables() {
        let base = [
            ("GITLAB_TOKEN", "t"),
            ("CI_PROJECT_ID", "42"),
            ("CI_MERGE_REQUEST_IID", "3"),
        ];
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut pairs = base.to_vec();
            pairs.extend_from_slice(extra);
            gitlab(&lookup(&pairs), None, None).unwrap().web_url
        };
        assert_eq!(
            with(&[("CI_PROJECT_URL", "https://gl.example/g/p")]).as_deref(),
            Some("https://gl.example/g/p")
        );
        assert_eq!(
            with(&[
                ("CI_SERVER_URL", "https://gl.example"),
                ("CI_PROJECT_PATH", "g/p")
            ])
            .as_deref(),
            Some("https://gl.example/g/p")
        );
        assert_eq!(with(&[]), None);
    }

    #[test]
    fn github_names_what_is_missing() {
        let e = github(&lookup(&[("GITHUB_REPOSITORY", "o/r")]), Some(1), None).unwrap_err();
        assert!(e.to_string().starts_with("GITHUB_TOKEN is not set"), "{e}");
        let e = github(&lookup(&[("GITHUB_TOKEN", "t")]), Some(1), None).unwrap_err();
        assert!(
            e.to_string().starts_with("GITHUB_REPOSITORY is not set"),
            "{e}"
        );
        let e = github(
            &lookup(&[("GITHUB_TOKEN", "t"), ("GITHUB_REPOSITORY", "o/r")]),
            None,
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("--pr N"), "{e}");
        let e = github(
            &lookup(&[("GITHUB_TOKEN", "t"), ("GITHUB_REPOSITORY", "o")]),
            Some(1),
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("owner/name"), "{e}");
        let e = github(&lookup(&[("GITHUB_TOKEN", "  ")]), Some(1), None).unwrap_err();
        assert!(e.is_setting() && e.to_string().starts_with("GITHUB_TOKEN"));
    }

    #[test]
    fn the_repository_falls_back_to_the_origin_remote_of_the_checkout() {
        for (url, path) in [
            ("https://github.com/o/r.git", Some("o/r")),
            ("https://github.com/o/r", Some("o/r")),
            ("git@github.com:o/r.git", Some("o/r")),
            (
                "ssh://git@gl.example:2222/group/sub/r.git",
                Some("group/sub/r"),
            ),
            ("https://x/o/../r", None),
            ("/srv/git/r.git", None),
            ("https://github.com/r", None),
        ] {
            assert_eq!(remote_path(url).as_deref(), path, "{url}");
        }
        let d = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(d.path()).unwrap();
        repo.remote("origin", "git@github.com:octo/widgets.git")
            .unwrap();
        let env = lookup(&[
            ("GITHUB_TOKEN", "t"),
            ("GITHUB_API_URL", "http://127.0.0.1:9/api/"),
        ]);
        let s = github(&env, Some(3), Some(d.path())).unwrap();
        assert_eq!(s.target.repository, "octo/widgets");
        assert_eq!(s.api_url, "http://127.0.0.1:9/api");
        // The environment wins over the remote.
        let env = lookup(&[("GITHUB_TOKEN", "t"), ("GITHUB_REPOSITORY", "a/b")]);
        assert_eq!(
            github(&env, Some(3), Some(d.path()))
                .unwrap()
                .target
                .repository,
            "a/b"
        );
        let gl = gitlab(&lookup(&[("GITLAB_TOKEN", "t")]), Some(2), Some(d.path())).unwrap();
        assert_eq!(gl.target.repository, "octo/widgets");
    }

    #[test]
    fn gitlab_reads_the_merge_request_pipeline() {
        let env = lookup(&[
            ("GITLAB_TOKEN", "glpat"),
            ("CI_API_V4_URL", "https://gl.example/api/v4"),
            ("CI_PROJECT_ID", "12"),
            ("CI_MERGE_REQUEST_IID", "5"),
        ]);
        let s = gitlab(&env, None, None).unwrap();
        assert_eq!(
            (
                s.api_url.as_str(),
                s.target.repository.as_str(),
                s.target.number
            ),
            ("https://gl.example/api/v4", "12", 5)
        );
        let e = gitlab(&lookup(&[("CI_PROJECT_ID", "1")]), Some(1), None).unwrap_err();
        assert!(e.to_string().starts_with("GITLAB_TOKEN is not set"), "{e}");
        let e = gitlab(
            &lookup(&[
                ("GITLAB_TOKEN", "x"),
                ("CI_PROJECT_ID", "1"),
                ("CI_MERGE_REQUEST_IID", "x"),
            ]),
            None,
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("not a number"), "{e}");
    }
}

//! `arev eval bench`'s input, read as untrusted data: the offline code-review benchmark's
//! `golden_comments/*.json` (an array of `{pr_title, url, comments: [{comment, severity}]}`,
//! one file per source repository) and, optionally, its `pr_labels.json` (per PR url,
//! `llm_pr_labels.requires_context`). Every file is size-capped; every PR url must be a
//! GitHub pull request (`https://github.com/<owner>/<repo>/pull/<n>`, names of
//! `[A-Za-z0-9._-]` not starting with `-` or `.`), so that nothing in a golden file decides
//! a local path, a git option or another host. A file that breaks the format is one line
//! naming the file and the entry (exit 2).

use super::error::EvalError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The largest golden or labels file read (the benchmark's are ~30 KiB and ~70 KiB).
pub const MAX_GOLDEN_BYTES: u64 = 4 * 1024 * 1024;
/// At most this many PRs over all golden files, and comments per PR.
pub const MAX_PRS: usize = 2000;
pub const MAX_COMMENTS: usize = 200;
/// The longest golden comment kept (characters).
pub const MAX_COMMENT_CHARS: usize = 8000;

/// A pull request's place on its forge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrRef {
    pub host: String,
    pub owner: String,
    pub repo: String,
    pub number: u64,
}

impl PrRef {
    /// `owner/repo`.
    pub fn slug(&self) -> String {
        format!("{}/{}", self.owner, self.repo)
    }

    /// The repository's git URL on its forge (before any `--mirror` rewrite).
    pub fn git_url(&self) -> String {
        format!("https://{}/{}/{}.git", self.host, self.owner, self.repo)
    }
}

/// One golden comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Golden {
    pub comment: String,
    pub severity: Option<String>,
}

/// One benchmark PR.
#[derive(Debug, Clone)]
pub struct BenchPr {
    /// The url as the golden file spells it (the candidates file's key).
    pub url: String,
    pub pr: PrRef,
    /// The golden file's stem (`sentry`, `cal_dot_com`): the benchmark's source repository.
    pub source: String,
    pub title: String,
    pub golden: Vec<Golden>,
}

#[derive(Deserialize)]
struct GoldenEntry {
    #[serde(default)]
    pr_title: Option<String>,
    url: String,
    comments: Vec<GoldenComment>,
}

#[derive(Deserialize)]
struct GoldenComment {
    comment: String,
    #[serde(default)]
    severity: Option<String>,
}

/// A name of the url path: `[A-Za-z0-9._-]{1,100}`, not `-`/`.`-led.
fn good_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && !s.starts_with(['-', '.'])
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Why `url` is not a pull request arev can fetch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlProblem {
    #[error("`{0}` is not an https URL")]
    NotHttps(String),
    #[error(
        "`{url}`: unknown repository host `{host}` (only github.com pull requests are fetched)"
    )]
    UnknownHost { url: String, host: String },
    #[error("`{0}` is not a pull request URL (https://github.com/<owner>/<repo>/pull/<number>)")]
    NotPullRequest(String),
}

/// Parse a golden file's PR url.
pub fn parse_pr_url(url: &str) -> Result<PrRef, UrlProblem> {
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| UrlProblem::NotHttps(url.to_string()))?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    if !host.eq_ignore_ascii_case("github.com") {
        return Err(UrlProblem::UnknownHost {
            url: url.to_string(),
            host: host.chars().take(100).collect(),
        });
    }
    let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    let not_pr = || UrlProblem::NotPullRequest(url.to_string());
    let [owner, repo, "pull", n] = parts.as_slice() else {
        return Err(not_pr());
    };
    if !good_name(owner)
        || !good_name(repo)
        || n.is_empty()
        || !n.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(not_pr());
    }
    let number: u64 = n.parse().map_err(|_| not_pr())?;
    if number == 0 {
        return Err(not_pr());
    }
    Ok(PrRef {
        host: "github.com".into(),
        owner: (*owner).to_string(),
        repo: repo.trim_end_matches(".git").to_string(),
        number,
    })
}

fn read_capped(path: &Path) -> Result<Vec<u8>, EvalError> {
    crate::store::read_capped(path, MAX_GOLDEN_BYTES, "a benchmark file").map_err(|e| {
        EvalError::BadCase {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    })
}

/// Every PR of one golden file, checked.
pub fn parse_golden(path: &Path, bytes: &[u8]) -> Result<Vec<BenchPr>, EvalError> {
    let bad = |message: String| EvalError::BadCase {
        path: path.to_path_buf(),
        message,
    };
    let entries: Vec<GoldenEntry> = serde_json::from_slice(bytes).map_err(|e| {
        bad(format!(
            "not a golden comments file (an array of {{pr_title, url, comments: [{{comment, \
             severity}}]}}): {e}"
        ))
    })?;
    let source = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("unknown")
        .to_string();
    let mut out = vec![];
    for (i, e) in entries.into_iter().enumerate() {
        let entry = |m: String| {
            bad(format!(
                "entry {i} ({}): {m}",
                e.url.chars().take(200).collect::<String>()
            ))
        };
        let pr = parse_pr_url(&e.url).map_err(|p| entry(p.to_string()))?;
        if e.comments.len() > MAX_COMMENTS {
            return Err(entry(format!("more than {MAX_COMMENTS} comments")));
        }
        let mut golden = vec![];
        for (j, c) in e.comments.into_iter().enumerate() {
            let text = c.comment.trim();
            if text.is_empty() {
                return Err(entry(format!("comments[{j}] is empty")));
            }
            golden.push(Golden {
                comment: text.chars().take(MAX_COMMENT_CHARS).collect(),
                severity: c.severity.map(|s| s.chars().take(20).collect()),
            });
        }
        out.push(BenchPr {
            url: e.url.clone(),
            pr,
            source: source.clone(),
            title: e.pr_title.unwrap_or_default().chars().take(300).collect(),
            golden,
        });
    }
    Ok(out)
}

/// Every `*.json` of `dir` (a file: that one), sorted by name; a url seen twice is an error.
pub fn load_golden(dir: &Path) -> Result<Vec<BenchPr>, EvalError> {
    let files: Vec<PathBuf> = if dir.is_file() {
        vec![dir.to_path_buf()]
    } else {
        let rd = std::fs::read_dir(dir).map_err(|e| EvalError::BadCase {
            path: dir.to_path_buf(),
            message: format!("cannot read the golden comments directory: {e}"),
        })?;
        let mut v: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
            .collect();
        v.sort();
        v
    };
    if files.is_empty() {
        return Err(EvalError::BadCase {
            path: dir.to_path_buf(),
            message: "no golden comments file (*.json) here".into(),
        });
    }
    let mut all: Vec<BenchPr> = vec![];
    for f in &files {
        let prs = parse_golden(f, &read_capped(f)?)?;
        for p in prs {
            if all.iter().any(|a| a.url == p.url) {
                return Err(EvalError::BadCase {
                    path: f.clone(),
                    message: format!("{}: listed twice", p.url),
                });
            }
            all.push(p);
        }
        if all.len() > MAX_PRS {
            return Err(EvalError::BadCase {
                path: f.clone(),
                message: format!("more than {MAX_PRS} pull requests in all"),
            });
        }
    }
    Ok(all)
}

/// `pr_labels.json`: each PR url's `llm_pr_labels.requires_context` (`cross_file`, `file`,
/// `local`, …); a PR without the label is left out.
pub fn load_labels(path: &Path) -> Result<BTreeMap<String, String>, EvalError> {
    let bad = |message: String| EvalError::BadCase {
        path: path.to_path_buf(),
        message,
    };
    let v: BTreeMap<String, serde_json::Value> = serde_json::from_slice(&read_capped(path)?)
        .map_err(|e| {
            bad(format!(
                "not a pr_labels.json (an object keyed by PR url): {e}"
            ))
        })?;
    let mut out = BTreeMap::new();
    for (url, entry) in v {
        if !entry.is_object() {
            return Err(bad(format!("{url}: not an object")));
        }
        if let Some(c) = entry["llm_pr_labels"]["requires_context"].as_str() {
            let ok = !c.is_empty()
                && c.len() <= 40
                && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !ok {
                return Err(bad(format!(
                    "{url}: requires_context `{}` is not a label",
                    c.chars().take(40).collect::<String>()
                )));
            }
            out.insert(url, c.to_string());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_request_urls_are_github_pulls_with_plain_names() {
        let p = parse_pr_url("https://github.com/getsentry/sentry/pull/93824").unwrap();
        assert_eq!(
            (p.slug(), p.number),
            ("getsentry/sentry".to_string(), 93824)
        );
        assert_eq!(p.git_url(), "https://github.com/getsentry/sentry.git");
        assert!(matches!(
            parse_pr_url("https://gitlab.com/a/b/pull/1"),
            Err(UrlProblem::UnknownHost { .. })
        ));
        for bad in [
            "https://github.com/a/b/issues/1",
            "https://github.com/a/b/pull/x",
            "https://github.com/a/b/pull/0",
            "https://github.com/-a/b/pull/1",
            "https://github.com/a/../pull/1",
            "https://github.com/a/b/c/pull/1",
            "https://github.com/a/b%2f/pull/1",
        ] {
            assert!(
                matches!(parse_pr_url(bad), Err(UrlProblem::NotPullRequest(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            parse_pr_url("file:///etc/passwd"),
            Err(UrlProblem::NotHttps(_))
        ));
    }

    #[test]
    fn a_golden_file_names_its_bad_entry() {
        let p = Path::new("/g/sentry.json");
        let ok = br#"[{"pr_title":"t","url":"https://github.com/o/r/pull/2","comments":[{"comment":" x ","severity":"High"}]}]"#;
        let prs = parse_golden(p, ok).unwrap();
        assert_eq!(prs[0].source, "sentry");
        assert_eq!(prs[0].golden[0].comment, "x");
        let e = parse_golden(p, br#"{"url":1}"#).unwrap_err().to_string();
        assert!(
            e.starts_with("/g/sentry.json: not a golden comments file"),
            "{e}"
        );
        let bad = br#"[{"url":"https://github.com/o/r/pull/2","comments":[]},{"url":"https://github.com/o/r/issues/3","comments":[]}]"#;
        let e = parse_golden(p, bad).unwrap_err().to_string();
        assert!(
            e.starts_with("/g/sentry.json: entry 1 (https://github.com/o/r/issues/3): "),
            "{e}"
        );
    }

    #[test]
    fn an_oversized_golden_file_is_refused_unread() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.json");
        std::fs::write(&p, vec![b' '; (MAX_GOLDEN_BYTES + 1) as usize]).unwrap();
        let e = load_golden(d.path()).unwrap_err().to_string();
        assert!(e.starts_with(&p.display().to_string()), "{e}");
        assert!(load_labels(&p).is_err());
    }
}

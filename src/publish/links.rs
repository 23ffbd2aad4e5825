//! Where a PR comment's line links point: the forge's view of the repository's files at the
//! reviewed commit (GitHub `<web>/<owner>/<name>/blob/<sha>/`, GitLab
//! `<web>/<group>/<project>/-/blob/<sha>/`), built from the publishing job's trusted settings
//! only; unknown, a comment keeps report.md's relative links (docs/contracts.md §22.2).

use super::model::Forge;
use crate::report::url_path;

/// A web URL arev may put in front of a link: `http(s)://`, a host, and only
/// `A-Za-z0-9-._~:/%` after it (no query, fragment, space, quote or parenthesis). Returned
/// without its trailing `/`.
fn plain_url(url: &str) -> Option<&str> {
    let url = url.trim().trim_end_matches('/');
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let host_ok = rest
        .split('/')
        .next()
        .is_some_and(|h| !h.is_empty() && !h.starts_with(':'));
    let chars_ok = rest
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~:/%".contains(&b));
    (host_ok && chars_ok).then_some(url)
}

/// `owner/name` or `group/sub/project`: at least two segments, none empty, `.` or `..`.
fn plain_repo_path(p: &str) -> bool {
    p.split('/').count() >= 2
        && p.split('/')
            .all(|s| !s.is_empty() && s != "." && s != ".." && !s.chars().any(char::is_control))
}

/// GitHub's web URL of `repository` (`owner/name`): `GITHUB_SERVER_URL` (`server`), else
/// the web host of the API URL (`https://api.github.com` → `https://github.com`, a GitHub
/// Enterprise `https://<host>/api/v3` → `https://<host>`); None when neither says.
pub fn github_web(server: Option<&str>, api_url: &str, repository: &str) -> Option<String> {
    if !plain_repo_path(repository) {
        return None;
    }
    let host = match server {
        Some(s) => plain_url(s)?.to_string(),
        None => {
            let api = plain_url(api_url)?;
            if api == "https://api.github.com" {
                "https://github.com".to_string()
            } else {
                api.strip_suffix("/api/v3")?.to_string()
            }
        }
    };
    Some(format!("{host}/{}", url_path(repository)))
}

/// GitLab's web URL of the project: `CI_PROJECT_URL` (`project_url`), else
/// `CI_SERVER_URL`/`CI_PROJECT_PATH`, else the API's host (`…/api/v4` cut off) and
/// `repository` when that is a project path (a numeric project id names no URL); None when
/// none of them says.
pub fn gitlab_web(
    project_url: Option<&str>,
    server_and_path: (Option<&str>, Option<&str>),
    api_url: &str,
    repository: &str,
) -> Option<String> {
    if let Some(u) = project_url {
        return plain_url(u).map(str::to_string);
    }
    let (host, path) = match server_and_path {
        (Some(server), Some(path)) => (plain_url(server)?, path),
        _ => (plain_url(api_url)?.strip_suffix("/api/v4")?, repository),
    };
    plain_repo_path(path).then(|| format!("{host}/{}", url_path(path)))
}

/// A commit id arev puts in a URL: 7 to 64 hexadecimal digits.
fn plain_sha(sha: &str) -> bool {
    (7..=64).contains(&sha.len()) && sha.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The base of the line links at `commit` under the repository's web URL `web` (as
/// [`github_web`] / [`gitlab_web`] return it): GitHub `<web>/blob/<sha>/`, GitLab
/// `<web>/-/blob/<sha>/`; a link is the base, the encoded path and `#L<line>`
/// (`crate::report::md_line_link_at`). None without a web URL or a plain commit id.
pub fn blob_base(forge: Forge, web: Option<&str>, commit: Option<&str>) -> Option<String> {
    let web = plain_url(web?)?;
    let sha = commit.filter(|c| plain_sha(c))?;
    Some(match forge {
        Forge::Github => format!("{web}/blob/{sha}/"),
        Forge::Gitlab => format!("{web}/-/blob/{sha}/"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{md_line_link_at, MdContext};

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn github_links_go_to_the_blob_at_the_reviewed_commit() {
        let web = github_web(Some("https://github.com"), "https://api.github.com", "o/r");
        assert_eq!(web.as_deref(), Some("https://github.com/o/r"));
        // Without GITHUB_SERVER_URL: the API's web host (public, or Enterprise).
        assert_eq!(github_web(None, "https://api.github.com/", "o/r"), web);
        assert_eq!(
            github_web(None, "https://ghe.example.com/api/v3", "o/r").as_deref(),
            Some("https://ghe.example.com/o/r")
        );
        assert_eq!(github_web(None, "http://127.0.0.1:9", "o/r"), None);
        let base = blob_base(Forge::Github, web.as_deref(), Some(SHA)).unwrap();
        assert_eq!(base, format!("https://github.com/o/r/blob/{SHA}/"));
        assert_eq!(
            md_line_link_at("src/app.rs", 5, MdContext::Inline, Some(&base)),
            format!("[`src/app.rs:5`](https://github.com/o/r/blob/{SHA}/src/app.rs#L5)")
        );
        // Spaces, `#` and `)` in a path are percent-encoded: one URL, one fragment.
        assert_eq!(
            md_line_link_at("docs/a b#c).md", 12, MdContext::Inline, Some(&base)),
            format!(
                "[`docs/a b#c).md:12`](https://github.com/o/r/blob/{SHA}/docs/a%20b%23c%29.md#L12)"
            )
        );
    }

    #[test]
    fn gitlab_links_go_to_the_blob_at_the_reviewed_commit() {
        let web = gitlab_web(
            Some("https://gitlab.example.com/group/sub/proj"),
            (None, None),
            "https://gitlab.example.com/api/v4",
            "42",
        );
        assert_eq!(
            web.as_deref(),
            Some("https://gitlab.example.com/group/sub/proj")
        );
        assert_eq!(
            gitlab_web(
                None,
                (Some("https://gitlab.example.com"), Some("group/sub/proj")),
                "x",
                "42"
            ),
            web
        );
        // The project path of the origin remote under the API's host; a numeric id names
        // no URL.
        assert_eq!(
            gitlab_web(
                None,
                (None, None),
                "https://gitlab.example.com/api/v4",
                "group/sub/proj"
            ),
            web
        );
        assert_eq!(
            gitlab_web(None, (None, None), "https://gitlab.com/api/v4", "42"),
            None
        );
        let base = blob_base(Forge::Gitlab, web.as_deref(), Some(SHA)).unwrap();
        assert_eq!(
            base,
            format!("https://gitlab.example.com/group/sub/proj/-/blob/{SHA}/")
        );
        assert_eq!(
            md_line_link_at("a b/(x)#1.py", 3, MdContext::Table, Some(&base)),
            format!(
                "[`a b/(x)#1.py:3`](https://gitlab.example.com/group/sub/proj/-/blob/{SHA}/a%20b/%28x%29%231.py#L3)"
            )
        );
    }

    /// Nothing from outside the trusted settings shapes a link: a hostile path is never a
    /// link (or is encoded into the one URL), and a web URL or commit that is not plain
    /// gives no base — the relative links stay.
    #[test]
    fn hostile_paths_urls_and_commits_never_shape_a_link() {
        let base = blob_base(Forge::Github, Some("https://github.com/o/r"), Some(SHA)).unwrap();
        for hostile in ["../../etc/passwd", "/etc/passwd", "a//b", "a\nb", ""] {
            let md = md_line_link_at(hostile, 1, MdContext::Inline, Some(&base));
            assert!(!md.contains("]("), "{hostile:?}: {md}");
        }
        let md = md_line_link_at(
            "x)](javascript:alert(1)) <b>",
            1,
            MdContext::Inline,
            Some(&base),
        );
        let dest = md.rsplit_once("](").unwrap().1;
        assert!(
            dest.starts_with(&base) && dest.ends_with("#L1)") && dest.matches(')').count() == 1,
            "{md}"
        );
        assert!(!dest.contains(' ') && !dest.contains('<'), "{md}");
        for web in [
            "javascript:alert(1)",
            "https://github.com/o/r?x=1",
            "https://github.com/o/r#x",
            "https://git hub.com/o/r",
            "https://github.com/o/r)",
            "https://",
            "ftp://github.com/o/r",
        ] {
            assert_eq!(
                blob_base(Forge::Github, Some(web), Some(SHA)),
                None,
                "{web}"
            );
        }
        for sha in ["", "abc", "../../x", &"a".repeat(65), "0123456789abcdeg"] {
            assert_eq!(
                blob_base(Forge::Gitlab, Some("https://gitlab.com/g/p"), Some(sha)),
                None,
                "{sha}"
            );
        }
        assert_eq!(blob_base(Forge::Github, None, Some(SHA)), None);
        assert_eq!(
            blob_base(Forge::Github, Some("https://github.com/o/r"), None),
            None
        );
        assert_eq!(github_web(Some("https://github.com"), "", "o/../r"), None);
        assert_eq!(github_web(Some("https://github.com"), "", "o"), None);
        // A repository segment outside the plain set is encoded, never a new URL part.
        assert_eq!(
            github_web(Some("https://github.com"), "", "o/r#x").as_deref(),
            Some("https://github.com/o/r%23x")
        );
    }
}

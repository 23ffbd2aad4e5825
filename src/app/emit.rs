//! Rendering a report in the chosen format, writing it to stdout and the requested files, and
//! the exit code a report stands for (shared by `run`, `report` and `merge`).

use crate::cli::Format;
use crate::config::{load, ConfigSources, FailOn};
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output;
use crate::report::{
    render_github, render_markdown, render_sarif, render_text, render_text_styled, Report,
};
use crate::store::{copy_atomic, write_atomic, RunStatus, Written};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Where a rendered report goes.
pub(crate) struct Emit<'a> {
    pub format: Format,
    pub out: Option<&'a Path>,
    pub sarif: Option<&'a Path>,
    pub markdown: Option<&'a Path>,
    /// What the run dir already holds of this report (rendered once, not again).
    pub written: Option<&'a Written>,
}

impl<'a> From<&'a crate::cli::OutputArgs> for Emit<'a> {
    /// `--format`, `--out`, `--sarif` and `--markdown` as given.
    fn from(o: &'a crate::cli::OutputArgs) -> Self {
        Self {
            format: o.format,
            out: o.out.as_deref(),
            sarif: o.sarif.as_deref(),
            markdown: o.markdown.as_deref(),
            written: None,
        }
    }
}

/// The report in `format`, ending with a newline.
pub(crate) fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Text => render_text(report),
        Format::Json => {
            output::json_string(report, true).map_or_else(|_| "\n".into(), |j| j + "\n")
        }
        Format::Markdown => render_markdown(report),
        Format::Sarif => render_sarif(report),
        Format::Github => render_github(report),
    }
}

/// The report in `format` for stdout: the text report in colour on a colour terminal.
pub(crate) fn render_stdout(report: &Report, format: Format) -> String {
    match format {
        Format::Text if output::stdout_color() => render_text_styled(report, true),
        _ => render(report, format),
    }
}

/// The format `--out FILE` is written in: by the extension (`.json`, `.sarif`, `.md`), so
/// that `--out arev.json` next to a text report on stdout is JSON; else `--format`.
pub(crate) fn out_format(path: &Path, format: Format) -> Format {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("json") => Format::Json,
        Some("sarif") => Format::Sarif,
        Some("md" | "markdown") => Format::Markdown,
        _ => format,
    }
}

/// The report in `format`: the run dir's Markdown when `written` holds it.
fn render_reusing<'a>(
    report: &Report,
    format: Format,
    written: Option<&'a Written>,
) -> Cow<'a, str> {
    match (format, written) {
        (Format::Markdown, Some(w)) => Cow::Borrowed(&w.markdown),
        _ => Cow::Owned(render(report, format)),
    }
}

/// Print the report on stdout and write `--out` / `--sarif` / `--markdown`. JSON the run dir
/// holds (report.json) is copied from there, not serialized again.
pub(crate) fn emit(report: &Report, to: &Emit<'_>) -> Result<(), ExpectedError> {
    let json_file = to.written.map(|w| w.json.as_path());
    // stdout's rendering, made once (and not at all when report.json is printed).
    let mut rendered: Option<Cow<'_, str>> = None;
    for (path, format) in [
        (
            to.out,
            to.out.map_or(to.format, |p| out_format(p, to.format)),
        ),
        (to.sarif, Format::Sarif),
        (to.markdown, Format::Markdown),
    ] {
        let Some(p) = path else { continue };
        if let (Format::Json, Some(src)) = (format, json_file) {
            copy_atomic(src, p).map_err(|e| ExpectedError::write(p, e))?;
            continue;
        }
        let text = if format == to.format {
            rendered
                .get_or_insert_with(|| render_reusing(report, format, to.written))
                .clone()
        } else {
            render_reusing(report, format, to.written)
        };
        write_atomic(p, text.as_bytes()).map_err(|e| ExpectedError::write(p, e))?;
    }
    match json_file.filter(|_| to.format == Format::Json) {
        Some(src) if output::report_file(src).is_ok() => {}
        // Colour on a terminal: never the rendering written to the files above.
        _ if to.format == Format::Text && output::stdout_color() => {
            output::report(&render_text_styled(report, true))
        }
        _ => output::report(
            &rendered.unwrap_or_else(|| render_reusing(report, to.format, to.written)),
        ),
    }
    Ok(())
}

/// docs/architecture.md §4.2: aborted → 3, interrupted → 130, a confirmed finding at/above
/// `fail_on` → 1, else 0.
pub(crate) fn verdict(report: &Report, fail_on: FailOn) -> i32 {
    verdict_without(report, fail_on, &std::collections::BTreeSet::new())
}

/// [`verdict`], the findings whose fingerprint is in `dismissed` (dismissed on the pull
/// request by someone allowed to) not counting.
pub(crate) fn verdict_without(
    report: &Report,
    fail_on: FailOn,
    dismissed: &std::collections::BTreeSet<String>,
) -> i32 {
    match report.status {
        RunStatus::Aborted => exit_codes::ABORTED,
        RunStatus::Interrupted | RunStatus::Running => exit_codes::INTERRUPTED,
        // An empty run can still hold findings: changes it could not review.
        RunStatus::Complete | RunStatus::Empty => {
            // `gating`: suppressed findings never count; with --only-new, only new and
            // updated ones do.
            if report
                .gating()
                .any(|f| fail_on.fails(f.severity) && !dismissed.contains(&f.fingerprint))
            {
                exit_codes::FINDINGS
            } else {
                exit_codes::OK
            }
        }
    }
}

/// The current directory (a usage error if it cannot be read).
pub(crate) fn cwd() -> Result<PathBuf, ExpectedError> {
    std::env::current_dir().map_err(ExpectedError::os("cannot read the current directory"))
}

/// The layered config of the repo containing `cwd` (for the runs base and fail-on default).
pub(crate) fn repo_config(cwd: &Path) -> Result<(PathBuf, crate::config::Settings), ExpectedError> {
    let (root, _) = crate::resolve::discover_root(cwd);
    let (config, _) = load(&ConfigSources::discover(&root, None))?;
    Ok((root, config))
}

/// The `fail_on` of the trusted configuration layers only (embedded defaults, the user's
/// config, `AREV_FAIL_ON`): for a verdict of a run that recorded no gate. The repository's
/// `arev.toml` is left out: the change under review controls it (docs/trust.md).
pub(crate) fn trusted_fail_on(cwd: &Path) -> Result<FailOn, ExpectedError> {
    let (root, _) = crate::resolve::discover_root(cwd);
    let mut sources = ConfigSources::discover(&root, None);
    sources.repo_file = None;
    sources.repo_text = None;
    Ok(load(&sources)?.0.review.fail_on)
}

/// `--run-dir DIR`, else the configured `[run] dir`, else `<repo>/.arev/runs`.
pub(crate) fn runs_base(cwd: &Path, flag: Option<&Path>) -> Result<PathBuf, ExpectedError> {
    if let Some(d) = flag {
        return Ok(cwd.join(d));
    }
    let (root, config) = repo_config(cwd)?;
    Ok(match config.run.dir.as_str() {
        "" => crate::store::default_runs_base(&root),
        d if Path::new(d).is_absolute() => PathBuf::from(d),
        d => root.join(d),
    })
}

/// The run dir `run` names (relative to `cwd`): a directory, else a run id or a unique prefix
/// of one under the runs base (`--run-dir`, else the repository's).
pub(crate) fn named_run_dir(
    cwd: &Path,
    run: &str,
    run_dir: Option<&Path>,
) -> Result<PathBuf, ExpectedError> {
    let direct = cwd.join(run);
    if direct.is_dir() {
        return Ok(direct);
    }
    let base = runs_base(cwd, run_dir)?;
    Ok(crate::store::find_run(run, &base)?)
}

/// The report `run` names: a report.json file (e.g. one copied out of its run dir with
/// `--out arev.json`, or `arev merge`'s), else the report of [`named_run_dir`].
pub(crate) fn named_report(
    cwd: &Path,
    run: &str,
    run_dir: Option<&Path>,
) -> Result<crate::report::Report, ExpectedError> {
    let direct = cwd.join(run);
    let loaded = if direct.is_file() {
        crate::store::load_report_file(&direct)
    } else {
        crate::store::load_report(&named_run_dir(cwd, run, run_dir)?)
    };
    Ok(loaded?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_format_follows_the_extension() {
        let f = |p: &str, fmt| out_format(Path::new(p), fmt);
        assert_eq!(f("arev.json", Format::Text), Format::Json);
        assert_eq!(f("a/arev.SARIF", Format::Text), Format::Sarif);
        assert_eq!(f("r.md", Format::Json), Format::Markdown);
        assert_eq!(f("r.txt", Format::Json), Format::Json);
        assert_eq!(f("annotations", Format::Github), Format::Github);
    }
}

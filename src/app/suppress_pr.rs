//! `arev eval dispositions` (counts over pull requests) and `arev suppress --from-pr N`:
//! the dismissals on a pull request's arev threads (read from
//! the forge like a publish reads them) appended to `.arev/suppressions.toml`, each with its
//! reason and who dismissed it, for the user to review and commit.

use super::emit::cwd;
use crate::cli::{EvalDispositionsArgs, ForgeArg, PrStateArg, SuppressArgs};
use crate::config::ConfigSources;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output;
use crate::publish::{
    dispositions, policy, process_env, settings, Forge, ListState, PublishFailed, Which, MAX_LISTED,
};
use crate::resolve::discover_root;
use crate::resolve::suppressions::{
    parse_suppressions, read_suppressions_file, render_entry, suppressions_path, NewEntry,
    SUPPRESSIONS_FILE,
};
use crate::store::write_atomic;
use chrono::NaiveDate;

/// The forge `--forge` names, else the one the environment is for.
fn forge_of(arg: Option<ForgeArg>) -> Forge {
    match arg {
        Some(ForgeArg::Github) => Forge::Github,
        Some(ForgeArg::Gitlab) => Forge::Gitlab,
        None if process_env("CI_PROJECT_ID").is_some()
            && process_env("GITHUB_REPOSITORY").is_none() =>
        {
            Forge::Gitlab
        }
        None => Forge::Github,
    }
}

pub(crate) fn from_pr(args: &SuppressArgs, pr: u64) -> Result<i32, ExpectedError> {
    let cwd = cwd()?;
    let (root, _) = discover_root(&cwd);
    if let Some(p) = args.config.as_deref().filter(|p| !p.is_file()) {
        return Err(ExpectedError::Usage(format!(
            "--config {}: no such file",
            p.display()
        )));
    }
    let (config, _) = crate::config::load(&ConfigSources::discover(&root, args.config.clone()))?;
    let expires = args
        .expires
        .as_deref()
        .map(|d| {
            NaiveDate::parse_from_str(d.trim(), "%Y-%m-%d").map_err(|_| {
                ExpectedError::Usage(format!("--expires {d}: not a date (YYYY-MM-DD)"))
            })
        })
        .transpose()?;
    let forge = forge_of(args.forge);
    let s = settings(forge, &process_env, Some(pr), Some(&root))?;
    let found =
        dispositions(s, policy()?, config.publish.dismiss_by).map_err(|source| PublishFailed {
            what: format!("reading #{pr} on {}", forge.as_str()),
            source,
            kept: String::new(),
        })?;
    let path = suppressions_path(&root);
    let mut text = match read_suppressions_file(&root)? {
        Some((_, bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        None => String::new(),
    };
    let known = parse_suppressions(SUPPRESSIONS_FILE, text.as_bytes(), NaiveDate::MIN)
        .map_err(crate::resolve::FixFirst)?;
    let mut added = 0;
    for d in &found {
        let x = &d.dismissal;
        if known.external.contains_key(&x.fingerprint) {
            output::note(&format!(
                "{} is already suppressed in {SUPPRESSIONS_FILE}",
                x.fingerprint
            ));
            continue;
        }
        let place = match d.line {
            Some(l) => format!("{}:{l}", d.path),
            None => d.path.clone(),
        };
        let entry = NewEntry {
            fingerprint: x.fingerprint.clone(),
            reason: format!(
                "{}: {} (dismissed by @{} on #{pr})",
                x.kind.as_str(),
                x.reason,
                x.by
            ),
            expires,
            about: format!("{place} — dismissed on {} #{pr}", forge.as_str()),
        };
        let more = render_entry(&text, &entry);
        text.push_str(&more);
        added += 1;
    }
    if added > 0 {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| ExpectedError::write(dir, e))?;
        }
        write_atomic(&path, text.as_bytes()).map_err(|e| ExpectedError::write(&path, e))?;
    }
    output::progress(&format!(
        "arev: {added} dismissal(s) of #{pr} exported to {}{}",
        path.display(),
        if added > 0 {
            format!("; review and commit it with `git add -f {SUPPRESSIONS_FILE}`")
        } else {
            String::new()
        }
    ));
    Ok(exit_codes::OK)
}

/// `arev eval dispositions github|gitlab [--pr N…]`: the table (or JSON) on stdout; the
/// pull requests counted on stderr.
pub(crate) fn dispositions_command(args: &EvalDispositionsArgs) -> Result<i32, ExpectedError> {
    let cwd = cwd()?;
    let (root, _) = discover_root(&cwd);
    if args.prs.len() > 100 {
        return Err(ExpectedError::Usage("at most 100 --pr".into()));
    }
    let (config, _) = crate::config::load(&ConfigSources::discover(&root, args.config.clone()))?;
    let forge = forge_of(Some(args.forge));
    let which = if args.prs.is_empty() {
        Which::Listed {
            state: match args.state {
                PrStateArg::All => ListState::All,
                PrStateArg::Open => ListState::Open,
                PrStateArg::Closed => ListState::Closed,
                PrStateArg::Merged => ListState::Merged,
            },
            limit: usize::try_from(args.limit).unwrap_or(MAX_LISTED),
        }
    } else {
        Which::Named(args.prs.clone())
    };
    let t = crate::publish::tally(forge, &which, &root, policy()?, config.publish.dismiss_by)?;
    let listed: Vec<String> = t.prs.iter().map(|n| format!("#{n}")).collect();
    output::progress(&format!(
        "arev: {} {} counted{}{}",
        t.prs.len(),
        match forge {
            Forge::Github => "pull request(s)",
            Forge::Gitlab => "merge request(s)",
        },
        if listed.is_empty() { "" } else { ": " },
        listed.join(" ")
    ));
    if args.json {
        output::report(&output::json_string(&t.rows, true).unwrap_or_default());
    } else {
        output::report(crate::publish::render_tally(&t.rows).trim_end());
    }
    Ok(exit_codes::OK)
}

//! `arev suppress <RUN|REPORT.json> <FINDING_ID> --reason "…"`: append a suppression of a
//! finished run's finding to the repository's `.arev/suppressions.toml`.

use super::emit::{cwd, named_report};
use crate::cli::SuppressArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output;
use crate::resolve::discover_root;
use crate::resolve::suppressions::{
    parse_suppressions, read_suppressions_file, render_entry, suppressions_path, NewEntry,
    SUPPRESSIONS_FILE,
};
use crate::store::write_atomic;
use chrono::NaiveDate;

pub(crate) fn suppress_command(args: &SuppressArgs) -> Result<i32, ExpectedError> {
    if let Some(pr) = args.from_pr {
        return super::suppress_pr::from_pr(args, pr);
    }
    let cwd = cwd()?;
    let (Some(run), Some(finding), Some(reason)) = (&args.run, &args.finding, &args.reason) else {
        return Err(ExpectedError::Usage(
            "arev suppress needs RUN, FINDING_ID and --reason (or --from-pr N)".into(),
        ));
    };
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(ExpectedError::Usage(
            "--reason is empty: a suppression must say why".into(),
        ));
    }
    let expires = args
        .expires
        .as_deref()
        .map(|d| {
            NaiveDate::parse_from_str(d.trim(), "%Y-%m-%d").map_err(|_| {
                ExpectedError::Usage(format!("--expires {d}: not a date (YYYY-MM-DD)"))
            })
        })
        .transpose()?;
    let report = named_report(&cwd, run, args.run_dir.as_deref())?;
    let f = report.find_finding(finding)?;
    let (root, _) = discover_root(&cwd);
    let path = suppressions_path(&root);
    let existing = match read_suppressions_file(&root)? {
        Some((_, bytes)) => {
            // Every entry, expired or not, must be sound before one is added.
            let set = parse_suppressions(SUPPRESSIONS_FILE, &bytes, NaiveDate::MIN)
                .map_err(crate::resolve::FixFirst)?;
            if let Some(e) = set.external.get(&f.fingerprint) {
                return Err(ExpectedError::Usage(format!(
                    "{} is already suppressed in {}",
                    f.fingerprint, e.source
                )));
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        None => String::new(),
    };
    let place = match (&f.file, f.line) {
        (Some(p), Some(l)) => format!("{p}:{l}"),
        (Some(p), None) => p.clone(),
        _ => "(target-wide)".into(),
    };
    let entry = NewEntry {
        fingerprint: f.fingerprint.clone(),
        reason: reason.to_string(),
        expires,
        about: format!(
            "{place} {} — {} (run {} {})",
            f.category, f.description, report.run_id, f.id
        ),
    };
    let text = format!("{existing}{}", render_entry(&existing, &entry));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| ExpectedError::write(dir, e))?;
    }
    write_atomic(&path, text.as_bytes()).map_err(|e| ExpectedError::write(&path, e))?;
    output::progress(&format!(
        "arev: suppressed {} ({place} {}) in {}; arev keeps .arev/ out of `git status`: commit it with `git add -f {SUPPRESSIONS_FILE}`",
        f.fingerprint,
        f.category,
        path.display()
    ));
    Ok(exit_codes::OK)
}

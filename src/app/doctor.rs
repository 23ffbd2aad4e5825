//! `arev doctor`: the preflight's report (preflight::doctor) on stdout; exit 2 on a FAIL.

use crate::cli::DoctorArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::output;
use crate::preflight::{doctor, DoctorConfig, Level};

pub(crate) fn doctor_command(args: &DoctorArgs) -> Result<i32, ExpectedError> {
    let cwd =
        std::env::current_dir().map_err(ExpectedError::os("cannot read the current directory"))?;
    let checks = doctor(
        &cwd,
        DoctorConfig {
            explicit: args.config.clone(),
            repo_config: args.repo_config.map(Into::into),
            base: args.base.clone(),
        },
    );
    let mut text = format!("arev {}\n", crate::cli::long_version());
    for c in &checks {
        text.push_str(&format!("{} {}\n", c.level.tag(), c.line));
    }
    let failed = checks.iter().filter(|c| c.level == Level::Fail).count();
    if failed == 0 {
        text.push_str("ready: `arev run <file|diff|glob>` can review here\n");
    } else {
        text.push_str(&format!(
            "not ready: {failed} problem(s) above (FAIL), each with its fix\n"
        ));
    }
    output::report(&text);
    Ok(if failed == 0 {
        exit_codes::OK
    } else {
        exit_codes::USAGE
    })
}

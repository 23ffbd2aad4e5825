//! Parsing tests of the command line.

use super::*;
use clap::{CommandFactory, Parser};

#[test]
fn cli_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn parses_run() {
    let c = Cli::try_parse_from([
        "arev",
        "run",
        "src/**/*.rs",
        "a.rs",
        "--model",
        "sonnet",
        "--passes",
        "3",
        "--fail-on",
        "never",
        "--format",
        "json",
    ])
    .unwrap();
    let Command::Run(r) = c.command else { panic!() };
    assert_eq!(r.targets, ["src/**/*.rs", "a.rs"]);
    assert_eq!(r.model, Some(TierArg::Sonnet));
    assert_eq!(r.output.format, Format::Json);
    assert!(Cli::try_parse_from(["arev", "run"]).is_err());
    assert!(Cli::try_parse_from(["arev", "run", "x", "--passes", "0"]).is_err());
}

#[test]
fn publish_parses_and_run_publish_flags_combine() {
    let c = Cli::try_parse_from([
        "arev",
        "publish",
        "github",
        "run-1",
        "--pr",
        "7",
        "--dry-run",
    ])
    .unwrap();
    let Command::Publish(p) = c.command else {
        panic!()
    };
    assert_eq!(
        (p.forge, p.run.as_str(), p.pr, p.dry_run),
        (ForgeArg::Github, "run-1", Some(7), true)
    );
    assert!(Cli::try_parse_from(["arev", "publish", "bitbucket", "r"]).is_err());
    assert!(Cli::try_parse_from(["arev", "publish", "gitlab", "r", "--pr", "0"]).is_err());
    let c = Cli::try_parse_from([
        "arev",
        "run",
        "diff",
        "--publish",
        "gitlab",
        "--publish-strict",
    ])
    .unwrap();
    let Command::Run(r) = c.command else { panic!() };
    assert_eq!(
        (r.publish, r.publish_strict),
        (Some(ForgeArg::Gitlab), true)
    );
    assert!(Cli::try_parse_from(["arev", "run", "diff", "--publish-strict"]).is_err());
    assert!(
        Cli::try_parse_from(["arev", "run", "diff", "--publish", "github", "--iterate"]).is_err()
    );
}

#[test]
fn iterate_flags_require_iterate() {
    for extra in [
        &["--max-iterations", "3"][..],
        &["--quality-critical"][..],
        &["--verify", "true"][..],
    ] {
        let mut argv = vec!["arev", "run", "diff"];
        argv.extend_from_slice(extra);
        assert!(
            Cli::try_parse_from(&argv).is_err(),
            "{extra:?} without --iterate"
        );
        argv.push("--iterate");
        assert!(
            Cli::try_parse_from(&argv).is_ok(),
            "{extra:?} with --iterate"
        );
    }
    let c = Cli::try_parse_from(["arev", "run", "diff", "--iterate"]).unwrap();
    let Command::Run(r) = c.command else { panic!() };
    assert!(r.iterate);
    assert_eq!(r.max_iterations, None);
    assert!(
        Cli::try_parse_from(["arev", "run", "d", "--iterate", "--max-iterations", "0"]).is_err()
    );
}

//! Why a shell command's file accesses cannot be derived: the reason recorded with
//! `FileAccess::unknown`, which the tool gate refuses (fail closed).

/// A command line, or one of its commands, whose file accesses arev cannot derive.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Underivable {
    #[error("variable or command substitution (`$`)")]
    Substitution,
    #[error("command substitution (backticks)")]
    Backticks,
    #[error("subshell")]
    Subshell,
    #[error("brace expansion or group `{{`")]
    Brace,
    #[error("unquoted glob `{0}`")]
    Glob(char),
    #[error("`~` expansion")]
    Tilde,
    #[error("unterminated quote")]
    UnterminatedQuote,
    #[error("expansion inside double quotes")]
    QuotedExpansion,
    #[error("here-document")]
    HereDocument,
    #[error("process substitution")]
    ProcessSubstitution,
    #[error("descriptor duplication followed by a word")]
    DuplicationWord,
    #[error("redirection without a target")]
    RedirectionTarget,
    #[error("the assignment `{0}=…` can change what runs")]
    Assignment(String),
    #[error("`{0}` is not a system program (a path outside the system bin directories)")]
    NotSystemProgram(String),
    #[error("`cd` without a directory")]
    CdWithoutDirectory,
    #[error("`{0}` is not a command whose file accesses arev can derive")]
    UnknownProgram(String),
    #[error("`{prog} {opt}` reads a list of files arev cannot see")]
    FileList { prog: String, opt: String },
    #[error("`{prog} {opt}` runs other programs")]
    RunsPrograms { prog: String, opt: String },
    #[error("`rg -z` runs decompression programs")]
    Decompression,
    #[error("`sed -f`: a script file arev cannot see")]
    SedFile,
    #[error("the sed script `{script}` {problem}")]
    SedScript { script: String, problem: SedProblem },
}

/// What makes a sed script not provably inert.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum SedProblem {
    #[error("has an unterminated address")]
    UnterminatedAddress,
    #[error("has an unterminated `s`")]
    UnterminatedS,
    #[error("uses an unusual `s` delimiter")]
    UnusualDelimiter,
    #[error("writes a file or runs a command")]
    SubstitutionFlag,
    #[error("writes, reads or runs something")]
    Command,
    #[error("uses `{0}`, which arev does not derive")]
    Other(char),
}

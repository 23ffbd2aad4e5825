//! The `arev` binary: everything lives in the library; this only hands over the commit it
//! was built from (for `--version`) and sets the exit code.

fn main() {
    arev::cli::set_commit(option_env!("AREV_GIT_COMMIT"));
    std::process::exit(arev::main_impl());
}

//! arev's own memory and environment are not readable by the programs it runs: the process
//! makes itself non-dumpable at start (docs/trust.md, docs/architecture.md §15.3).

/// Make this process non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`, process-wide, as OpenSSH's
/// agent and others do): a same-uid process without `CAP_SYS_PTRACE` — a command an agent
/// runs, a `command` agent — can then neither read `/proc/<arev>/environ` (the CI secrets
/// arev was started with), `mem`, `maps`, `fd/` or `exe`, nor ptrace arev, and arev leaves
/// no core dump. Children are not affected: `execve` makes an ordinary program dumpable
/// again. What `/proc` no longer tells another arev about this one (`exe`) is handled by
/// `store::process`. A no-op off Linux.
pub fn become_undumpable() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    nix::sys::prctl::set_dumpable(false)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(target_os = "linux")]
    fn the_flag_is_cleared_and_reads_back() {
        // Process-wide and harmless for the test binary (no core dumps from it).
        super::become_undumpable().unwrap();
        assert!(!nix::sys::prctl::get_dumpable().unwrap());
    }
}

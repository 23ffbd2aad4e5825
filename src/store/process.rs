//! The process that runs a review, as meta.json records it: its pid and its start time (field
//! 22 of `/proc/<pid>/stat`, clock ticks since boot), so that a run whose process is gone — or
//! whose pid now belongs to another process — can be told from a live one. The record
//! (`ProcessId`) is defined in `records::meta`; asking `/proc` about it is done here.

use crate::records::ProcessId;

/// Whether the process recorded for a run still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    /// Exited (or a zombie), or its pid belongs to a process with another start time.
    Gone,
    /// Nothing recorded, or no `/proc` to ask (not Linux): never reported as gone.
    Unknown,
}

/// (state, start time) from the text of `/proc/<pid>/stat`. The command name may contain
/// spaces and parentheses: the fields start after its last `)`.
fn parse_stat(text: &str) -> Option<(char, u64)> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3, start time field 22 (1-based over the whole line).
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

fn stat(pid: &str) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
}

impl ProcessId {
    /// This process; None where `/proc` cannot tell its start time.
    pub fn current() -> Option<Self> {
        let (_, start_time) = parse_stat(&stat("self").ok()?)?;
        Some(Self {
            pid: std::process::id(),
            start_time,
        })
    }

    /// Whether this process still runs — and is arev: a pid and start time that name
    /// another program (a planted meta.json) are not an arev run, and are never signalled.
    pub fn liveness(&self) -> Liveness {
        match stat(&self.pid.to_string()) {
            Ok(text) => match parse_stat(&text) {
                Some(('Z' | 'X' | 'x', _)) => Liveness::Gone,
                Some((_, start)) if start != self.start_time => Liveness::Gone,
                Some(_) if !runs_arev(self.pid) => Liveness::Gone,
                Some(_) => Liveness::Alive,
                None => Liveness::Unknown,
            },
            // No such pid; but without /proc at all nothing can be said.
            Err(_) if std::path::Path::new("/proc/self/stat").exists() => Liveness::Gone,
            Err(_) => Liveness::Unknown,
        }
    }
}

/// Whether process `pid` runs an arev executable (`/proc/<pid>/exe`): one named `arev`, or
/// this very executable (a test binary, a renamed install). An arev is non-dumpable
/// (`process::become_undumpable`), so to another process of the same user without
/// `CAP_SYS_PTRACE` its `exe` link is denied: then its command name (`/proc/<pid>/stat`, the
/// executable's name cut to 15 bytes, readable by anyone) must be arev's — as strong as the
/// name check on `exe`. Unreadable otherwise: not proven arev.
fn runs_arev(pid: u32) -> bool {
    let mine = std::env::current_exe().ok().and_then(|me| file_name(&me));
    let exe = match std::fs::read_link(format!("/proc/{pid}/exe")) {
        Ok(exe) => exe,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return stat(&pid.to_string())
                .ok()
                .and_then(|text| command_name(&text).map(str::to_string))
                .is_some_and(|comm| is_arev_comm(&comm, mine.as_deref()));
        }
        Err(_) => return false,
    };
    let Some(theirs) = file_name(&exe) else {
        return false;
    };
    theirs == "arev" || mine.is_some_and(|mine| mine == theirs)
}

/// The last component of an executable's path (`/proc/<pid>/exe` marks a replaced one
/// ` (deleted)`).
fn file_name(p: &std::path::Path) -> Option<String> {
    p.file_name().map(|n| {
        n.to_string_lossy()
            .trim_end_matches(" (deleted)")
            .to_string()
    })
}

/// The command name of a `/proc/<pid>/stat` line: between the first `(` and the last `)`.
fn command_name(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once('(')?;
    let (name, _) = rest.rsplit_once(')')?;
    Some(name)
}

/// Whether a command name (the kernel keeps the first 15 bytes of the executable's name) is
/// `arev`'s or this executable's.
fn is_arev_comm(comm: &str, mine: Option<&str>) -> bool {
    let cut = |name: &str| -> Vec<u8> { name.as_bytes().iter().take(15).copied().collect() };
    comm == "arev" || mine.is_some_and(|m| cut(m) == comm.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_parsed_after_the_last_parenthesis() {
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 200 18446744073709551615";
        assert_eq!(parse_stat(line), Some(('S', 987654)));
        assert_eq!(parse_stat("4242 (x) Z"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn command_names_are_read_and_compared_as_the_kernel_cuts_them() {
        let line = "4242 (a (b) c) S 1 4242";
        assert_eq!(command_name(line), Some("a (b) c"));
        assert_eq!(command_name("4242 arev"), None);
        assert!(is_arev_comm("arev", None));
        assert!(!is_arev_comm("arevx", None));
        assert!(!is_arev_comm("sleep", Some("integration-0123456789abcdef")));
        assert!(is_arev_comm(
            "integration-012",
            Some("integration-0123456789abcdef")
        ));
    }

    #[test]
    fn this_process_is_alive_and_a_stale_identity_is_gone() {
        let Some(me) = ProcessId::current() else {
            return; // no /proc here: nothing to check
        };
        assert_eq!(me.pid, std::process::id());
        assert_eq!(me.liveness(), Liveness::Alive);
        let reused = ProcessId {
            start_time: me.start_time + 1,
            ..me
        };
        assert_eq!(reused.liveness(), Liveness::Gone, "same pid, other process");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let gone = ProcessId { pid, start_time: 0 };
        assert_eq!(gone.liveness(), Liveness::Gone);
    }

    #[test]
    fn another_program_with_the_right_pid_and_start_time_is_not_an_arev_run() {
        if ProcessId::current().is_none() {
            return;
        }
        let mut sleep = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = sleep.id();
        // `sleep` has exec'd once its stat names it.
        let mut start = None;
        for _ in 0..200 {
            let text = stat(&pid.to_string()).unwrap();
            if text.contains("(sleep)") {
                start = parse_stat(&text).map(|(_, s)| s);
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let planted = ProcessId {
            pid,
            start_time: start.unwrap(),
        };
        assert_eq!(planted.liveness(), Liveness::Gone, "a sleep is no arev run");
        sleep.kill().unwrap();
        sleep.wait().unwrap();
    }
}

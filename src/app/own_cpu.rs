//! Benchmark builds only (feature `fake-agent`): arev's own CPU, written where
//! `AREV_OWN_CPU_FILE` names, for the benches to read.
//!
//! `getrusage(RUSAGE_SELF)` sums every thread of this process, finished ones included, to
//! the microsecond, and none of the agents it ran. `/proc/<pid>/stat` read from outside
//! gives the same sum cut into 10 ms ticks, utime and stime each truncated: its means read
//! up to 10 ms low, which hides the differences the benches are there to show.

/// The variable naming the file to append `<user µs> <system µs>` to.
pub(crate) const OWN_CPU_FILE: &str = "AREV_OWN_CPU_FILE";

/// Append this process's CPU so far to `$AREV_OWN_CPU_FILE`, when it is set.
pub(crate) fn record() {
    if let Some(path) = std::env::var_os(OWN_CPU_FILE) {
        append_to(std::path::Path::new(&path));
    }
}

#[allow(unsafe_code)]
fn append_to(path: &std::path::Path) {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut u) != 0 {
            return;
        }
        u
    };
    let us = |t: libc::timeval| t.tv_sec * 1_000_000 + t.tv_usec;
    let line = format!("{} {}\n", us(usage.ru_utime), us(usage.ru_stime));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    if let Err(e) = written {
        crate::output::warn(&format!(
            "cannot write {OWN_CPU_FILE} ({}): {e}",
            path.display()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_this_processs_cpu_in_microseconds() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("cpu");
        // Burn a little CPU so that the sum cannot be zero.
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        append_to(&path);
        append_to(&path);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<(u64, u64)> = text
            .lines()
            .map(|l| {
                let (u, s) = l.split_once(' ').unwrap();
                (u.parse().unwrap(), s.parse().unwrap())
            })
            .collect();
        assert_eq!(lines.len(), 2, "appended, not replaced: {text}");
        assert!(lines[0].0 + lines[0].1 > 0);
        // Monotonic: the second reading is the first plus the time in between.
        assert!(lines[1].0 + lines[1].1 >= lines[0].0 + lines[0].1);
    }
}

//! The `arev` binary: everything lives in the library; this only tunes glibc's allocator
//! and sets the exit code.

fn main() {
    keep_freed_memory();
    arev::cli::set_commit(option_env!("AREV_GIT_COMMIT"));
    std::process::exit(arev::main_impl());
}

/// arev is a short-lived process that allocates and frees buffers of hundreds of KiB (agent
/// streams, prompts, report JSON). With glibc's defaults each of those gets fresh pages from
/// the kernel (`mmap` above 128 KiB, the heap trimmed on free), and every fresh page costs a
/// fault and a zeroing. Here blocks up to 32 MiB come from the heap, which is trimmed only
/// above 128 MiB, in one arena (the worker threads' frees stay reusable by the main thread):
/// a 3 × 1,000-finding round takes 3,506 page faults instead of mimalloc's 5,777 (README,
/// Performance). Bigger blocks (a huge diff) are still mapped and unmapped.
#[allow(unsafe_code)]
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 20);
    }
}

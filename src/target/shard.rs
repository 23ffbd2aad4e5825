//! `--shard i/n` (docs/architecture.md §12.4): the deterministic partition of a manifest by
//! path hash, and the shard's own pinned target (its slice of the files), with the FULL
//! manifest's identity kept.
//!
//! Partition rule (stable, documented in docs/ci-and-publishing.md): order the manifest's files by
//! `sha256("arev-shard-v1\0" + path)` (ties broken by path), then deal them out round-robin:
//! the k-th file in that order (0-based) belongs to shard `k % n + 1`. Every file lands in
//! exactly one shard, shard sizes differ by at most one, and the slice depends only on the
//! path list and `n` — so independent CI jobs that pin the same manifest agree on it.

use super::brief::{self, BRIEF_FILES};
use super::scan::{manifest_digest, read_regular, REPIN_MAX_FILE_BYTES};
use super::{Artefact, PinnedTarget, ShardError, TargetError, TargetKind};
pub use crate::records::target::ShardInfo;
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// `--shard i/n`: this job reviews slice `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShardSpec {
    pub index: u32,
    pub count: u32,
}

/// Most shards a manifest may be split into.
pub const MAX_SHARDS: u32 = 1024;

impl FromStr for ShardSpec {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Self, ShardError> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| ShardError::NotAFraction(s.to_string()))?;
        let parse = |x: &str, what: &'static str| {
            x.trim().parse::<u32>().map_err(|_| ShardError::NotANumber {
                spec: s.to_string(),
                what,
                text: x.to_string(),
            })
        };
        Self::new(parse(i, "index")?, parse(n, "count")?).map_err(|e| ShardError::Spec {
            spec: s.to_string(),
            source: Box::new(e),
        })
    }
}

impl ShardSpec {
    /// Shard `index` of `count`, checked: 1 ≤ count ≤ [`MAX_SHARDS`], 1 ≤ index ≤ count.
    /// Every place a shard comes from (the flag, a report read by `arev merge`) goes
    /// through here.
    pub fn new(index: u32, count: u32) -> Result<Self, ShardError> {
        if count == 0 || count > MAX_SHARDS {
            return Err(ShardError::Count {
                count,
                max: MAX_SHARDS,
            });
        }
        if index == 0 || index > count {
            return Err(ShardError::Index { index, count });
        }
        Ok(Self { index, count })
    }
}

impl fmt::Display for ShardSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The shard key of a path: the first 8 bytes of `sha256("arev-shard-v1\0" + path)`.
fn key(path: &str) -> u64 {
    let d = Sha256::new()
        .chain_update(b"arev-shard-v1\0")
        .chain_update(path.as_bytes())
        .finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_be_bytes(b)
}

/// The 1-based shard of every path (same order as `paths`) for `count` shards. Pure.
pub fn partition(paths: &[&str], count: u32) -> Vec<u32> {
    let count = count.max(1);
    let mut order: Vec<(u64, &str, usize)> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| (key(p), *p, i))
        .collect();
    order.sort_unstable();
    let mut out = vec![0; paths.len()];
    for (k, (_, _, i)) in order.into_iter().enumerate() {
        out[i] = (k as u32) % count + 1;
    }
    out
}

/// Restrict a pinned manifest target to shard `spec`: the slice's files, its own
/// manifest.txt / TARGET_SHA / brief, and the `ShardInfo` for the report. Skipped files stay
/// listed (they are the same for every shard). Files of the slice are re-read only to
/// rebuild the brief, which must not name files outside the slice.
pub fn apply_shard(
    target: PinnedTarget,
    spec: ShardSpec,
) -> Result<(PinnedTarget, ShardInfo), TargetError> {
    if target.kind != TargetKind::Manifest {
        return Err(TargetError::ShardNeedsManifest(target.kind.as_str()));
    }
    let paths: Vec<&str> = target.files.iter().map(|f| f.path.as_str()).collect();
    let slots = partition(&paths, spec.count);
    let info_files: Vec<String> = target
        .files
        .iter()
        .zip(&slots)
        .filter(|(_, s)| **s == spec.index)
        .map(|(f, _)| f.path.clone())
        .collect();
    let info = ShardInfo {
        index: spec.index,
        count: spec.count,
        manifest_sha256: target.sha256.clone(),
        manifest_files: paths.iter().map(|p| (*p).to_owned()).collect(),
        files: info_files,
    };
    let files: Vec<_> = target
        .files
        .iter()
        .zip(&slots)
        .filter(|(_, s)| **s == spec.index)
        .map(|(f, _)| f.clone())
        .collect();
    Ok((restrict_manifest(target, files), info))
}

/// A pinned manifest restricted to `files` (a subset of its files, in manifest order): its
/// own manifest.txt, TARGET_SHA and brief; skipped files stay listed. Files of the subset
/// are re-read only to rebuild the brief, which must not name files outside it. Shared by
/// `--shard` and `--incremental`.
pub(super) fn restrict_manifest(
    target: PinnedTarget,
    files: Vec<super::TargetFile>,
) -> PinnedTarget {
    let sha256 = manifest_digest(files.iter().map(|f| (f.sha256.as_str(), f.path.as_str())));
    let mut bytes = Vec::new();
    for f in &files {
        bytes.extend_from_slice(f.path.as_bytes());
        bytes.push(b'\n');
    }
    let items: Vec<(String, Vec<String>)> = files
        .iter()
        .take(BRIEF_FILES)
        .filter_map(|f| {
            let bytes = read_regular(&target.root, &f.path, REPIN_MAX_FILE_BYTES).ok()?;
            let text = String::from_utf8(bytes).ok()?;
            Some((f.path.clone(), brief::code_items(&text)))
        })
        .collect();
    let brief = if files.is_empty() {
        String::new()
    } else {
        brief::code_brief(items.iter().map(|(p, it)| (p.as_str(), it.as_slice())))
    };
    let measured_lines = files.iter().map(|f| u64::from(f.lines)).sum();
    PinnedTarget {
        artefact: Some(Artefact::in_memory("manifest.txt", bytes)),
        sha256,
        files,
        measured_lines,
        brief,
        ..target
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("src/m{i}/file_{i}.rs")).collect()
    }

    #[test]
    fn every_file_lands_in_exactly_one_shard_for_n_1_to_16() {
        for files in [0usize, 1, 2, 7, 16, 17, 100, 257] {
            let owned = paths(files);
            let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
            for n in 1..=16u32 {
                let slots = partition(&refs, n);
                assert_eq!(slots.len(), files);
                let mut sizes = vec![0usize; n as usize];
                for s in &slots {
                    assert!((1..=n).contains(s), "shard {s} of {n}");
                    sizes[*s as usize - 1] += 1;
                }
                // Taking each shard's slice separately covers every file exactly once.
                let mut seen = vec![0u32; files];
                for i in 1..=n {
                    for (k, s) in slots.iter().enumerate() {
                        if *s == i {
                            seen[k] += 1;
                        }
                    }
                }
                assert!(seen.iter().all(|c| *c == 1), "n={n} files={files}");
                let (min, max) = (sizes.iter().min(), sizes.iter().max());
                assert!(max.unwrap() - min.unwrap() <= 1, "balanced: {sizes:?}");
            }
        }
    }

    #[test]
    fn partition_is_deterministic_and_independent_of_input_order() {
        let owned = paths(40);
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        let a = partition(&refs, 5);
        let mut rev = refs.clone();
        rev.reverse();
        let mut b = partition(&rev, 5);
        b.reverse();
        assert_eq!(a, b);
        assert_eq!(a, partition(&refs, 5));
        // Not simply positional: the hash order differs from the path order.
        let positional: Vec<u32> = (0..40).map(|k| k % 5 + 1).collect();
        assert_ne!(a, positional);
    }

    #[test]
    fn parses_i_of_n() {
        assert_eq!(
            "3/8".parse::<ShardSpec>(),
            Ok(ShardSpec { index: 3, count: 8 })
        );
        assert_eq!(
            "1/1".parse::<ShardSpec>(),
            Ok(ShardSpec { index: 1, count: 1 })
        );
        for bad in ["0/3", "4/3", "3", "a/3", "1/0", "-1/2", "1/2/3", ""] {
            assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
        }
    }
}

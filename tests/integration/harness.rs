//! Test builder: a temporary git repo, the fake agent first on PATH as `claude`, and `arev`.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The value of `flag` in `argv`: `--flag=<v>` (how arev passes values) or `--flag <v>`.
pub fn flag_value<S: AsRef<str>>(argv: &[S], flag: &str) -> Option<String> {
    let prefix = format!("{flag}=");
    argv.iter()
        .find_map(|a| a.as_ref().strip_prefix(&prefix).map(str::to_string))
        .or_else(|| {
            let i = argv.iter().position(|a| a.as_ref() == flag)?;
            argv.get(i + 1).map(|v| v.as_ref().to_string())
        })
}

/// A temporary git repository with one commit.
pub struct TestRepo {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    /// Scratch space outside the repo (fake bin dir, HOME, scripts, logs).
    pub scratch: PathBuf,
}

impl TestRepo {
    /// A repo with `src/lib.rs` (5 lines) committed.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        let root = base.join("repo");
        let scratch = base.join("scratch");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(scratch.join("home")).unwrap();
        let r = Self {
            _dir: dir,
            root,
            scratch,
        };
        r.git(&["init", "-q", "-b", "main"]);
        r.git(&["config", "user.email", "t@example.com"]);
        r.git(&["config", "user.name", "T"]);
        r.git(&["config", "commit.gpgsign", "false"]);
        r.write("src/lib.rs", LIB_RS);
        r.write(".gitignore", "ignored.txt\n");
        r.commit("init");
        r
    }

    pub fn write(&self, rel: &str, content: &str) -> &Self {
        self.write_bytes(rel, content.as_bytes())
    }

    pub fn write_bytes(&self, rel: &str, content: &[u8]) -> &Self {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
        self
    }

    pub fn commit(&self, msg: &str) -> &Self {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", msg]);
        self
    }

    pub fn git(&self, args: &[&str]) -> String {
        let o = Command::new("git")
            .args(args)
            .current_dir(&self.root)
            .output()
            .expect("git");
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// A new, empty directory under the scratch space (each invocation's verdict cache).
    pub fn fresh_cache_dir(&self) -> PathBuf {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = self.scratch.join("caches").join(n.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A fake-agent gate (its step's `wait_for`) that opens once arev has recorded round
    /// `round`'s Adversary (its `outcome.json` written, in the same step as its answer is
    /// taken): a pass held by it answers after the Adversary, so the Adversary is never
    /// cancelled for having nothing to judge (docs/contracts.md §7). Only for a repository
    /// with one run: the gate matches any run dir.
    pub fn adversary_recorded(&self, round: u32) -> Value {
        let path = self.root.join(format!(
            ".arev/runs/*/agents/r{round}/adversary/outcome.json"
        ));
        serde_json::json!({"path": path.display().to_string()})
    }

    /// A fake-agent gate that opens once the fake log shows a dispatch of `role` in
    /// `round` started: a pass held by it answers while that agent runs.
    pub fn started(&self, role: &str, round: u32) -> Value {
        serde_json::json!({
            "path": self.scratch.join("fake.log").display().to_string(),
            "contains": format!("\"role\":\"{role}\",\"round\":{round},"),
        })
    }

    /// `arev` in this repo with the fake agent as `claude`.
    pub fn arev(&self) -> Arev<'_> {
        Arev {
            repo: self,
            args: vec![],
            env: vec![],
            script: None,
            cwd: self.root.clone(),
            fake_on_path: true,
            without_ptrace: false,
            nofile: None,
        }
    }
}

/// The words that run a program as an ordinary user's process: with no capability (under
/// root, through `setpriv`, so that neither `CAP_SYS_PTRACE` nor a larger capability set
/// than its peers decides what `/proc` shows; as any other user, nothing). Such a process
/// cannot read a non-dumpable process's `/proc/<pid>/environ` or `exe`.
pub fn without_ptrace() -> Vec<String> {
    // `/proc/self` belongs to the effective user.
    let root =
        std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    if root {
        ["setpriv", "--inh-caps=-all", "--bounding-set=-all", "--"]
            .iter()
            .map(|s| (*s).to_string())
            .collect()
    } else {
        vec![]
    }
}

/// What the user sees of their repository: every file outside `.git/` and `.arev/` with
/// its bytes, `.git/index` bytes, `.git/HEAD` bytes and the commit it resolves to, and
/// every branch except `arev/iterate/*` with its commit.
#[derive(Debug, PartialEq, Eq)]
pub struct RepoState {
    pub files: BTreeMap<String, Vec<u8>>,
    pub index: Vec<u8>,
    pub head: Vec<u8>,
    pub head_commit: String,
    pub branches: Vec<String>,
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if rel == ".git" || rel == ".arev" {
            continue;
        }
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            walk(root, &p, out);
        } else if ft.is_symlink() {
            out.insert(
                rel,
                std::fs::read_link(&p)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
                    .into_bytes(),
            );
        } else {
            out.insert(rel, std::fs::read(&p).unwrap());
        }
    }
}

impl TestRepo {
    /// Snapshot the user's working tree, index, HEAD and branches (read-only: no git
    /// command that could refresh the index).
    pub fn state(&self) -> RepoState {
        let mut files = BTreeMap::new();
        walk(&self.root, &self.root, &mut files);
        let branches = self
            .git(&[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/heads",
            ])
            .lines()
            .filter(|l| !l.starts_with("refs/heads/arev/iterate/"))
            .map(String::from)
            .collect();
        RepoState {
            files,
            index: std::fs::read(self.root.join(".git/index")).unwrap_or_default(),
            head: std::fs::read(self.root.join(".git/HEAD")).unwrap(),
            head_commit: self.git(&["rev-parse", "HEAD"]).trim().to_string(),
            branches,
        }
    }

    /// Assert the user's working tree, index, HEAD and branches are byte-identical to `before`.
    pub fn assert_untouched(&self, before: &RepoState) {
        let now = self.state();
        assert_eq!(
            now.files.keys().collect::<Vec<_>>(),
            before.files.keys().collect::<Vec<_>>(),
            "working tree file list changed"
        );
        for (k, v) in &before.files {
            assert!(now.files[k] == *v, "working tree file {k} changed");
        }
        assert!(now.index == before.index, ".git/index changed");
        assert_eq!(now.head, before.head, ".git/HEAD changed");
        assert_eq!(now.head_commit, before.head_commit, "HEAD commit changed");
        assert_eq!(now.branches, before.branches, "branches changed");
    }
}

pub const LIB_RS: &str =
    "pub fn parse(s: &str) -> u32 {\n    s.parse().unwrap()\n}\n\npub fn id(x: u32) -> u32 { x }\n";

/// One `arev` invocation being built.
pub struct Arev<'a> {
    repo: &'a TestRepo,
    args: Vec<String>,
    env: Vec<(String, String)>,
    script: Option<Value>,
    cwd: PathBuf,
    fake_on_path: bool,
    without_ptrace: bool,
    /// `RLIMIT_NOFILE` of arev (through `prlimit`), when set.
    nofile: Option<u64>,
}

impl Arev<'_> {
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|s| s.to_string()));
        self
    }

    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }

    /// The fake agent's script (`{"steps":[…]}`).
    pub fn script(mut self, script: Value) -> Self {
        self.script = Some(script);
        self
    }

    pub fn cwd(mut self, dir: PathBuf) -> Self {
        self.cwd = dir;
        self
    }

    /// Run arev as an ordinary user's process ([`without_ptrace`]), and so every agent it
    /// starts: what `/proc` tells one such process about another is what it tells any user.
    pub fn without_ptrace(mut self) -> Self {
        self.without_ptrace = true;
        self
    }

    /// Run arev with at most `n` open descriptors (soft and hard, through `prlimit`).
    pub fn nofile(mut self, n: u64) -> Self {
        self.nofile = Some(n);
        self
    }

    /// Leave `claude` off PATH.
    pub fn without_agent(mut self) -> Self {
        self.fake_on_path = false;
        self
    }

    /// The verdict cache of this invocation: a fresh one, or for `arev hook` the one all
    /// hook invocations in this repository share.
    fn cache_dir(&self) -> PathBuf {
        if self.args.first().is_some_and(|a| a == "hook") {
            let dir = self.repo.scratch.join("hook-cache");
            std::fs::create_dir_all(&dir).unwrap();
            dir
        } else {
            self.repo.fresh_cache_dir()
        }
    }

    pub fn command(&self) -> Command {
        let bin = self.repo.scratch.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let link = bin.join("claude");
        if self.fake_on_path && !link.exists() {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arev-fake-agent"), &link).unwrap();
        }
        if !self.fake_on_path && link.exists() {
            std::fs::remove_file(&link).unwrap();
        }
        let script = self.repo.scratch.join("script.json");
        let body = self
            .script
            .clone()
            .unwrap_or_else(|| serde_json::json!({"steps": []}));
        std::fs::write(&script, body.to_string()).unwrap();
        let mut wrap = if self.without_ptrace {
            without_ptrace()
        } else {
            vec![]
        };
        if let Some(n) = self.nofile {
            wrap.splice(0..0, ["prlimit".to_string(), format!("--nofile={n}")]);
        }
        let mut c = match wrap.split_first() {
            Some((program, rest)) => {
                let mut c = Command::new(program);
                c.args(rest).arg(env!("CARGO_BIN_EXE_arev"));
                c
            }
            None => Command::new(env!("CARGO_BIN_EXE_arev")),
        };
        c.args(&self.args)
            .current_dir(&self.cwd)
            .env_clear()
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
            )
            .env("HOME", self.repo.scratch.join("home"))
            // A fresh, empty verdict cache per invocation: a test that runs the same review
            // twice (with another fake script) must review twice. Tests of the cache share
            // one by setting XDG_CACHE_HOME themselves. Hooks share the repository's one,
            // as the hooks of a Claude Code session share the user's cache.
            .env("XDG_CACHE_HOME", self.cache_dir())
            .env("AREV_FAKE_SCRIPT", &script)
            .env("AREV_FAKE_LOG", self.repo.scratch.join("fake.log"))
            .stdin(Stdio::null());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    pub fn run(&self) -> Run {
        let start = std::time::Instant::now();
        let out: Output = self.command().output().expect("run arev");
        Run::new(self.repo, out, start.elapsed())
    }
}

/// The result of one `arev` invocation.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: std::time::Duration,
    pub runs_base: PathBuf,
    pub log_path: PathBuf,
}

impl Run {
    pub fn new(repo: &TestRepo, out: Output, elapsed: std::time::Duration) -> Self {
        Self {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            elapsed,
            runs_base: repo.root.join(".arev/runs"),
            log_path: repo.scratch.join("fake.log"),
        }
    }

    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Every run dir under `.arev/runs`.
    pub fn run_dirs(&self) -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(&self.runs_base) else {
            return vec![];
        };
        let mut v: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
        v.sort();
        v
    }

    /// The one run dir this invocation made.
    pub fn run_dir(&self) -> PathBuf {
        let dirs = self.run_dirs();
        assert_eq!(
            dirs.len(),
            1,
            "expected one run dir, got {dirs:?}\n{}",
            self.stderr
        );
        dirs[0].clone()
    }

    pub fn json(&self, rel: &str) -> Value {
        let p = self.run_dir().join(rel);
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        serde_json::from_str(&text).unwrap()
    }

    pub fn meta(&self) -> Value {
        self.json("meta.json")
    }

    pub fn report(&self) -> Value {
        self.json("report.json")
    }

    /// Lines the fake agent logged (one per dispatch).
    pub fn fake_log(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log_path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// An Enthusiast step (every pass, every round) with one finding at src/lib.rs:2, for tests
/// of what the Adversary does: with nothing to judge, a still-running Adversary is
/// cancelled (docs/contracts.md §7), so its gates, timeouts and fallbacks need a finding to matter.
pub fn a_finding_to_judge() -> Value {
    serde_json::json!({"role": "enthusiast",
        "answer": {"findings": [finding("F1", "src/lib.rs", 2, "high", "logic")]}})
}

/// A valid finding at `file:line`.
pub fn finding(id: &str, file: &str, line: u32, severity: &str, category: &str) -> Value {
    serde_json::json!({
        "id": id, "severity": severity, "target_type": "code", "file": file, "line": line,
        "category": category, "description": format!("{category} defect"),
        "evidence": "s.parse().unwrap()", "source": "enthusiast", "prior_finding_id": null
    })
}

/// A ruling.
pub fn ruling(id: &str, file: &str, line: u32, sev: &str, winner: &str) -> Value {
    serde_json::json!({
        "finding_id": id, "file": file, "line": line, "target_type": "code",
        "final_severity": sev, "winner": winner, "resolution": "checked the code",
        "edit_instruction": if winner == "adversary" { Value::Null } else { Value::String(format!("{file}:{line} — replace \"unwrap()\" with \"?\"")) },
        "cites": []
    })
}

/// Process ids in process group `pgid` that are still alive (zombies excluded).
pub fn group_members(pgid: i64) -> Vec<i64> {
    let mut out = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i64>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2].parse::<i64>() == Ok(pgid) {
            out.push(pid);
        }
    }
    out
}

//! Distribution (SPEC §20): a fake release on loopback in the §20.1 layout
//! (`{base}/v{version}/arev-{target}.tar.gz` + `SHA256SUMS`), and `install.sh` against it —
//! the install, and the refusal of a bad checksum (nothing installed, non-zero exit).

use crate::background::{bind, Background};
use axum::http::{StatusCode, Uri};
use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// The version of this checkout (what install.sh and the launcher install by default).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The repository root (install.sh, bin/arev, action.yml).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// This machine's release target, as install.sh names it.
pub fn target() -> String {
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "macos" => format!("{arch}-apple-darwin"),
        _ => format!("{arch}-unknown-linux-musl"),
    }
}

/// A stand-in `arev` for a release archive: answers `--version` like arev (`arev <version>`)
/// and appends every other invocation's arguments, one per line, to `$AREV_STANDIN_LOG`.
pub fn standin_arev(dir: &Path, version: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("arev");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'arev {version} (commit 0123456789ab)'; exit 0; fi\n\
             if [ -n \"${{AREV_STANDIN_LOG:-}}\" ]; then for a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$AREV_STANDIN_LOG\"; echo --- >> \"$AREV_STANDIN_LOG\"; fi\n\
             echo \"stand-in arev {version}: $*\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// A release served on 127.0.0.1: `files` is the tree under `{base}`.
pub struct FakeRelease {
    /// `{base}`, for AREV_RELEASE_URL.
    pub url: String,
    pub files: PathBuf,
    requests: Arc<Mutex<Vec<String>>>,
    _server: Background,
}

impl FakeRelease {
    /// Serve `files` (an empty directory to fill with [`FakeRelease::publish`]).
    pub fn start(files: &Path) -> Self {
        std::fs::create_dir_all(files).unwrap();
        let requests = Arc::new(Mutex::new(vec![]));
        let (root, log) = (files.to_path_buf(), requests.clone());
        let app = axum::Router::new().fallback(move |uri: Uri| {
            let (root, log) = (root.clone(), log.clone());
            async move {
                log.lock().unwrap().push(uri.path().to_string());
                let rel = uri.path().trim_start_matches("/releases/");
                if rel.split('/').any(|c| c == ".." || c.is_empty()) {
                    return Err(StatusCode::NOT_FOUND);
                }
                std::fs::read(root.join(rel)).map_err(|_| StatusCode::NOT_FOUND)
            }
        });
        let (listener, addr) = bind();
        let server = Background::spawn("fake-release", listener, app);
        Self {
            url: format!("http://{addr}/releases"),
            files: files.to_path_buf(),
            requests,
            _server: server,
        }
    }

    /// Publish `binary` as release `version` for this machine's target: the archive with
    /// `arev` at its root, and SHA256SUMS (whose line for it is wrong when `bad_sum`).
    pub fn publish(&self, version: &str, binary: &Path, bad_sum: bool) {
        self.publish_staged(version, bad_sum, |arev| {
            std::fs::copy(binary, arev).unwrap();
        });
    }

    /// [`publish`](Self::publish) of an archive whose `arev` member `stage` makes (given its
    /// path in the staging directory): a symbolic link, a directory…
    pub fn publish_staged(&self, version: &str, bad_sum: bool, stage_arev: impl FnOnce(&Path)) {
        let dir = self.files.join(format!("v{version}"));
        let stage = self.files.join(format!(".stage-{version}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&stage).unwrap();
        stage_arev(&stage.join("arev"));
        let archive = format!("arev-{}.tar.gz", target());
        // gzip -1: a debug build of arev is ~170 MB.
        let ok = Command::new("sh")
            .arg("-c")
            .arg("tar -cf - -C \"$1\" arev | gzip -1 > \"$2\"")
            .arg("sh")
            .arg(&stage)
            .arg(dir.join(&archive))
            .status()
            .unwrap();
        assert!(ok.success());
        let mut sum = hex(&Sha256::digest(std::fs::read(dir.join(&archive)).unwrap()));
        if bad_sum {
            let first = if sum.starts_with('0') { "1" } else { "0" };
            sum.replace_range(..1, first);
        }
        std::fs::write(
            dir.join("SHA256SUMS"),
            format!(
                "{}  arev-other-target.tar.gz\n{sum}  {archive}\n",
                "ab".repeat(32)
            ),
        )
        .unwrap();
    }

    /// The paths requested so far.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `sh install.sh ARGS` with AREV_RELEASE_URL set, HOME at `home`, a minimal PATH.
pub fn install_sh(release: &FakeRelease, home: &Path, args: &[&str]) -> Output {
    std::fs::create_dir_all(home).unwrap();
    Command::new("sh")
        .arg(repo_root().join("install.sh"))
        .args(args)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .env("AREV_RELEASE_URL", &release.url)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn install_sh_installs_the_verified_release() {
    let tmp = tempfile::tempdir().unwrap();
    let release = FakeRelease::start(&tmp.path().join("release"));
    // The real binary of this build: what installs is an arev that works.
    release.publish(VERSION, Path::new(env!("CARGO_BIN_EXE_arev")), false);
    let home = tmp.path().join("home");
    let o = install_sh(&release, &home, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let installed = home.join(".local/bin/arev");
    let v = Command::new(&installed).arg("--version").output().unwrap();
    assert!(
        String::from_utf8_lossy(&v.stdout).starts_with(&format!("arev {VERSION}")),
        "{}",
        text(&v)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("installed arev {VERSION}")) && err.contains("is not on PATH"),
        "{err}"
    );
    assert_eq!(
        release.requests(),
        [
            format!("/releases/v{VERSION}/arev-{}.tar.gz", target()),
            format!("/releases/v{VERSION}/SHA256SUMS"),
        ]
    );
    let mode = std::fs::metadata(&installed).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[test]
fn install_sh_takes_to_and_version() {
    let tmp = tempfile::tempdir().unwrap();
    let release = FakeRelease::start(&tmp.path().join("release"));
    release.publish(
        "9.8.7",
        &standin_arev(&tmp.path().join("b"), "9.8.7"),
        false,
    );
    let to = tmp.path().join("opt dir/bin");
    let o = install_sh(
        &release,
        &tmp.path().join("home"),
        &["--to", to.to_str().unwrap(), "--version", "v9.8.7"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let v = Command::new(to.join("arev"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&v.stdout).starts_with("arev 9.8.7"));
    // A version that is not released: non-zero, nothing installed.
    let other = tmp.path().join("other");
    let o = install_sh(
        &release,
        &tmp.path().join("home"),
        &["--to", other.to_str().unwrap(), "--version", "1.2.3"],
    );
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot download"),
        "{}",
        text(&o)
    );
    assert!(!other.join("arev").exists());
    // Bad arguments.
    let o = install_sh(&release, &tmp.path().join("home"), &["--version", "1;rm"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a version"));
}

#[test]
fn install_sh_refuses_a_bad_checksum_and_installs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let release = FakeRelease::start(&tmp.path().join("release"));
    release.publish(VERSION, &standin_arev(&tmp.path().join("b"), VERSION), true);
    let to = tmp.path().join("bin");
    // An earlier arev stays as it was.
    std::fs::create_dir_all(&to).unwrap();
    std::fs::write(to.join("arev"), "old").unwrap();
    let o = install_sh(
        &release,
        &tmp.path().join("home"),
        &["--to", to.to_str().unwrap()],
    );
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("checksum mismatch"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_to_string(to.join("arev")).unwrap(), "old");
    let left: Vec<_> = std::fs::read_dir(&to).unwrap().collect();
    assert_eq!(left.len(), 1, "no temporary file left");
    // No SHA256SUMS line for the archive is a refusal too.
    std::fs::write(
        release.files.join(format!("v{VERSION}/SHA256SUMS")),
        format!("{}  arev-other.tar.gz\n", "ab".repeat(32)),
    )
    .unwrap();
    let o = install_sh(
        &release,
        &tmp.path().join("home"),
        &["--to", to.to_str().unwrap()],
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no line for"));
    assert_eq!(std::fs::read_to_string(to.join("arev")).unwrap(), "old");
}

/// install.sh installs this checkout's version by default.
#[test]
fn install_sh_default_version_is_the_crates() {
    let script = std::fs::read_to_string(repo_root().join("install.sh")).unwrap();
    assert!(
        script.contains(&format!("\nAREV_DEFAULT_VERSION=\"{VERSION}\"\n")),
        "install.sh's AREV_DEFAULT_VERSION must be Cargo.toml's {VERSION}"
    );
}

/// A checksum-valid archive whose `arev` is a symbolic link (to a file of the user's, or a
/// directory) installs nothing and touches nothing it points at: only a regular file is
/// taken (docs/trust.md).
#[test]
fn install_sh_refuses_an_arev_that_is_not_a_regular_file() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let release = FakeRelease::start(&tmp.path().join("release"));
    let home = tmp.path().join("home");
    let secret = home.join(".ssh/id_ed25519");
    std::fs::create_dir_all(secret.parent().unwrap()).unwrap();
    std::fs::write(&secret, "PRIVATE KEY").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let to = tmp.path().join("bin");
    let link_to = secret.clone();
    release.publish_staged(VERSION, false, move |arev| {
        std::os::unix::fs::symlink(&link_to, arev).unwrap();
    });
    let o = install_sh(&release, &home, &["--to", to.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("has no arev binary (a regular file) at its root: nothing installed"),
        "{}",
        text(&o)
    );
    assert!(!to.join("arev").exists(), "{}", text(&o));
    assert_eq!(
        std::fs::metadata(&secret).unwrap().permissions().mode() & 0o777,
        0o600,
        "the link's target was not chmod-ed"
    );
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "PRIVATE KEY");

    // A directory named arev: refused the same way.
    let release = FakeRelease::start(&tmp.path().join("release2"));
    release.publish_staged(VERSION, false, |arev| {
        std::fs::create_dir_all(arev.join("x")).unwrap();
    });
    let o = install_sh(&release, &home, &["--to", to.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("a regular file"),
        "{}",
        text(&o)
    );
    assert!(!to.join("arev").exists());
}

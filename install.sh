#!/bin/sh
# install.sh [--to DIR] [--version V]: install arev from its release archives (SPEC §20.2).
#
# Picks this machine's target, downloads {base}/v{V}/arev-{target}.tar.gz and
# {base}/v{V}/SHA256SUMS, checks the archive's sha256 against SHA256SUMS (a mismatch installs
# nothing and exits non-zero), and puts the `arev` binary into DIR (default ~/.local/bin).
# {base} is the project's GitHub releases download URL; AREV_RELEASE_URL overrides it (a
# mirror, or a fake release in tests). POSIX sh: also run as `sh install.sh`.
# Exit codes: 0 installed; 3 no such release could be downloaded; 1 anything else (nothing
# installed).
set -eu

# The repository whose releases this script installs, and the version it installs by
# default (this checkout's: a test keeps it equal to Cargo.toml's).
AREV_REPOSITORY="your-org/arev"
AREV_DEFAULT_VERSION="0.1.0"

say() { printf 'install.sh: %s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}

usage() {
  cat <<'EOF'
Usage: install.sh [--to DIR] [--version V]

Install arev from its release archives, verified against the release's SHA256SUMS.
  --to DIR       where the `arev` binary goes (default: ~/.local/bin)
  --version V    the release to install, e.g. 0.1.0 (default: this script's version)
Environment: AREV_RELEASE_URL overrides the releases download URL
(default https://github.com/<repository>/releases/download).
EOF
}

to=""
version="$AREV_DEFAULT_VERSION"
while [ $# -gt 0 ]; do
  case "$1" in
    --to)
      [ $# -ge 2 ] || die "--to needs a directory"
      to="$2"
      shift 2
      ;;
    --to=*)
      to="${1#--to=}"
      shift
      ;;
    --version)
      [ $# -ge 2 ] || die "--version needs a version (e.g. $AREV_DEFAULT_VERSION)"
      version="$2"
      shift 2
      ;;
    --version=*)
      version="${1#--version=}"
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      usage >&2
      die "unknown argument: $1"
      ;;
  esac
done
version="${version#v}"
case "$version" in
  '' | *[!0-9A-Za-z.+-]*) die "not a version: '$version' (e.g. $AREV_DEFAULT_VERSION)" ;;
esac
if [ -z "$to" ]; then
  [ -n "${HOME:-}" ] || die "HOME is not set: name the directory with --to DIR"
  to="$HOME/.local/bin"
fi

# The release target of this machine.
os="$(uname -s)"
arch="$(uname -m)"
case "$arch" in
  x86_64 | amd64) arch=x86_64 ;;
  aarch64 | arm64) arch=aarch64 ;;
  *) die "no release for the $arch architecture: build from source (cargo install --git …)" ;;
esac
case "$os" in
  Linux) target="$arch-unknown-linux-musl" ;;
  Darwin) target="$arch-apple-darwin" ;;
  *) die "no release for $os: build from source (cargo install --git …)" ;;
esac

base="${AREV_RELEASE_URL:-https://github.com/$AREV_REPOSITORY/releases/download}"
base="${base%/}"
archive="arev-$target.tar.gz"
url="$base/v$version"

# download URL FILE
download() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 2 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    die "neither curl nor wget is installed"
  fi
}

# sha256 FILE: the hex digest
sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    die "neither sha256sum nor shasum is installed: cannot verify the download"
  fi
}

tmp="$(mktemp -d "${TMPDIR:-/tmp}/arev-install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# No such release (or no network): exit 3, so that a caller can fall back to a source build;
# every other failure (a bad checksum above all) is exit 1.
no_release() {
  say "error: cannot download $1: no arev $version release for $target there"
  exit 3
}

say "downloading arev $version for $target from $url"
download "$url/$archive" "$tmp/$archive" || no_release "$url/$archive"
download "$url/SHA256SUMS" "$tmp/SHA256SUMS" || no_release "$url/SHA256SUMS"

# The line of SHA256SUMS naming the archive (`<sha256>  <name>`, or `*<name>` in binary mode).
expected="$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1; exit }' "$tmp/SHA256SUMS")"
[ -n "$expected" ] || die "SHA256SUMS has no line for $archive: nothing installed"
actual="$(sha256 "$tmp/$archive")"
if [ "$actual" != "$expected" ]; then
  die "checksum mismatch for $archive (expected $expected, got $actual): nothing installed"
fi

mkdir "$tmp/x"
# Only the `arev` member, and only as a regular file: a symbolic link (or a directory, a
# device) would make the chmod and the copy below act on whatever it points at.
tar -xzf "$tmp/$archive" -C "$tmp/x" arev || die "cannot unpack arev from $archive: nothing installed"
if [ -L "$tmp/x/arev" ] || [ ! -f "$tmp/x/arev" ]; then
  die "$archive has no arev binary (a regular file) at its root: nothing installed"
fi
chmod 755 "$tmp/x/arev"

mkdir -p "$to" || die "cannot create $to"
# Copied next to its place, then renamed: a running arev is never overwritten in place.
cp "$tmp/x/arev" "$to/.arev.install.$$" || die "cannot write to $to"
mv -f "$to/.arev.install.$$" "$to/arev" || {
  rm -f "$to/.arev.install.$$"
  die "cannot write $to/arev"
}
say "installed $("$to/arev" --version 2>/dev/null || echo "arev $version") to $to/arev"
case ":${PATH:-}:" in
  *":$to:"*) ;;
  *) say "note: $to is not on PATH; add it (e.g. export PATH=\"$to:\$PATH\") or run $to/arev" ;;
esac

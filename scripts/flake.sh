#!/usr/bin/env bash
# Flake rate of the integration tests: builds the integration test binary once, runs it N
# times (optionally beside a CPU hog) and prints, per test, how many runs it failed in.
# Exits 1 when any run failed, 2 on a usage error. See docs/ci-and-publishing.md
# ("Developing arev").
#
#   scripts/flake.sh [-n N] [--hog] [--keep] [-- <test binary arguments>]
#
#   -n N     runs (default 5)
#   --hog    a `yes > /dev/null` per core (nproc) while the tests run, killed by pid at exit
#   --keep   keep the per-run logs (their directory is printed either way)
#   -- ...   passed to the test binary: a name filter, `--test-threads 2`, `--exact`, ...
#
# The real-CLI tests run when AREV_TEST_{CLAUDE,CODEX,GEMINI,OPENCODE}_BIN are set, as for
# `cargo test` (AREV_REQUIRE_REAL_CLIS=1 makes a missing one fail instead of skip).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5
hog=0
keep=0
test_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n)
      [ $# -ge 2 ] || { echo "flake: -n needs a number" >&2; exit 2; }
      runs="$2"
      shift 2
      ;;
    --hog) hog=1; shift ;;
    --keep) keep=1; shift ;;
    --) shift; test_args=("$@"); break ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "flake: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$runs" in
  ''|*[!0-9]*|0) echo "flake: -n must be a positive whole number, not '$runs'" >&2; exit 2 ;;
esac

# Build once; the JSON messages name the test executable.
echo "flake: building the integration tests (cargo test --features fake-agent --test integration --no-run)"
bin="$(cargo test --features fake-agent --test integration --no-run --message-format=json \
  | grep -o '"executable":"[^"]*"' | tail -n 1 | sed 's/^"executable":"//; s/"$//')"
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "flake: the build named no integration test executable" >&2
  exit 2
fi

logs="$(mktemp -d "${TMPDIR:-/tmp}/arev-flake.XXXXXX")"
hogs=()
cleanup() {
  local pid
  for pid in "${hogs[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${hogs[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [ "$keep" = 0 ]; then
    rm -rf "$logs"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$hog" = 1 ]; then
  cores="$(nproc)"
  for _ in $(seq "$cores"); do
    yes > /dev/null &
    hogs+=("$!")
  done
  echo "flake: CPU hog on: ${#hogs[@]} x 'yes > /dev/null' (pids ${hogs[*]})"
fi

echo "flake: $runs run(s) of $bin ${test_args[*]:-}"
broken=0
for i in $(seq "$runs"); do
  log="$logs/run-$i.log"
  start=$SECONDS
  set +e
  "$bin" "${test_args[@]}" > "$log" 2>&1
  code=$?
  set -e
  passed="$(grep -c '^test .* \.\.\. ok$' "$log" || true)"
  failed="$(grep -c '^test .* \.\.\. FAILED$' "$log" || true)"
  echo "flake: run $i/$runs: exit $code, $passed passed, $failed failed, $((SECONDS - start)) s"
  if [ "$code" != 0 ] && [ "$failed" = 0 ]; then
    # A crash, a timeout or a panic outside a test: counted as a failed run.
    echo "flake: run $i ended with exit $code and no failed test; its tail:" >&2
    tail -n 20 "$log" >&2
    broken=$((broken + 1))
  fi
done

# Failures per test over every run.
summary="$(cat "$logs"/run-*.log | sed -n 's/^test \(.*\) \.\.\. FAILED$/\1/p' | sort | uniq -c | sort -rn)"
if [ -z "$summary" ] && [ "$broken" = 0 ]; then
  echo "flake: no failure in $runs run(s)"
  exit 0
fi
echo "flake: failures per test (of $runs run(s)):"
if [ -n "$summary" ]; then
  echo "$summary" | while read -r count name; do
    echo "  $count/$runs  $name"
  done
fi
if [ "$broken" != 0 ]; then
  echo "  $broken/$runs  (runs that failed outside any test)"
fi
keep=1
echo "flake: logs kept in $logs"
exit 1

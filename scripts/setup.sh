#!/usr/bin/env bash
# System packages the service and its tests need, on Debian or Ubuntu. One script for every
# entry point, so their lists cannot drift apart:
#
#   bash scripts/setup.sh run    what `npm start` needs (package.json "prestart" runs this)
#   bash scripts/setup.sh test   that and what `npm test` needs ("pretest" and .ci/run run this)
#   bash scripts/setup.sh node   Node.js and npm, for a machine that has no npm yet
#
# Parts can be combined (`setup.sh node test`). Node.js and npm must be present before
# `npm start` or `npm test` can run this script at all, so the README's one-liners call the
# `node` part themselves first; any Node.js and npm will do, because `npm install` then brings
# the Node 24 the repository pins (package.json devDependencies) and npm scripts run on it.
#
# Idempotent and fast when nothing is missing: every check is a bash builtin (command -v, file
# tests, globs), no process is started, and apt is not touched. When something is missing it runs
# `apt-get update` once and installs the missing packages, without recommends, as root or through
# passwordless sudo; otherwise it prints the command to run and exits 1. On a machine without
# apt-get it lists what is missing and exits 1.
set -euo pipefail

usage() {
  echo "usage: bash scripts/setup.sh run|test|node ..." >&2
  exit 2
}
[ $# -gt 0 ] || usage

want_node=false want_run=false want_test=false
for part in "$@"; do
  case "$part" in
    node) want_node=true ;;
    run) want_run=true ;;
    # The tests start real browsers and agents too, so they need everything `run` needs.
    test) want_run=true want_test=true ;;
    *) usage ;;
  esac
done

# Missing Debian packages, and for each what was looked for (shown where we cannot install).
packages=()
reasons=()
need() { # need <package> <what was looked for>
  packages+=("$1")
  reasons+=("$2")
}
# On PATH, or in the sbin folders, which are not on an ordinary user's PATH on Debian (runuser, ip).
has() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]; }

check() {
  packages=()
  reasons=()
  if $want_node; then
    # Debian splits npm from nodejs; NodeSource's nodejs bundles npm. apt skips what is installed.
    has npm || { need nodejs "node"; need npm "npm"; }
  fi
  if $want_run; then
    # Every host agent starts its own X server and, per session, Chromium on it.
    has Xvfb || need xvfb "Xvfb"
    # The agents run Debian's Chromium at this path unless AGENT_CHROMIUM_PATH names another (or
    # "none": no browser), which is then the user's to provide; the end-to-end tests drive
    # /usr/bin/chromium itself.
    local chromium=${AGENT_CHROMIUM_PATH:-/usr/bin/chromium}
    if $want_test; then chromium=/usr/bin/chromium; fi
    if [ "$chromium" = /usr/bin/chromium ]; then
      [ -x /usr/bin/chromium ] || need chromium "/usr/bin/chromium"
    elif [ "$chromium" != none ] && [ ! -x "$chromium" ]; then
      echo "setup: AGENT_CHROMIUM_PATH=$chromium is not an executable file" >&2
      exit 1
    fi
    # Pages render with these fonts; without them text and emoji come out as boxes.
    [ -d /usr/share/fonts/truetype/liberation ] || need fonts-liberation "/usr/share/fonts/truetype/liberation"
    [ -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] ||
      need fonts-noto-color-emoji "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf"
    # xdpyinfo: whether an X display answers.
    has xdpyinfo || need x11-utils "xdpyinfo"
    # setxkbmap and the layouts it loads: AGENT_KEYBOARD_LAYOUT sets the agent's display's layout.
    has setxkbmap || need x11-xkb-utils "setxkbmap"
    [ -d /usr/share/X11/xkb/symbols ] || need xkb-data "/usr/share/X11/xkb/symbols"
    # certutil: a session whose proxy has a CA bundle gets it in its browser's NSS database.
    has certutil || need libnss3-tools "certutil"
    # unshare: the host agent tries `unshare --user true` to learn whether Chromium's sandbox can
    # work here (without it, Chromium always runs unsandboxed); runuser: the tests run PostgreSQL
    # as its own user when they run as root.
    { has unshare && has runuser; } || need util-linux "unshare, runuser"
    # TLS to the outside world (proxy checks, the pages a browser opens).
    [ -f /etc/ssl/certs/ca-certificates.crt ] || need ca-certificates "/etc/ssl/certs/ca-certificates.crt"
  fi
  if $want_test; then
    # The tests start a throwaway PostgreSQL server from the machine's server binaries, found on
    # PATH or in Debian's versioned folders (test/support/postgres.ts).
    local initdb
    initdb=false
    if has initdb; then initdb=true; else
      for f in /usr/lib/postgresql/*/bin/initdb; do [ -x "$f" ] && initdb=true && break; done
    fi
    $initdb || need postgresql "initdb (PATH or /usr/lib/postgresql/*/bin)"
    # xdotool: the benchmarks' baseline (.ci/run runs them after the tests); ip: the network
    # partition tests' namespaces; mkfifo, chown: file_info's and PostgreSQL's test set-up.
    has xdotool || need xdotool "xdotool"
    # xwd piped to pnmtopng: the screenshot benchmark's shell-out baseline.
    has xwd || need x11-apps "xwd"
    { has xwdtopnm && has pnmtopng; } || need netpbm "xwdtopnm, pnmtopng"
    has ip || need iproute2 "ip"
    { has mkfifo && has chown; } || need coreutils "mkfifo, chown"
    # kubectl kustomize renders deploy/kubernetes's overlays offline (test/deploy).
    has kubectl || need kubernetes-client "kubectl"
  fi
}

check
[ ${#packages[@]} -eq 0 ] && exit 0

what="${packages[*]}"
if ! has apt-get; then
  echo "setup: this machine has no apt-get (not Debian or Ubuntu); install these yourself:" >&2
  for i in "${!packages[@]}"; do echo "  ${reasons[$i]}  (Debian package ${packages[$i]})" >&2; done
  exit 1
fi

# Root installs directly; anyone else only through sudo that asks for no password, because this
# also runs unattended under `npm start` / `npm test` where a password prompt would hang.
if [ "${EUID:-$(id -u)}" -eq 0 ]; then
  as_root=(env)
elif has sudo && sudo -n true 2>/dev/null; then
  as_root=(sudo -n env)
else
  echo "setup: missing system packages: $what" >&2
  echo "setup: installing them needs root; run this, then try again:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $what" >&2
  exit 1
fi

echo "setup: installing $what (apt-get, a minute or two)"
apt=("${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get -qq -o Dpkg::Use-Pty=0
  # A fresh machine's unattended upgrades may hold the dpkg lock for a while: wait, do not fail.
  -o DPkg::Lock::Timeout=300)
# Once, because a fresh machine (a container image) has no package lists at all.
"${apt[@]}" update
# Only packages this machine's apt sources offer: Ubuntu, for one, has no deb of Chromium (it ships a
# snap), and apt-get would fail on the first unknown name without saying about the others.
unavailable=()
for p in "${packages[@]}"; do
  candidate=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
  if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then unavailable+=("$p"); fi
done
if [ ${#unavailable[@]} -gt 0 ]; then
  echo "setup: this machine's apt sources do not offer: ${unavailable[*]}" >&2
  case " ${unavailable[*]} " in
    *" chromium "*)
      echo "setup: put a Chromium at /usr/bin/chromium (Debian's chromium package does)," \
        "or name one in AGENT_CHROMIUM_PATH (npm start only: the tests use /usr/bin/chromium)" >&2
      ;;
  esac
  case " ${unavailable[*]} " in
    *" kubernetes-client "*)
      echo "setup: put kubectl on PATH (Ubuntu: snap install kubectl --classic); the tests render" \
        "deploy/kubernetes with kubectl kustomize" >&2
      ;;
  esac
  exit 1
fi
# Quiet: apt still prints warnings and errors, but not its progress, nor debconf's note that it
# delays configuring packages on a machine without apt-utils (most container images).
"${apt[@]}" install -y --no-install-recommends "${packages[@]}" >/dev/null \
  2> >(grep -v '^debconf: delaying package configuration' >&2)

# A package that installed but did not provide what we look for would fail later, less clearly.
check
if [ ${#packages[@]} -gt 0 ]; then
  echo "setup: still missing after installing: ${reasons[*]}" >&2
  exit 1
fi

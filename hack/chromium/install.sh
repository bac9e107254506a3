#!/usr/bin/env bash
# Makes sure the headless Chromium the ui's browser tests and benchmark drive is installed, and prints
# its path on the last line of stdout. A no-op when it is already there.
#
# Debian's `chromium` package, installed with apt-get when missing and this runs as root (as CI does);
# otherwise it says what to install and exits 1, so the browser tests fail with that message instead of
# being skipped. playwright-core drives it; no browser is downloaded.
#
# Environment:
#   FLOTILLA_CHROMIUM  a Chromium (or Chrome) executable you already have: used as is
set -euo pipefail

say() { echo "chromium-install: $*" >&2; }
die() { say "$*"; exit 1; }

if [ -n "${FLOTILLA_CHROMIUM:-}" ]; then
  [ -x "$FLOTILLA_CHROMIUM" ] || die "FLOTILLA_CHROMIUM=$FLOTILLA_CHROMIUM is not an executable"
  echo "$FLOTILLA_CHROMIUM"
  exit 0
fi

find_chromium() {
  local p
  for p in /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome; do
    [ -x "$p" ] && { echo "$p"; return 0; }
  done
  return 1
}

if ! find_chromium >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing chromium with apt-get"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >&2 ||
      die "apt-get could not install chromium"
  else
    die "Chromium is missing: install it (Debian: apt-get install chromium), or set FLOTILLA_CHROMIUM to an executable"
  fi
fi
find_chromium || die "chromium was installed but is not at /usr/bin/chromium"

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

prefix=chromium-install
. "$(dirname "$0")/../tool-lib.sh"
use_given FLOTILLA_CHROMIUM

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

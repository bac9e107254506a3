# Sourced by the hack/ scripts that find or build a tool and print its path on the last line of stdout
# (chromium/install.sh, gatekeeper/build.sh, helm/build.sh). Set `prefix` (the script's name in messages)
# first.
#   say MESSAGE…  to stderr, after the prefix
#   die MESSAGE…  say it and exit 1
#   use_given VAR when $VAR is set, print it and exit 0 (the tool the caller already has); die when it is
#                 not an executable
say() { echo "${prefix:?}: $*" >&2; }
die() { say "$*"; exit 1; }
use_given() {
  local value="${!1:-}"
  [ -n "$value" ] || return 0
  [ -x "$value" ] || die "$1=$value is not an executable"
  echo "$value"
  exit 0
}

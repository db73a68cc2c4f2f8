# Helpers of the install scripts. Sourced, not run; expects `set -euo pipefail`.
#
#   rd_apt_install WHO PKG...   installs the Debian packages not yet installed
#   rd_go_env                   puts the pinned Go first on PATH (installing it
#                               into build-tools/ when missing) for this script
#   rd_go_install WHO MODULE@VERSION BINARY
#                               go install into build-tools/bin unless the
#                               binary there already carries that version
#   rd_fail WHO MESSAGE         prints "WHO: MESSAGE" on stderr and exits 1
#
# Every failure names the package or module and the registry it comes from,
# so a broken install never ends in a bare exit status.

RD_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RD_TOOLS="${RD_TOOLS:-$RD_ROOT/build-tools}"
# shellcheck source=versions.sh
. "$RD_ROOT/scripts/versions.sh"

rd_fail() {
  echo "$1: $2" >&2
  exit 1
}

rd_apt_install() {
  local who="$1"; shift
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  [ "$(id -u)" = 0 ] || rd_fail "$who" "needs root to install the Debian packages ${missing[*]} (run as root, or install them first)"
  echo "$who: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq ||
    rd_fail "$who" "apt-get update failed: the Debian archive in /etc/apt/sources.list* is not reachable"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    rd_fail "$who" "apt-get install failed for: ${missing[*]} (Debian bookworm archive)"
}

# The first URL of GOPROXY (the environment's, then the default), without
# the "direct"/"off" keywords.
rd_go_proxy() {
  local list="${GOPROXY:-https://proxy.golang.org}" entry
  IFS=',|' read -r -a entries <<<"$list"
  for entry in "${entries[@]}"; do
    case "$entry" in direct|off|"") ;; *) echo "${entry%/}"; return 0 ;; esac
  done
  echo "https://proxy.golang.org"
}

rd_install_go() {
  local who="$1" arch sum url zip dest tmp
  dest="$RD_TOOLS/go-$GO_VERSION"
  [ -x "$dest/bin/go" ] && return 0
  arch="$(dpkg --print-architecture)"
  sum="GO_TOOLCHAIN_SHA256_$arch"
  [ -n "${!sum:-}" ] || rd_fail "$who" "no pinned Go $GO_VERSION toolchain for architecture $arch (scripts/versions.sh)"
  rd_apt_install "$who" curl unzip ca-certificates
  url="$(rd_go_proxy)/golang.org/toolchain/@v/v0.0.1-go$GO_VERSION.linux-$arch.zip"
  echo "$who: downloading Go $GO_VERSION from the Go module proxy ($url)"
  tmp="$(mktemp -d)"
  zip="$tmp/go.zip"
  curl -fsSL --retry 3 -o "$zip" "$url" ||
    { rm -rf "$tmp"; rd_fail "$who" "could not download golang.org/toolchain go$GO_VERSION from the Go module proxy ($url)"; }
  echo "${!sum}  $zip" | sha256sum -c --quiet - ||
    { rm -rf "$tmp"; rd_fail "$who" "the Go $GO_VERSION archive from $url does not match its pinned SHA-256 (scripts/versions.sh)"; }
  unzip -q "$zip" -d "$tmp/x"
  mkdir -p "$RD_TOOLS"
  rm -rf "$dest"
  mv "$tmp/x/golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-$arch" "$dest"
  rm -rf "$tmp"
  "$dest/bin/go" version >/dev/null || rd_fail "$who" "the Go $GO_VERSION toolchain in $dest does not run"
}

# GOTOOLCHAIN=local for our own commands only: the pinned Go is new enough for
# everything here, and nothing should fetch another one behind our back.
rd_go_env() {
  rd_install_go "${1:-install}"
  export PATH="$RD_TOOLS/go-$GO_VERSION/bin:$RD_TOOLS/bin:$PATH"
  export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:--buildvcs=false}"
  unset GOROOT
}

rd_go_install() {
  local who="$1" module="$2" binary="$3" version="${2##*@}"
  local bin="$RD_TOOLS/bin/$binary"
  if [ -x "$bin" ] && go version -m "$bin" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]].*[[:space:]]$version([[:space:]]|$)"; then
    return 0
  fi
  echo "$who: building $module through the Go module proxy"
  mkdir -p "$RD_TOOLS/bin"
  GOBIN="$RD_TOOLS/bin" go install "$module" ||
    rd_fail "$who" "go install $module failed (Go module proxy $(rd_go_proxy))"
}

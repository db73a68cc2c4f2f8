#!/usr/bin/env bash
# Installs the pinned kustomize the deployment tests render with, through
# the Go module proxy, into $GOBIN (default ~/go/bin). Needs Go >= 1.22.
# Prints the binary's path. kubectl >= 1.27 embeds a kustomize 5 as
# `kubectl kustomize`, which the tests use when this one is missing.
set -euo pipefail
KUSTOMIZE_VERSION=v5.5.0
GOBIN=${GOBIN:-$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin}
export GOBIN

# `go install` builds carry their module version (kustomize version says "(devel)").
if [ -x "$GOBIN/kustomize" ] && command -v go >/dev/null &&
   go version -m "$GOBIN/kustomize" 2>/dev/null | grep -q "kustomize/v5[[:space:]]*$KUSTOMIZE_VERSION"; then
  echo "$GOBIN/kustomize"
  exit 0
fi
command -v go >/dev/null || { echo "install-kustomize.sh: no Go toolchain (apt-get install golang-go)" >&2; exit 1; }
GOFLAGS=-buildvcs=false go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" >&2
echo "$GOBIN/kustomize"

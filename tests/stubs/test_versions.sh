#!/usr/bin/env bash
# The project's version is set in one place, the top-level VERSION file;
# every client package states it (package managers need it in their own
# files). Fails, naming the file, when one of them differs.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
want="$(cat VERSION)"
[[ "$want" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "VERSION is not X.Y.Z: '$want'"; exit 1; }
declare -A found
found[stubs/node/package.json]="$(node -p 'require("./stubs/node/package.json").version')"
found[stubs/node/package-lock.json]="$(node -p 'require("./stubs/node/package-lock.json").version')"
found[stubs/go/recoveryd/version.go]="$(sed -n 's/^const Version = "\(.*\)"$/\1/p' stubs/go/recoveryd/version.go)"
found[stubs/java/pom.xml]="$(python3 -c 'import sys, xml.etree.ElementTree as E
print(E.parse("stubs/java/pom.xml").getroot().find("{http://maven.apache.org/POM/4.0.0}version").text)')"
found[stubs/c/CMakeLists.txt]="$(sed -n 's/^project(recoveryd-client VERSION \([0-9.]*\) .*/\1/p' stubs/c/CMakeLists.txt)"
bad=0
for f in "${!found[@]}"; do
  if [ "${found[$f]}" != "$want" ]; then
    echo "VERSION MISMATCH: $f says '${found[$f]}', VERSION says '$want'"
    bad=1
  fi
done
[ "$bad" -eq 0 ] && echo "versions: ${#found[@]} package files at $want"
exit "$bad"

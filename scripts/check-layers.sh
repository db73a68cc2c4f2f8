#!/bin/sh
# The server's layers (README.md, "Source layout"): each directory may
# include only its own headers and those of the layers below it, and the
# domain and engine nothing of gRPC, protobuf, YAML or Redis. Run by ctest
# as unit.layers; the libraries' link checks (CMakeLists.txt) cover calls.
#   scripts/check-layers.sh [SOURCE_DIR]
set -eu
cd "${1:-$(dirname "$0")/..}/server"

allowed() {
    case $1 in
    domain) echo "domain" ;;
    platform) echo "platform" ;;
    engine) echo "domain engine" ;;
    store) echo "domain platform store" ;;
    config) echo "domain config" ;;
    ops) echo "domain platform engine config ops" ;;
    transport) echo "domain platform engine config ops transport recovery grpc" ;;
    esac
}

status=0
for dir in domain platform engine store config ops transport; do
    ok=$(allowed $dir)
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -e "$f" ] || continue
        for inc in $(sed -n 's/^#include "\([a-z_]*\)\/.*"/\1/p' "$f"); do
            case " $ok " in
            *" $inc "*) ;;
            *) echo "$f includes $inc/: $dir may include only $ok"; status=1 ;;
            esac
        done
    done
done
for f in domain/* engine/*; do
    if grep -Eq '^#include <(grpc|protobuf-c|yaml|hiredis|microhttpd|jansson)' "$f"; then
        echo "$f: the domain and the engine include no gRPC, protobuf, YAML or Redis headers"
        status=1
    fi
done
[ $status -eq 0 ] && echo "layers: ok"
exit $status

#!/bin/sh
# The configuration-key tables of docs/OPERATIONS.md are the output of
# `recoveryd --config-keys`, between the config-keys marker comments.
#   scripts/config-keys-doc.sh RECOVERYD [SOURCE_DIR]          rewrite them
#   scripts/config-keys-doc.sh --check RECOVERYD [SOURCE_DIR]  exit 1 if they differ
# (ctest runs the second as config.docs_key_table).
set -eu
check=0
if [ "${1:-}" = "--check" ]; then
    check=1
    shift
fi
recoveryd=${1:?usage: config-keys-doc.sh [--check] RECOVERYD [SOURCE_DIR]}
doc="${2:-$(dirname "$0")/..}/docs/OPERATIONS.md"
begin='<!-- BEGIN config-keys:'
end='<!-- END config-keys -->'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$recoveryd" --config-keys >"$tmp/keys.md"
grep -q "^$begin" "$doc" && grep -q "^$end" "$doc" || {
    echo "$doc: the config-keys markers are missing" >&2
    exit 1
}
# Everything up to the begin marker, the generated tables, the end marker on.
awk -v keys="$tmp/keys.md" -v begin="$begin" -v end="$end" '
    index($0, begin) == 1 { print; print ""; while ((getline line < keys) > 0) print line; skip = 1; next }
    index($0, end) == 1 { skip = 0 }
    !skip { print }
' "$doc" >"$tmp/doc.md"

if [ "$check" = 1 ]; then
    if ! diff -u "$doc" "$tmp/doc.md"; then
        echo "$doc: the configuration keys differ from \`recoveryd --config-keys\`;" \
             "run scripts/config-keys-doc.sh $recoveryd" >&2
        exit 1
    fi
    exit 0
fi
cat "$tmp/doc.md" >"$doc"

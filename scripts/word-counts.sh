#!/usr/bin/env bash
# Rewrites the `words:` section at the end of config/rules.yaml from the
# tuning split of tests/corpus (docs/CLASSIFICATION.md, "The words tier").
# Run it after changing the corpus; unit.test_words fails until it is run.
#
#   scripts/word-counts.sh BUILD_DIR     (a build with the unit tests: test_words)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: scripts/word-counts.sh BUILD_DIR}"
rules="$root/config/rules.yaml"
marker='# ---- words: written by scripts/word-counts.sh'
section="$(mktemp)"
trap 'rm -f "$section" "$rules.new"' EXIT
make -C "$build" test_words >/dev/null
# the section is written before the test compares it with the shipped one
RD_WORD_COUNTS_WRITE="$section" "$build/test_words" >/dev/null 2>&1 || true
[ -s "$section" ] || { echo "word-counts: $build/test_words wrote nothing" >&2; exit 1; }
# everything before the old section (or the whole file), a blank line, the new one
awk -v m="$marker" 'index($0, m) == 1 { exit } { print }' "$rules" |
  sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' > "$rules.new"
printf '\n' >> "$rules.new"
cat "$section" >> "$rules.new"
mv "$rules.new" "$rules"
echo "word-counts: $(grep -c '^    ' "$section") words written into config/rules.yaml"

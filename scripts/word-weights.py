#!/usr/bin/env python3
"""Writes the `word_weights:` section of config/rules.yaml: the weights by
which a message's words choose the category of an answer whose rule says
`category_from_words: true`, and the retryability and category of a
message no rule and no word count decided (docs/CLASSIFICATION.md, "Word
weights").

Three logistic regressions (scikit-learn) over which words a message
holds, fitted on the tuning split of the corpus files test_words reads
(tests/unit/corpus_files.h); the held-out split is never read:
- the log-odds that an error is permanent, on every tuning message;
- for each retryability, the category among those that retryability
  takes, on the messages of that retryability.
Words are rd_words_each's (domain/words.h): runs of ASCII letters and
digits led by a letter, lower-cased, 2 to 48 bytes, each counted once per
message.

  scripts/word-weights.py            rewrite the section in config/rules.yaml
  scripts/word-weights.py --check    exit 1 when the shipped section is not
                                       what the corpus gives (make test runs it)

Needs PyYAML and scikit-learn (tests/e2e/requirements.txt, in .venv).
"""
import argparse
import math
import os
import re
import sys

import yaml
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "config", "rules.yaml")
CORPUS_FILES_H = os.path.join(ROOT, "tests", "unit", "corpus_files.h")
MARKER = "# ---- word_weights: written by scripts/word-weights.py"
WORDS_MARKER = "# ---- words: written by scripts/word-counts.sh"

# the columns, in rd_category's order (domain/types.h)
RETRYABILITIES = ["transient", "permanent"]
CATEGORIES = ["transient", "input_validation", "external_service", "permission", "logic",
              "resource"]
MIN_MESSAGES_PER_WORD = 3    # words fewer tuning messages hold are not weighed
REGULARISATION_C = 1.0       # scikit-learn's C: larger fits the tuning texts closer
MIN_PROBABILITY = 0.6        # the words must make the category at least this likely
# The words answer for a message no rule decided when they make one
# retryability at least this likely; otherwise the unknown default stands.
MIN_RETRYABILITY_PROBABILITY = 0.6
# A category may answer for a retryability when at least this share of the
# tuning messages of that retryability carry it (so transient/logic, a
# handful, is left out).
MIN_CATEGORY_SHARE = 0.01
DIGITS = 4                   # decimals written; --check allows one unit of them
WORD = re.compile(rb"[A-Za-z][A-Za-z0-9]*")


def words(message):
    """The distinct words of message, as rd_words_each gives them."""
    out = set()
    for m in WORD.finditer(message.encode("utf-8", "surrogateescape")):
        w = m.group(0)
        if 2 <= len(w) <= 48:
            out.add(w.decode("ascii").lower())
    return sorted(out)


def corpus_paths():
    """The corpus files in the order test_words reads them (oldest first)."""
    with open(CORPUS_FILES_H) as f:
        paths = re.findall(r'RD_SOURCE_DIR "/(tests/corpus/[^"]+\.yaml)"', f.read())
    if not paths:
        sys.exit("word-weights: no corpus file named in %s" % CORPUS_FILES_H)
    return paths


def tuning_entries(paths=None):
    for path in paths or corpus_paths():
        with open(os.path.join(ROOT, path)) as f:
            for e in yaml.safe_load(f)["entries"]:
                if e.get("split") != "holdout":
                    yield e


def fit(entries):
    """The word vectorizer; per retryability, (its categories, their
    columns in the model, the model, the messages it was fitted on); and
    the retryability model (classes permanent, transient)."""
    vec = CountVectorizer(tokenizer=words, token_pattern=None, lowercase=False, binary=True,
                          min_df=MIN_MESSAGES_PER_WORD)
    x = vec.fit_transform([e.get("message") or "" for e in entries])
    sides = {}
    for retry in RETRYABILITIES:
        of_retry = [e["expect"]["category"] for e in entries
                    if e["expect"]["retryability"] == retry]
        allowed = [c for c in CATEGORIES
                   if of_retry.count(c) >= MIN_CATEGORY_SHARE * len(of_retry)]
        if len(allowed) == 2:  # scikit-learn fits one column for two classes
            sys.exit("word-weights: %s answers take only two categories" % retry)
        rows = [i for i, e in enumerate(entries)
                if e["expect"]["retryability"] == retry and e["expect"]["category"] in allowed]
        model = LogisticRegression(C=REGULARISATION_C, class_weight="balanced", tol=1e-9,
                                   max_iter=20000)
        model.fit(x[rows], [entries[i]["expect"]["category"] for i in rows])
        classes = list(model.classes_)
        sides[retry] = (allowed, [classes.index(c) for c in allowed], model, len(rows))
    # no intercept: with none, a message's words alone make one retryability
    # likely, and words that say little leave the unknown default
    retry_model = LogisticRegression(C=REGULARISATION_C, class_weight="balanced", tol=1e-9,
                                     max_iter=20000, fit_intercept=False)
    retry_model.fit(x, [e["expect"]["retryability"] for e in entries])
    if list(retry_model.classes_) != ["permanent", "transient"]:
        sys.exit("word-weights: the tuning split does not hold both retryabilities")
    return vec, sides, retry_model


def permanent_odds(retry_model):
    """(intercept, per-column weights) of the log-odds of permanent:
    scikit-learn's binary model scores its second class, transient."""
    return 0.0 - retry_model.intercept_[0], 0.0 - retry_model.coef_[0]


def category(vec, sides, message, retryability, min_probability=MIN_PROBABILITY):
    """What rd_word_weights_decide answers: the category, or None. With
    min_probability 0, the category rd_word_weights_answer_named gives:
    the likeliest however unsure (None only without a known word)."""
    allowed, order, model, _ = sides[retryability]
    x = vec.transform([message])
    if x.nnz == 0:
        return None
    p = model.predict_proba(x)[0]
    best = max(range(len(allowed)), key=lambda k: p[order[k]])
    return allowed[best] if p[order[best]] >= min_probability else None


def answer(vec, sides, retry_model, message):
    """What rd_word_weights_answer answers: (retryability, category), or
    None when the words leave the unknown default."""
    x = vec.transform([message])
    if x.nnz == 0:
        return None
    p = retry_model.predict_proba(x)[0][0]  # permanent's
    if p >= MIN_RETRYABILITY_PROBABILITY:
        retry = "permanent"
    elif 1 - p >= MIN_RETRYABILITY_PROBABILITY:
        retry = "transient"
    else:
        return None
    return retry, category(vec, sides, message, retry) or "unknown"


def section():
    entries = list(tuning_entries())
    vec, sides, retry_model = fit(entries)
    intercept, odds = permanent_odds(retry_model)

    def row(values):
        return "[" + ", ".join("%.*f" % (DIGITS, v) for v in values) + "]"

    lines = [
        MARKER + " from the tuning split of",
        "# tests/corpus (docs/CLASSIFICATION.md, \"Word weights\"); do not edit.",
        "# Logistic regressions over which words a message holds: the log-odds of",
        "# permanent, fitted without an intercept on the %d tuning messages; for each"
        % len(entries),
        "# retryability, its categories, fitted on the tuning messages of that",
        "# retryability whose category it lists (%s);"
        % " and ".join("%d %s" % (sides[r][3], r) for r in RETRYABILITIES),
        "# words at least %d tuning messages hold; C = %g, classes weighed alike."
        % (MIN_MESSAGES_PER_WORD, REGULARISATION_C),
        "# A word's list: its weight for permanent, then for the transient",
        "# categories, then for the permanent ones, in the order listed.",
        "word_weights:",
        "  min_probability: %.2f" % MIN_PROBABILITY,
        "  retryability:",
        "    min_probability: %.2f" % MIN_RETRYABILITY_PROBABILITY,
        "    intercept: " + row([intercept]),
    ]
    for retry in RETRYABILITIES:
        allowed, order, model, _ = sides[retry]
        lines += ["  %s:" % retry,
                  "    categories: [%s]" % ", ".join(allowed),
                  "    intercept: " + row(model.intercept_[i] for i in order)]
    lines.append("  weights:")
    for word, column in sorted(vec.vocabulary_.items()):
        weights = [odds[column]] + [sides[r][2].coef_[i][column]
                                    for r in RETRYABILITIES for i in sides[r][1]]
        lines.append("    %s: %s" % (word, row(weights)))
    return "\n".join(lines) + "\n"


def split_rules(text):
    """(before the section, the section, the rest from the words section on)."""
    words_at = text.find(WORDS_MARKER)
    if words_at < 0:
        sys.exit("word-weights: config/rules.yaml has no words section")
    at = text.find(MARKER)
    if at < 0:
        return text[:words_at], "", text[words_at:]
    return text[:at], text[at:words_at], text[words_at:]


def parse(section_text):
    """{word or '(intercept)': [weights]} and the other lines, for --check."""
    weights, other = {}, []
    for line in section_text.splitlines():
        m = re.match(r"^    ([a-z][a-z0-9]*): \[([-0-9., ]+)\]$", line) or \
            re.match(r"^    (intercept): \[([-0-9., ]+)\]$", line)
        if m:
            key = m.group(1)
            if key == "intercept":
                key = "(intercept %d)" % len([k for k in weights if k.startswith("(")])
            weights[key] = [float(v) for v in m.group(2).split(",")]
        else:
            other.append(line)
    while other and not other[-1]:
        other.pop()
    return weights, other


def count_words(weights):
    return len([k for k in weights if not k.startswith("(")])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true",
                   help="compare the shipped section with the corpus's, write nothing")
    args = p.parse_args()
    with open(RULES) as f:
        before, shipped, rest = split_rules(f.read())
    fresh = section()
    if args.check:
        want, want_other = parse(fresh)
        have, have_other = parse(shipped)
        # the fit's last digit may move with the numeric libraries' builds
        tolerance = 1.5 * 10 ** -DIGITS
        differ = [w for w in sorted(set(want) | set(have))
                  if w not in want or w not in have
                  or any(not math.isclose(a, b, abs_tol=tolerance)
                         for a, b in zip(want[w], have[w]))]
        if differ or want_other != have_other:
            print("word-weights: config/rules.yaml's word_weights section is not the "
                  "corpus's (%d words differ%s, e.g. %s); run scripts/word-weights.py"
                  % (len(differ), ", and its header" if want_other != have_other else "",
                     ", ".join(differ[:5]) or "-"), file=sys.stderr)
            return 1
        print("word-weights: the shipped section is the corpus's (%d words)"
              % count_words(want))
        return 0
    with open(RULES + ".new", "w") as f:
        f.write(before.rstrip("\n") + "\n\n" + fresh + "\n" + rest)
    os.replace(RULES + ".new", RULES)
    print("word-weights: %d words written into config/rules.yaml"
          % count_words(parse(fresh)[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

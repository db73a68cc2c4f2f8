#!/usr/bin/env python3
"""How the words tier's threshold does on texts the rules did not know.

For every REV:FILE given, the rules and the `words:` counts of commit REV
(its config/, taken with git archive) classify the tuning part of
tests/corpus/FILE, a batch collected after REV, through test_corpus
(RD_CORPUS_CONFIG, RD_CORPUS_DUMP). The texts no rule decided (answered by
the words tier or the unknown default) are then answered again with each
threshold: the words answer when they make the retryability they lean to
at least that likely (the probability of domain/words.c), the default
(transient, category unknown) otherwise. Prints, per threshold, how many
the words answered and how many of all were right on retryability and on
category. A pair of thresholds `T/P` answers transient from `T` on and
permanent from `P` on. Held-out entries are left out.

  scripts/words-threshold.py --test-corpus build/test_corpus \\
      1b604d5^:errors-batch16.yaml 6369b9a^:errors-batch17.yaml ...

The words are split and weighed as domain/words.c does (runs of ASCII
letters and digits that start with a letter, 2 to 48 bytes, lower-cased,
once per text); at each REV's own threshold the script checks that it
picks exactly the texts, and gives exactly the answers, of the server's
words tier, and stops if not. Needs git, a build of test_corpus and PyYAML (the test venv has it).
"""
import argparse
import csv
import io
import math
import os
import re
import subprocess
import sys
import tarfile
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATEGORIES = ["transient", "input_validation", "external_service", "permission", "logic",
              "resource"]
THRESHOLDS = ["0.5", "0.6", "0.7", "0.8", "0.9", "0.5/0.8", "0.6/0.8", "0.5/0.7"]
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def words_of(text):
    return {w.lower() for w in WORD.findall(text) if 2 <= len(w) <= 48}


def rules_at(rev, work):
    """config/ of rev unpacked into work; returns its recovery.yaml and words section."""
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "config"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as t:
        t.extractall(work)
    with open(os.path.join(work, "config", "rules.yaml")) as f:
        words = (yaml.safe_load(f) or {}).get("words")
    return os.path.join(work, "config", "recovery.yaml"), words


def answers(test_corpus, config, work):
    dump = os.path.join(work, "answers.tsv")
    env = dict(os.environ, RD_CORPUS_CONFIG=config, RD_CORPUS_DUMP=dump)
    # older rules may fail the accuracy assertions on today's corpus: the
    # dump is written before them, so the exit status is not read
    subprocess.run([test_corpus], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not os.path.exists(dump):
        sys.exit("words-threshold: %s wrote no answers" % test_corpus)
    with open(dump) as f:
        return {(r["file"], r["id"]): r for r in csv.DictReader(f, delimiter="\t")}


def lean(words, text):
    """(probability, retryability, category) the counts give the text, or None."""
    messages, smoothing, counts = words["messages"], words["smoothing"], words["counts"]
    seen = [counts[w] for w in words_of(text) if w in counts]
    if not seen:
        return None
    score = [sum(math.log((c[i] + smoothing) / (messages[i] + 2 * smoothing)) for c in seen)
             for i in range(8)]
    p_transient = 1.0 / (1.0 + math.exp(score[1] - score[0]))
    category = CATEGORIES[max(range(6), key=lambda i: score[2 + i])]
    if p_transient >= 0.5:
        return p_transient, "transient", category
    return 1.0 - p_transient, "permanent", category


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--test-corpus", required=True, help="a build's test_corpus")
    p.add_argument("pairs", nargs="+", metavar="REV:FILE")
    args = p.parse_args()
    texts = []  # (label retryability, label category, lean or None)
    for pair in args.pairs:
        rev, _, name = pair.rpartition(":")
        if not rev or not name:
            sys.exit("words-threshold: %r is not REV:FILE" % pair)
        with tempfile.TemporaryDirectory(prefix="words-threshold-") as work:
            config, words = rules_at(rev, work)
            if not words:
                sys.exit("words-threshold: the rules of %s have no words: section" % rev)
            dumped = answers(os.path.abspath(args.test_corpus), config, work)
        with open(os.path.join(ROOT, "tests", "corpus", name)) as f:
            entries = yaml.safe_load(f)["entries"]
        for e in entries:
            row = dumped[(name, e["id"])]
            if row["split"] != "tuning" or row["rule"] not in ("words", "unknown"):
                continue
            guess = lean(words, e.get("message") or "")
            # This model is domain/words.c written again; at the REV's own
            # threshold it must pick exactly the texts the server's words
            # tier decided, and give the same answer.
            by_words = bool(guess) and guess[0] >= words["min_probability"]
            answer = "%s/%s" % (guess[1], guess[2]) if by_words else None
            if by_words != (row["rule"] == "words") or (by_words and answer != row["answered"]):
                sys.exit("words-threshold: %s %s: this script's words model and the "
                         "server's disagree" % (name, e["id"]))
            texts.append((e["expect"]["retryability"], e["expect"]["category"], guess))
    if not texts:
        sys.exit("words-threshold: no tuning text of the files given reached the words")
    print("%-9s %5s %9s %7s %9s" % ("threshold", "texts", "by words", "retry", "category"))
    for t in THRESHOLDS:
        t_transient, _, t_permanent = t.partition("/")
        t_transient = float(t_transient)
        t_permanent = float(t_permanent or t_transient)
        decided = retry = category = 0
        for want_r, want_c, guess in texts:
            if guess and guess[0] >= (t_transient if guess[1] == "transient" else t_permanent):
                decided += 1
                retry += guess[1] == want_r
                category += guess[2] == want_c
            else:
                retry += want_r == "transient"
        n = len(texts)
        print("%-9s %5d %9d %6.1f%% %8.1f%%" % (t, n, decided, 100.0 * retry / n,
                                               100.0 * category / n))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What the word weights (docs/CLASSIFICATION.md, "Word weights") would
change, measured on texts neither the rules nor the weights were fitted
on: which rules gain from taking the category their message's words name
(`category_from_words`) or the other retryability when the words make it
likely and name its category (`retryability_from_words`), and what the
weights' answer does for the messages that fell to the unknown default.

For every REV:FILE given, the rules of commit REV classify the tuning part
of tests/corpus/FILE, a batch collected after REV (as
scripts/rule-precision.py does), and the weights are fitted as
scripts/word-weights.py fits them, on the tuning split of the corpus
files before FILE only. For each deciding rule the script prints how many
of those answers had the right category, how many categories the words
would fix and break were the rule marked `category_from_words`, and how
many retryabilities (and whole answers) they would fix and break were it
marked `retryability_from_words`; then, for the answers
of the unknown default (rule `unknown`), how many had the right
retryability and category before and with the weights' answer. Held-out
entries are left out. Give pairs whose rules predate the weights' answer
(the unknown default's rows vanish once the weights answer them).

  .venv/bin/python scripts/word-weights-validate.py --test-corpus build/test_corpus \\
      e8e1d85^:errors-batch26.yaml ...

Needs git, a build of test_corpus, PyYAML and scikit-learn (.venv).
"""
import argparse
import collections
import importlib.util
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


weights = load("word_weights", "word-weights.py")
precision = load("rule_precision", "rule-precision.py")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--test-corpus", required=True, help="a build's test_corpus")
    p.add_argument("pairs", nargs="+", metavar="REV:FILE")
    args = p.parse_args()
    paths = weights.corpus_paths()
    per_rule = collections.defaultdict(collections.Counter)
    unknown = collections.Counter()
    for pair in args.pairs:
        rev, _, name = pair.rpartition(":")
        path = "tests/corpus/" + name
        if not rev or path not in paths:
            sys.exit("word-weights-validate: %r is not REV:FILE of a corpus file" % pair)
        earlier = paths[:paths.index(path)]
        vec, sides, retry_model = weights.fit(list(weights.tuning_entries(earlier)))
        with open(os.path.join(weights.ROOT, path)) as f:
            texts = {e["id"]: e.get("message") or "" for e in weights.yaml.safe_load(f)["entries"]}
        with tempfile.TemporaryDirectory(prefix="word-weights-") as work:
            rows = precision.answers(os.path.abspath(args.test_corpus), rev, work)
        for row in rows:
            if row["file"] != name or row["split"] != "tuning":
                continue
            want = row["expected"].split("/")[1]
            retry, got = row["answered"].split("/")
            named = weights.category(vec, sides, texts[row["id"]], retry)
            now = named or got
            s = per_rule[row["rule"]]
            s["n"] += 1
            s["right"] += got == want
            s["fixed"] += got != want and now == want
            s["broken"] += got == want and now != want
            want_retry = row["expected"].split("/")[0]
            flip = weights.answer(vec, sides, retry_model, texts[row["id"]])
            if row["rule"] in ("unknown", "words") or not flip or flip[0] == retry \
                    or flip[1] == "unknown":
                flip = (retry, got)
            s["retry fixed"] += retry != want_retry and flip[0] == want_retry
            s["retry broken"] += retry == want_retry and flip[0] != want_retry
            s["both fixed"] += (retry, got) != (want_retry, want) and flip == (want_retry, want)
            s["both broken"] += (retry, got) == (want_retry, want) and flip != (want_retry, want)
            if row["rule"] == "unknown":
                by_weights = weights.answer(vec, sides, retry_model, texts[row["id"]])
                new_retry, new_category = by_weights or (retry, got)
                if by_weights and new_category == "unknown":
                    # the words tier names the likeliest category once the
                    # words decided the retryability (domain/classify.c)
                    new_category = weights.category(vec, sides, texts[row["id"]], new_retry, 0.0)
                unknown["n"] += 1
                unknown["retry"] += retry == want_retry
                unknown["category"] += retry == want_retry and got == want
                unknown["retry with weights"] += new_retry == want_retry
                unknown["category with weights"] += new_retry == want_retry and new_category == want
        print("word-weights-validate: %s done" % pair, file=sys.stderr)
    header = ("rule", "n", "category", "fixed", "broken", "retry fixed", "broken",
              "both fixed", "broken")
    row_format = "%-36s %5s %9s %6s %7s %12s %7s %11s %7s"
    print(row_format % header)

    def columns(s):
        return (s["n"], "%.0f%%" % (100.0 * s["right"] / s["n"]), s["fixed"], s["broken"],
                s["retry fixed"], s["retry broken"], s["both fixed"], s["both broken"])
    for rule, s in sorted(per_rule.items(), key=lambda kv: (-kv[1]["n"], kv[0])):
        print(row_format % ((rule,) + columns(s)))
    total = collections.Counter()
    for s in per_rule.values():
        total.update(s)
    print(row_format % (("all (every rule marked)",) + columns(total)))
    if unknown["n"]:
        print("the unknown default's %d answers: retryability right %d, with the weights' answer"
              " %d; both right %d, with the weights' answer %d"
              % (unknown["n"], unknown["retry"], unknown["retry with weights"],
                 unknown["category"], unknown["category with weights"]))


if __name__ == "__main__":
    main()

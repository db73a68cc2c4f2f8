#!/usr/bin/env python3
"""Which rules gain from taking the category their message's words name
(`category_from_words`, docs/CLASSIFICATION.md, "Categories from words"),
measured on texts neither the rules nor the words were fitted on.

For every REV:FILE given, the rules of commit REV classify the tuning part
of tests/corpus/FILE, a batch collected after REV (as
scripts/rule-precision.py does), and the category weights are fitted as
scripts/category-words.py fits them, on the tuning split of the corpus
files before FILE only. For each deciding rule the script prints how many
of those answers had the right category, how many the words would fix and
how many they would break if the rule were marked. Held-out entries are
left out.

  .venv/bin/python scripts/category-words-validate.py --test-corpus build/test_corpus \\
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


weights = load("category_words", "category-words.py")
precision = load("rule_precision", "rule-precision.py")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--test-corpus", required=True, help="a build's test_corpus")
    p.add_argument("pairs", nargs="+", metavar="REV:FILE")
    args = p.parse_args()
    paths = weights.corpus_paths()
    per_rule = collections.defaultdict(collections.Counter)
    for pair in args.pairs:
        rev, _, name = pair.rpartition(":")
        path = "tests/corpus/" + name
        if not rev or path not in paths:
            sys.exit("category-words-validate: %r is not REV:FILE of a corpus file" % pair)
        earlier = paths[:paths.index(path)]
        vec, sides = weights.fit(list(weights.tuning_entries(earlier)))
        with open(os.path.join(weights.ROOT, path)) as f:
            texts = {e["id"]: e.get("message") or "" for e in weights.yaml.safe_load(f)["entries"]}
        with tempfile.TemporaryDirectory(prefix="category-words-") as work:
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
        print("category-words-validate: %s done" % pair, file=sys.stderr)
    print("%-36s %5s %9s %6s %7s" % ("rule", "n", "category", "fixed", "broken"))
    for rule, s in sorted(per_rule.items(), key=lambda kv: (-kv[1]["n"], kv[0])):
        print("%-36s %5d %8.0f%% %6d %7d" % (rule, s["n"], 100.0 * s["right"] / s["n"],
                                             s["fixed"], s["broken"]))
    total = collections.Counter()
    for s in per_rule.values():
        total.update(s)
    print("%-36s %5d %8.1f%% %6d %7d" % ("all (every rule marked)", total["n"],
                                          100.0 * total["right"] / total["n"], total["fixed"],
                                          total["broken"]))


if __name__ == "__main__":
    main()

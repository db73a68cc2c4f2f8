#!/usr/bin/env python3
"""How each classifier rule answers texts it was not written for.

For every REV:FILE given, the rules of commit REV (its config/, taken with
git archive) classify the tuning part of tests/corpus/FILE, a batch
collected after REV, through test_corpus (RD_CORPUS_CONFIG, RD_CORPUS_DUMP).
Prints, per deciding rule over all pairs, how many entries it decided and
how many it got right on retryability and on category, with the labels it
met most, the rules that miss most first. Held-out entries are left out:
they are for figures, not for tuning.

  scripts/rule-precision.py --test-corpus build/test_corpus \\
      7d24500^:errors-batch10.yaml bbe9ad4^:errors-batch11.yaml ...

Needs git and a build of test_corpus; standard library only.
"""
import argparse
import collections
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def answers(test_corpus, rev, work):
    """test_corpus's dump of every entry under the rules of rev."""
    tree = os.path.join(work, "tree")
    os.makedirs(tree)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "config"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
    dump = os.path.join(work, "answers.tsv")
    env = dict(os.environ, RD_CORPUS_CONFIG=os.path.join(tree, "config", "recovery.yaml"),
               RD_CORPUS_DUMP=dump)
    # older rules may fail the accuracy assertions on today's corpus: the
    # dump is written before them, so the exit status is not read
    subprocess.run([test_corpus], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    if not os.path.exists(dump):
        sys.exit("rule-precision: %s wrote no answers for %s" % (test_corpus, rev))
    with open(dump) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--test-corpus", required=True, help="a build's test_corpus")
    p.add_argument("--top", type=int, default=40, help="rules printed")
    p.add_argument("pairs", nargs="+", metavar="REV:FILE")
    args = p.parse_args()
    per_rule = collections.defaultdict(lambda: [0, 0, 0, collections.Counter()])
    for pair in args.pairs:
        rev, _, name = pair.rpartition(":")
        if not rev or not name:
            sys.exit("rule-precision: %r is not REV:FILE" % pair)
        with tempfile.TemporaryDirectory(prefix="rule-precision-") as work:
            for row in answers(os.path.abspath(args.test_corpus), rev, work):
                if row["file"] != name or row["split"] != "tuning":
                    continue
                s = per_rule[row["rule"]]
                want_r, want_c = row["expected"].split("/")
                got_r, got_c = row["answered"].split("/")
                s[0] += 1
                s[1] += want_r == got_r
                s[2] += want_c == got_c
                s[3][row["expected"]] += 1
    total = [sum(s[i] for s in per_rule.values()) for i in range(3)]
    if not total[0]:
        sys.exit("rule-precision: no tuning entry of the files given")
    print("%-40s %5s %7s %7s  labels met most" % ("rule", "n", "retry", "category"))
    ranked = sorted(per_rule.items(), key=lambda kv: (kv[1][2] - kv[1][0], kv[0]))
    for rule, (n, r, c, labels) in ranked[:args.top]:
        print("%-40s %5d %6.0f%% %6.0f%%  %s" % (
            rule, n, 100.0 * r / n, 100.0 * c / n,
            ", ".join("%s %d" % kv for kv in labels.most_common(3))))
    print("%-40s %5d %6.1f%% %6.1f%%" % ("all", total[0], 100.0 * total[1] / total[0],
                                          100.0 * total[2] / total[0]))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Tabulate the failover and move timings of several make check-cluster runs.

Usage: failover-table.py RUN_DIR...   (each a CLUSTER_LOGS directory)

Reads the lines that test-failover.sh, test-failover-fencing.sh,
test-arbiter-failover.sh and test-arbiter-linkcut.sh print
("# failover (...)", "# move back ...", "# agent: ... is Primary after N
tries in M ms") from RUN_DIR/<test>/output and prints, per test, a
Markdown table with one row per run and a row of medians (min-max), in
milliseconds, for doc/perf-failover.md.
"""
import os
import re
import statistics
import sys

FAILOVER = re.compile(
    r"^# failover \((?P<variant>[^;]+); the DC was (?P<dc>\S+)\): kill -> \S+ fenced (?P<fenced>\d+) ms"
    r" -> \S+ Primary (?P<primary>\d+) ms -> \S+ export serves (?P<serving>\d+) ms;"
    r" fenced -> serving (?P<f2s>\d+) ms, of which \S+ waited (?P<stall>\d+) ms for a CPU")
MOVE = re.compile(
    r"^# move back after the failover .*: \S+ serves after (?P<mserve>\d+) ms;"
    r" the command returned after (?P<mret>\d+) ms, of which \S+ waited (?P<mstall>\d+) ms")
LINKCUT = re.compile(
    r"^# link cut \(token (?P<token>\d+)ms\): cut -> link loss seen (?P<seen>\d+) ms"
    r" -> peer Outdated \(fence-peer exit 4\) (?P<outdated>\d+) ms;"
    r" loss seen -> Outdated (?P<s2o>\d+) ms")
GAP = re.compile(r"^# the longest wait between two acknowledgements around the cut: (?P<gap>\d+) ms")
LINK_COLS = [("seen", "cut→loss seen", True), ("s2o", "loss seen→Outdated", True),
             ("outdated", "cut→Outdated (exit 4)", True), ("gap", "longest ack gap", True)]
AGENT = re.compile(r"is Primary after (?P<tries>\d+) tr(?:y|ies) in (?P<pms>\d+) ms")

COLS = [("dc", "DC at the kill", False), ("fenced", "kill→fenced", True),
        ("f2p", "fenced→Primary", True), ("pms", "promote (agent)", True),
        ("tries", "tries", True), ("serving", "kill→serving", True),
        ("f2s", "fenced→serving", True), ("stall", "of which CPU stall", True),
        ("mserve", "move back: serving", True), ("mret", "pcs move returned", True)]


def parse(path):
    row = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = FAILOVER.match(line)
            if m:
                row.update({k: (v if k in ("variant", "dc") else int(v))
                            for k, v in m.groupdict().items()})
                row["f2p"] = row["primary"] - row["fenced"]
            m = MOVE.match(line)
            if m:
                row.update({k: int(v) for k, v in m.groupdict().items()})
            m = AGENT.search(line)
            if m and line.startswith("# agent:"):
                row.update({k: int(v) for k, v in m.groupdict().items()})
    return row if "fenced" in row else None


def parse_linkcut(path):
    row = {}
    with open(path, errors="replace") as f:
        for line in f:
            for rx in (LINKCUT, GAP):
                m = rx.match(line)
                if m:
                    row.update({k: int(v) for k, v in m.groupdict().items()})
    return row if "outdated" in row else None


def table(title, cols, rows):
    print("### %s\n" % title)
    print("| run | " + " | ".join(c[1] for c in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name, r in rows:
        print("| %s | " % name + " | ".join(str(r.get(k, "")) for k, _, _ in cols) + " |")
    med = []
    for k, _, num in cols:
        vals = [r[k] for _, r in rows if k in r]
        if not num or not vals:
            med.append("")
            continue
        med.append("**%g** (%d–%d)" % (statistics.median(vals), min(vals), max(vals)))
    print("| **median** (min–max), n=%d | " % len(rows) + " | ".join(med) + " |\n")


def main(runs):
    rows = []
    for run in runs:
        path = os.path.join(run, "test-arbiter-linkcut.sh", "output")
        if os.path.exists(path):
            r = parse_linkcut(path)
            if r:
                rows.append((os.path.basename(run.rstrip("/")), r))
    if rows:
        table("test-arbiter-linkcut.sh (token %d ms)" % rows[0][1]["token"], LINK_COLS, rows)
    for test in ("test-failover.sh", "test-failover-fencing.sh", "test-arbiter-failover.sh"):
        rows = []
        for run in runs:
            path = os.path.join(run, test, "output")
            if os.path.exists(path):
                r = parse(path)
                if r:
                    rows.append((os.path.basename(run.rstrip("/")), r))
        if not rows:
            continue
        table("%s (%s)" % (test, rows[0][1].get("variant", "")), COLS, rows)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])

#!/usr/bin/python3
"""
check-rooms: tandemd's rooms keep their doors (HACKING.md, "The rooms").

replicator/daemon has one folder per room, and the arrows run one way:

    control -> front -> peer -> volume -> state

A room may use the rooms to its right, through their doors, and nothing to
its left; what must run left goes through struct upcalls (tandemd.h). This
checks it twice:

  1. includes: a file includes the frame (tandemd.h), its own room's
     headers, and the doors of the rooms to its right; nothing else of
     the daemon;
  2. calls: every function or object a room's compiled code uses from
     another room is defined in a room to its right (nm on the objects).

It also checks that no room touches another room's private fields (the
volume's superblock: PRIVATE below), and that no daemon .c file passes 800
lines.

Usage: check-rooms.py SRCDIR BUILDDIR   (replicator/ of each; make check
sets them as ROOMS_SRC and ROOMS_BUILD)
"""
import os
import re
import subprocess
import sys

ORDER = ["control", "front", "peer", "volume", "state"]
DOORS = {
    "state": "state/state-change.h",
    "volume": "volume/volume.h",
    "peer": "peer/peer.h",
    "front": "front/nbd-srv.h",
}
FRAME = "tandemd.h"
MAX_LINES = 800
# Fields of a room's struct that only the room itself touches; the others
# use the door's functions.
PRIVATE = {
    "volume": [(re.compile(r"(->|\.)sb\b"), "the superblock (struct md_sb)",
                "volume_gi(), volume_flags(), volume_set_gi(), volume_set_flags()")],
}


def right_of(room):
    return ORDER[ORDER.index(room) + 1:]


def check_includes(daemon, errors):
    headers = set()
    for room in ORDER:
        for f in os.listdir(os.path.join(daemon, room)):
            if f.endswith(".h"):
                headers.add(f"{room}/{f}")
    bare = {h.split("/")[1] for h in headers}
    n = 0
    with open(os.path.join(daemon, FRAME)) as fh:
        for lineno, line in enumerate(fh, 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and (m.group(1) in headers or m.group(1) in bare):
                errors.append(f"{FRAME}:{lineno}: the frame includes {m.group(1)}: it may "
                              "use only replicator/lib")
    for room in ORDER:
        allowed = {FRAME} | {DOORS[r] for r in right_of(room)}
        allowed |= {h for h in headers if h.startswith(room + "/")}
        for f in sorted(os.listdir(os.path.join(daemon, room))):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(daemon, room, f)
            with open(path) as fh:
                for lineno, line in enumerate(fh, 1):
                    for owner, fields in PRIVATE.items():
                        for rx, what, use in fields if owner != room else []:
                            if rx.search(line):
                                errors.append(f"{room}/{f}:{lineno}: touches {what} of "
                                              f"{owner}/: use {use}")
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    inc = m.group(1)
                    n += 1
                    if inc in headers or inc == FRAME:
                        if inc not in allowed:
                            errors.append(f"{room}/{f}:{lineno}: includes {inc}: "
                                          f"{room}/ may use only {sorted(allowed)}")
                    elif inc in bare:
                        errors.append(f"{room}/{f}:{lineno}: includes {inc} without its "
                                      "room: write \"ROOM/{inc}\"")
            if f.endswith(".c"):
                with open(path) as fh:
                    lines = sum(1 for _ in fh)
                if lines > MAX_LINES:
                    errors.append(f"{room}/{f}: {lines} lines; split it below {MAX_LINES}")
    return n


def nm(obj):
    out = subprocess.run(["nm", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBRGS":
            defined.add(p[2])
        elif len(p) == 2 and p[0] == "U":
            undefined.add(p[1])
    return defined, undefined


def check_calls(objdir, errors):
    where, uses = {}, []
    for room in ORDER:
        d = os.path.join(objdir, room)
        objs = sorted(f for f in os.listdir(d) if f.endswith(".o")) if os.path.isdir(d) else []
        if not objs:
            errors.append(f"no objects in {d}: build tandemd first")
            continue
        for o in objs:
            defined, undefined = nm(os.path.join(d, o))
            name = f"{room}/{o}"
            for s in defined:
                where[s] = room
            uses.append((room, name, undefined))
    edges = 0
    for room, name, undefined in uses:
        for s in sorted(undefined):
            to = where.get(s)
            if to is None or to == room:
                continue
            edges += 1
            if to not in right_of(room):
                errors.append(f"{name} calls {s} of {to}/: {room}/ may use only "
                              f"{right_of(room) or 'no room'}; add a row to struct "
                              "upcalls (tandemd.h) instead")
    return edges


def main():
    if len(sys.argv) == 3:
        src, build = sys.argv[1:]
    elif len(sys.argv) == 1 and "ROOMS_SRC" in os.environ and "ROOMS_BUILD" in os.environ:
        src, build = os.environ["ROOMS_SRC"], os.environ["ROOMS_BUILD"]
    else:
        print("usage: check-rooms.py SRCDIR BUILDDIR (replicator/ of each)", file=sys.stderr)
        return 2
    errors = []
    n_inc = check_includes(os.path.join(src, "daemon"), errors)
    n_calls = check_calls(os.path.join(build, "daemon"), errors)
    for e in errors:
        print("check-rooms: " + e, file=sys.stderr)
    if errors:
        return 1
    print(f"check-rooms: {n_inc} includes and {n_calls} calls between rooms, all to the right")
    return 0


if __name__ == "__main__":
    sys.exit(main())

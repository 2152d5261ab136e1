#!/bin/sh
# A Primary whose disk fails (on-io-error detach) goes on diskless: its
# reads and writes go to the peer. When its disk is attached again it is
# Outdated, resyncs from the peer, and both disks end up identical.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdsh
export TANDEM_FAULT_INJECTION=1

new_image "$tmp/a.img" 64M
new_image "$tmp/b.img" 64M
write_repl_conf "$tmp/t.conf" 'protocol C; connect-int 1; timeout 5;'
on a create-md --force r0 >/dev/null
on b create-md --force r0 >/dev/null
start_node a
start_node b
on a up r0
on b up r0
on a wait-connect --timeout 20 r0 >/dev/null
on a primary --force r0
on b wait-sync --timeout 60 r0 >/dev/null || fail "initial sync"

sh_a() { PATH=/usr/bin:$PATH nbdsh -u "$(nbd_uri_of a)" -c "$1"; }
sh_a "h.pwrite(b'A' * (4 << 20), 0)"
on a inject-fault write r0
# the local leg fails, the peer's succeeds: the write succeeds (DRBD)
sh_a "h.pwrite(b'B' * (1 << 20), 8 << 20)" || fail "write with a failing local disk"
wait_for a disk Diskless
grep -q 'the Primary has no disk now' "$tmp/tandemd-b.log" || fail "bob did not notice"
echo "ok: the local disk failed; the write succeeded through the peer; alice is Diskless"

sh_a "
assert h.pread(4 << 20, 0) == b'A' * (4 << 20)
assert h.pread(1 << 20, 8 << 20) == b'B' * (1 << 20)
h.pwrite(b'C' * (1 << 20), 12 << 20)
h.flush()
assert h.pread(1 << 20, 12 << 20) == b'C' * (1 << 20)
" || fail "diskless reads and writes"
[ "$(field a role)" = Primary ] || fail "alice is no longer Primary"
echo "ok: a diskless Primary reads and writes through the peer"

on a inject-fault none r0
on a attach r0 || fail "re-attach"
wait_for a disk UpToDate 60
grep -q 'resync as SyncTarget' "$tmp/tandemd-a.log" || fail "no resync to alice"
sh_a "assert h.pread(1 << 20, 12 << 20) == b'C' * (1 << 20)" || fail "read after re-attach"
on a secondary r0
on a down r0
on b down r0
cmp -n $((16 << 20)) "$tmp/a.img" "$tmp/b.img" || fail "the disks differ after the resync"
echo "ok: the re-attached disk was Outdated, resynced from bob; both disks identical"

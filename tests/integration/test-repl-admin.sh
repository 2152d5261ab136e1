#!/bin/sh
# The operator's replication verbs on two nodes in network namespaces:
# new-current-uuid --clear-bitmap skips the initial sync of blank disks;
# wait-connect and wait-sync (timeout, exit codes); invalidate with
# pause-sync/resume-sync and the progress in status; invalidate-remote.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdcopy

new_image "$tmp/a.img" 64M
new_image "$tmp/b.img" 64M
write_repl_conf "$tmp/t.conf" 'connect-int 1; timeout 5;' 'resync-rate 8M; c-plan-ahead 0;'
on a create-md --force r0 >/dev/null
on b create-md --force r0 >/dev/null
start_node a
start_node b
on a up r0
on b up r0
on a wait-connect --timeout 20 r0 >/dev/null || fail "wait-connect"
on b wait-connect --timeout 20 r0 >/dev/null || fail "wait-connect on bob"
echo "ok: wait-connect returned once Connected"

# blank disks: skip the initial sync
on a new-current-uuid --clear-bitmap r0
wait_for a disk UpToDate
wait_for b disk UpToDate
wait_for a peer_disk UpToDate
! grep -q 'resync as' "$tmp/tandemd-a.log" "$tmp/tandemd-b.log" || fail "a resync ran"
grep -q 'initial sync skipped' "$tmp/tandemd-b.log" || fail "bob did not log the skip"
on a wait-sync --timeout 5 r0 >/dev/null || fail "wait-sync on synced nodes"
echo "ok: new-current-uuid --clear-bitmap: both UpToDate, no initial sync"

on a primary r0
head -c 8M /dev/urandom >"$tmp/src"
nbdcopy "$tmp/src" "$(nbd_uri_of a)"

# invalidate on bob: a full resync from alice, paused and resumed
on b pause-sync r0
on b invalidate r0
nr0=$(field b nr)
wait_for b connection PausedSyncT 20
wait_for b disk Inconsistent
# the progress object, once the bitmap exchange has counted the blocks
sync_counted() {
	on b status --json r0 | python3 -c '
import json, sys
s = json.load(sys.stdin)["resources"][0]["volumes"][0].get("sync")
sys.exit(0 if s and s["total_kib"] >= 60000 else 1)'
}
wait_until 30 "bob's progress to count the 64 MiB to resync" sync_counted
# pause-sync came before invalidate: the resync was paused from its start,
# so nothing may have been copied up to now
on b status --json r0 | python3 -c '
import json, sys
v = json.load(sys.stdin)["resources"][0]["volumes"][0]
s = v["sync"]
assert v["replication"] == "SyncTarget", v
assert s["left_kib"] == s["total_kib"], s
' || { on b status --json r0; fail "progress while paused"; }
[ "$(field b nr)" = "$nr0" ] || fail "bob received $(( $(field b nr) - nr0 )) KiB while paused"
on b status r0 | grep -q "sync'ed:" || { on b status r0; fail "no progress bar in status"; }
echo "ok: invalidate + pause-sync: PausedSyncT, nothing copied, progress in status"
on b resume-sync r0
wait_for b connection SyncTarget 20
# progress and speed once some blocks are copied (or the resync is over)
sync_moving() {
	on b status --json r0 | python3 -c '
import json, sys
s = json.load(sys.stdin)["resources"][0]["volumes"][0].get("sync")
sys.exit(0 if s is None or s["left_kib"] < s["total_kib"] else 1)'
}
wait_until 30 "the resync to copy blocks after resume-sync" sync_moving
on b status --json r0 | python3 -c '
import json, sys
v = json.load(sys.stdin)["resources"][0]["volumes"][0]
s = v.get("sync")
assert s is None or (0 < s["percent"] <= 100 and s["speed_kib_s"] > 0), s
' || { on b status --json r0; fail "progress after resume"; }
on b wait-sync --timeout 60 r0 >/dev/null || fail "wait-sync after invalidate"
same_data "after invalidate"
echo "ok: resume-sync: the full resync finished; wait-sync returned; disks identical"

# invalidate-remote from alice
on a invalidate-remote r0
on a wait-sync --timeout 60 r0 >/dev/null || fail "wait-sync after invalidate-remote"
grep -q 'invalidate-remote: full resync to the peer' "$tmp/tandemd-a.log" || fail "not logged"
same_data "after invalidate-remote"
echo "ok: invalidate-remote: full resync to bob"

# wait-connect times out when the peer is away (exit 5)
on b down r0
set +e
on a wait-connect --timeout 1 r0 >"$tmp/out" 2>&1
rc=$?
set -e
[ $rc -eq 5 ] && grep -q 'timed out' "$tmp/out" || { cat "$tmp/out"; fail "wait-connect: exit $rc"; }
on a disconnect r0
set +e
on a wait-connect --timeout 1 r0 >"$tmp/out" 2>&1
rc=$?
set -e
[ $rc -eq 11 ] && grep -q 'StandAlone' "$tmp/out" || { cat "$tmp/out"; fail "StandAlone: exit $rc"; }
echo "ok: wait-connect: exit 5 on timeout, 11 when StandAlone"

#!/bin/sh
# disk-timeout: a Primary whose backing device stops answering (an
# injected hang) declares it failed after disk-timeout, as DRBD does; the
# stuck request is abandoned and new I/O goes through the peer without an
# error; once the device answers again the disk is detached, and after
# attach and the resync both disks are identical. Without disk-timeout a
# slow device is waited for; pe and ua count a write waiting for the peer.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdsh
export TANDEM_FAULT_INJECTION=1

new_image "$tmp/a.img" 64M
new_image "$tmp/b.img" 64M
write_repl_conf "$tmp/t.conf" 'protocol C; connect-int 10; timeout 50;' \
	'disk-timeout 10; on-io-error detach; resync-rate 100M; c-plan-ahead 0;'
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

on a inject-fault hang r0
sh_a "h.pwrite(b'S' * 4096, 16 << 20)" &
stuck=$!
# 1 s of disk-timeout, then the disk fails; the watchdog looks every 100 ms
i=0
until grep -q 'failed to meet the disk-timeout' "$tmp/tandemd-a.log"; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "disk-timeout did not fire in 30 s"; sleep 0.1
done
wait_for a disk Failed 30
sh_a "
h.pwrite(b'B' * (1 << 20), 8 << 20)
assert h.pread(1 << 20, 8 << 20) == b'B' * (1 << 20)
assert h.pread(4 << 20, 0) == b'A' * (4 << 20)
" || fail "I/O through the peer while the local disk hangs"
kill -0 $stuck 2>/dev/null || fail "the stuck write was not stuck"
echo "ok: the hanging disk failed after disk-timeout; reads and writes went on through the peer"

on a inject-fault none r0
wait $stuck || fail "the stuck write failed once the disk answered"
wait_for a disk Diskless 30
[ "$(field a role)" = Primary ] || fail "alice is no longer Primary"
echo "ok: once the device answered, the abandoned request returned and the disk was detached"

on a attach r0 || fail "re-attach"
wait_for a disk UpToDate 60
sh_a "assert h.pread(1 << 20, 8 << 20) == b'B' * (1 << 20)" || fail "read after re-attach"
on a secondary r0
on a down r0
on b down r0
cmp -n $((32 << 20)) "$tmp/a.img" "$tmp/b.img" || fail "the disks differ after the resync"
echo "ok: after attach and the resync both disks are identical"

# without disk-timeout a slow device is only slow
on a up r0
on b up r0
stop_node a
write_repl_conf "$tmp/t.conf" 'protocol C; connect-int 10; timeout 50;' \
	'on-io-error detach; resync-rate 100M; c-plan-ahead 0;'
start_node a
on a up r0
on a wait-connect --timeout 20 r0 >/dev/null
on a primary r0
# the extent's activity-log transaction first: the write below then goes
# straight to the hanging data (a cold extent would first hang in that
# transaction's flush, before lo counts the write)
sh_a "h.pwrite(b't' * 4096, 20 << 20)"
on a inject-fault hang r0
sh_a "h.pwrite(b'T' * 4096, 20 << 20)" &
slow=$!
# The write is in the hanging disk once lo counts it. No event follows
# from a disk-timeout that is not set, so this observes a window: 2 s from
# that moment, twice the 1 s disk-timeout that fired above and 20 periods
# of the 100 ms watchdog; the write must still hang at its end (else the
# window proved nothing).
wait_for a lo 1 30
sleep 2 # the observation window, see above
still_hung=$(kill -0 $slow 2>/dev/null && echo yes || echo no)
[ "$(field a lo)" = 1 ] && [ "$still_hung" = yes ] ||
	fail "the slow write did not hang for the whole window (lo $(field a lo), client $still_hung)"
[ "$(field a disk)" = UpToDate ] || fail "without disk-timeout the disk is $(field a disk) while slow"
on a inject-fault none r0
wait $slow || fail "the slow write failed"
[ "$(field a disk)" = UpToDate ] || fail "without disk-timeout the disk is $(field a disk)"
[ "$(grep -c 'failed to meet the disk-timeout' "$tmp/tandemd-a.log")" -eq 1 ] ||
	fail "the slow device was declared failed without disk-timeout"
echo "ok: without disk-timeout a device that is slow for 2 s is waited for"

# /proc/drbd's pe and ua: a write that waits for the peer's hanging disk is
# pending on alice and unacknowledged on bob, and both return to 0
on b adjust r0 || fail "adjust bob (no disk-timeout)"
on b inject-fault hang r0
sh_a "h.pwrite(b'U' * 4096, 24 << 20)" &
waiting=$!
wait_for a pe 1 30
wait_for b ua 1 30
on b inject-fault none r0
wait $waiting || fail "the write that waited for bob failed"
wait_for a pe 0 30
wait_for b ua 0 30
echo "ok: pe on alice and ua on bob count a write waiting for bob's disk, then return to 0"

#!/bin/sh
# Metadata write failures take the on-io-error path (issue 17 §2): a
# superblock write that fails on the Secondary detaches its disk (a
# metadata error always detaches, whatever on-io-error says), it is logged,
# the Primary goes on, and after the disk is healed and attached again the
# resync makes both disks identical. Before, the failed write was ignored
# and the flags and UUIDs in memory differed from the disk's.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdsh
export TANDEM_FAULT_INJECTION=1

new_image "$tmp/a.img" 32M
new_image "$tmp/b.img" 32M
write_repl_conf "$tmp/t.conf" 'protocol C; connect-int 1; timeout 5;' \
	'resync-rate 100M; c-plan-ahead 0; on-io-error pass_on;'
blank_pair # blank disks in sync, alice Primary

sh_a() { PATH=/usr/bin:$PATH nbdsh -u "$(nbd_uri_of a)" -c "$1"; }
sh_a "h.pwrite(b'A' * (1 << 20), 0); h.flush()" || fail "first write"

# bob's metadata area fails; a disconnect writes bob's superblock
# (the connected flag), which now fails
on b inject-fault --meta write r0
on b disconnect r0
wait_for b disk Diskless 20
grep -q 'local I/O error writing the superblock to the metadata.*detaching the disk' \
	"$tmp/tandemd-b.log" || { cat "$tmp/tandemd-b.log"; fail "the superblock error was not logged"; }
[ "$(field a role)" = Primary ] || fail "alice is $(field a role)"
echo "ok: a failed superblock write on the Secondary detached its disk, under pass_on too"

# the Primary goes on alone
sh_a "h.pwrite(b'B' * (1 << 20), 4 << 20); h.flush()" || fail "write while bob is detached"

# healed: attach and connect, the resync brings bob up to date
on b inject-fault none r0
on b attach r0 || fail "re-attach bob"
on b connect r0 || fail "connect bob"
wait_for b disk UpToDate 60
wait_for a peer_disk UpToDate 30
same_data "after the healed disk resynced"
echo "ok: healed and attached again, bob resynced; the disks are identical"

# A flush that fails on the Secondary: the barrier it belongs to is not
# acknowledged (the writes are not known to be durable there); bob drops
# the connection, so alice keeps them out of sync and its client's FLUSH
# completes on alice's own disk.
on b inject-fault flush r0
sh_a "h.pwrite(b'C' * 4096, 8 << 20); h.flush()" || fail "write + flush while bob's flushes fail"
grep -q 'flushing the backing device failed.*not acknowledged; dropping the connection' \
	"$tmp/tandemd-b.log" || { tail -n 30 "$tmp/tandemd-b.log"; fail "bob acknowledged a failed flush"; }
# what alice acknowledged is on alice's disk
dd if="$tmp/a.img" bs=4096 skip=2048 count=1 2>/dev/null | cmp -s - "$(printf 'C%.0s' $(seq 4096) >"$tmp/c4k"; echo "$tmp/c4k")" ||
	fail "the acknowledged write is not on alice's disk"
echo "ok: a failed flush on the Secondary was not acknowledged; the connection dropped"
on b inject-fault none r0
on b attach r0 2>/dev/null || true # detached after the error, or still attached (pass_on)
wait_for b disk UpToDate 60
wait_for a peer_disk UpToDate 30
same_data "after the failed flush resynced"
echo "ok: after the failed flush, bob resynced; the disks are identical"

#!/bin/sh
# Checksum-based resync (csums-alg) on two nodes: while disconnected the
# Primary writes 16 MiB again with the data the peer already has (marked
# out of sync, but equal) and 4 MiB of new data; after the reconnect only
# the 4 MiB travel (bob's nr counter, DRBD's "had equal checksums" line)
# and the disks are identical. With csums-after-crash-only the same
# resync copies all 20 MiB, and the resync after a crash of the Primary
# goes by checksums again.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdcopy
requires python3

new_image "$tmp/a.img" 64M
new_image "$tmp/b.img" 64M
head -c 16M /dev/urandom >"$tmp/src"
head -c 4M /dev/urandom >"$tmp/new"

# start_pair NET-OPTIONS: both nodes up and connected, alice Primary with
# $tmp/src replicated
start_pair() {
	write_repl_conf "$tmp/t.conf" "connect-int 1; timeout 5; $1"
	blank_pair
	nbdcopy "$tmp/src" "$(nbd_uri_of a)"
	# protocol C: every write nbdcopy saw acknowledged is on bob's disk;
	# nothing may still be in flight on either node
	wait_idle a
	wait_idle b
	same_data "after the first copy"
}

stop_pair() {
	on a down r0 || true
	on b down r0 || true
	stop_node a
	stop_node b
}

# resync_while_disconnected: 16 MiB of equal data and 4 MiB of new data
# written on the disconnected Primary, then reconnect and resync; sets
# $copied to the KiB bob received during the resync
resync_while_disconnected() {
	on a disconnect r0
	cat "$tmp/src" "$tmp/new" >"$tmp/both"
	nbdcopy "$tmp/both" "$(nbd_uri_of a)"
	[ "$(field a oos)" = 20480 ] || fail "alice oos $(field a oos) KiB, expected 20480"
	nr0=$(field b nr)
	on a connect r0
	on a wait-connect --timeout 20 r0 >/dev/null || fail "reconnect"
	on b wait-sync --timeout 60 r0 >/dev/null || fail "wait-sync"
	wait_for a oos 0
	wait_for b oos 0
	copied=$(( $(field b nr) - nr0 ))
	same_data "after the resync"
}

# csums-alg: only the differing 4 MiB travel
start_pair 'csums-alg sha256;'
: >"$tmp/tandemd-b.log"
resync_while_disconnected
if [ "$copied" -lt 4096 ] || [ "$copied" -gt 4352 ]; then
	grep 'resync\|checksum' "$tmp/tandemd-b.log"
	fail "bob received $copied KiB, expected 4096"
fi
grep -q 'resync as SyncTarget: 20480 KiB to copy, checksum-based with sha256' "$tmp/tandemd-b.log" ||
	{ grep 'resync' "$tmp/tandemd-b.log"; fail "no checksum-based resync logged on bob"; }
grep -q '80 % had equal checksums, eliminated: 16384K; transferred 4096K total 20480K' \
	"$tmp/tandemd-b.log" || { grep 'checksums' "$tmp/tandemd-b.log"; fail "bob: csums summary"; }
grep -q '80 % had equal checksums, eliminated: 16384K; transferred 4096K total 20480K' \
	"$tmp/tandemd-a.log" || { grep 'checksums' "$tmp/tandemd-a.log"; fail "alice: csums summary"; }
echo "ok: csums-alg sha256: 20 MiB out of sync, $copied KiB copied, 16 MiB equal; disks identical"
stop_pair

# csums-after-crash-only: a plain resync copies everything
: >"$tmp/tandemd-a.log"
: >"$tmp/tandemd-b.log"
start_pair 'csums-alg crc32c; csums-after-crash-only;'
resync_while_disconnected
[ "$copied" -ge 20480 ] || fail "bob received $copied KiB, expected all 20480"
grep -q 'csums-after-crash-only: no Primary crashed' "$tmp/tandemd-b.log" ||
	fail "bob did not log why it copies everything"
! grep -q 'had equal checksums' "$tmp/tandemd-b.log" || fail "checksums used without a crash"
echo "ok: csums-after-crash-only: no crash, $copied KiB copied without checksums"

# ... but after a crash of the Primary its hot extents resync by checksum:
# they are all equal, so nothing travels
nbdcopy "$tmp/both" "$(nbd_uri_of a)"
# the crash comes after every write is acknowledged by both disks (protocol
# C), so bob holds the same data and the checksums must all be equal
wait_idle a
wait_idle b
kill -9 "$pid_a"
wait "$pid_a" 2>/dev/null || true
pid_a=
wait_for b connection WFConnection 20
nr0=$(field b nr)
start_node a
on a up r0
wait_for a connection Connected 30
on b wait-sync --timeout 60 r0 >/dev/null || fail "wait-sync after the crash"
grep -q 'activity log replayed' "$tmp/tandemd-a.log" || fail "no AL replay on alice"
grep -q '100 % had equal checksums' "$tmp/tandemd-b.log" ||
	{ grep 'resync\|checksum' "$tmp/tandemd-b.log"; fail "no checksum-based resync after the crash"; }
copied=$(( $(field b nr) - nr0 ))
[ "$copied" -eq 0 ] || fail "bob received $copied KiB after the crash, expected 0"
same_data "after the crash"
echo "ok: csums-after-crash-only: after kill -9 of the Primary the resync went by checksums, 0 KiB copied"
stop_pair

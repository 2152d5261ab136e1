#!/bin/sh
# data-integrity-alg on two nodes. With fault injection (tandemd with
# TANDEM_FAULT_INJECTION=1 TANDEM_CORRUPT_DATA=N: the N-th P_DATA leaves
# alice with a byte changed after it was digested) bob logs "Digest
# integrity check FAILED", drops the connection, both reconnect and
# resync, the client sees no error, the disks end up identical and
# status counts the failure. Without injection nothing fails under
# writes, nor in a resync (whose data packets carry digests too).
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdcopy
requires python3

new_image "$tmp/a.img" 64M
new_image "$tmp/b.img" 64M
head -c 16M /dev/urandom >"$tmp/src"
head -c 16M /dev/urandom >"$tmp/src2"

# start_pair NET-OPTIONS: both nodes up and connected, alice Primary
start_pair() {
	write_repl_conf "$tmp/t.conf" "connect-int 1; timeout 5; $1"
	blank_pair
}

stop_pair() {
	on a down r0 || true
	on b down r0 || true
	stop_node a
	stop_node b
}

# the 10th data packet is corrupted on the way: found, reconnected, resynced
export TANDEM_FAULT_INJECTION=1 TANDEM_CORRUPT_DATA=10
start_pair 'data-integrity-alg crc32c;'
[ "$(field b integrity_failures)" = 0 ] || fail "integrity_failures not 0 at the start"
nbdcopy "$tmp/src" "$(nbd_uri_of a)" || fail "the client saw an error"
grep -q 'fault injection: P_DATA #10 ' "$tmp/tandemd-a.log" ||
	{ tail -n 20 "$tmp/tandemd-a.log"; fail "alice did not corrupt P_DATA #10"; }
wait_log b 'Digest integrity check FAILED' 30
grep -q 'connection lost: .*(ProtocolError)' "$tmp/tandemd-b.log" ||
	fail "bob did not drop the connection"
on a wait-connect --timeout 20 r0 >/dev/null || fail "no reconnect"
on b wait-sync --timeout 60 r0 >/dev/null || fail "no resync"
wait_for a connection Connected
wait_for b disk UpToDate
wait_for a oos 0
grep -q 'resync as SyncTarget' "$tmp/tandemd-b.log" || fail "bob did not resync"
# bob clears a block once its resync write is done: nothing left to copy,
# nothing in flight
wait_for b oos 0
wait_idle a
wait_idle b
same_data "after the corrupted packet"
cmp -n 16777216 "$tmp/src" "$tmp/b.img" || fail "bob does not hold the client's data"
[ "$(field b integrity_failures)" = 1 ] || fail "bob: integrity_failures $(field b integrity_failures)"
[ "$(field a integrity_failures)" = 0 ] || fail "alice: integrity_failures $(field a integrity_failures)"
echo "ok: crc32c: a corrupted P_DATA was caught, reconnected, resynced; bob counts 1 failure"
stop_pair
unset TANDEM_FAULT_INJECTION TANDEM_CORRUPT_DATA

# without injection: sha256 under writes and in a resync, nothing fails
: >"$tmp/tandemd-a.log"
: >"$tmp/tandemd-b.log"
start_pair 'data-integrity-alg sha256;'
nbdcopy "$tmp/src2" "$(nbd_uri_of a)" || fail "writes with sha256"
on a disconnect r0
nbdcopy "$tmp/src" "$(nbd_uri_of a)" || fail "writes while disconnected"
on a connect r0
on a wait-connect --timeout 20 r0 >/dev/null || fail "reconnect"
on b wait-sync --timeout 60 r0 >/dev/null || fail "wait-sync"
wait_for a oos 0
nbdcopy "$tmp/src2" "$(nbd_uri_of a)" || fail "writes after the resync"
# protocol C: what nbdcopy saw acknowledged is on bob's disk
wait_idle a
wait_idle b
same_data "with sha256"
! grep -q 'Digest integrity check FAILED\|ProtocolError' "$tmp/tandemd-a.log" "$tmp/tandemd-b.log" ||
	fail "a false integrity failure"
[ "$(field b integrity_failures)" = 0 ] || fail "bob: integrity_failures $(field b integrity_failures)"
[ "$(field a connection)" = Connected ] || fail "alice: $(field a connection)"
echo "ok: sha256 without injection: 48 MiB written, 16 MiB resynced, no integrity failure"
stop_pair

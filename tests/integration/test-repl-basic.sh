#!/bin/sh
# Two nodes in two network namespaces: connect with CRAM-HMAC, the initial
# full sync after primary --force, protocol C replication of NBD writes
# (both disks identical), disconnect + writes + connect = a resync of only
# the changed blocks, and a wrong shared secret refused (StandAlone).
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdcopy

new_image "$tmp/a.img" 64M
new_image "$tmp/b.img" 64M
write_repl_conf "$tmp/t.conf" 'protocol C; cram-hmac-alg sha256; shared-secret "s3cret";'
on a create-md --force r0 >/dev/null
on b create-md --force r0 >/dev/null
start_node a
start_node b
on a up r0
on b up r0
wait_for a connection Connected
wait_for b connection Connected
[ "$(field a disk)" = Inconsistent ] && [ "$(field b peer_disk)" = Inconsistent ] ||
	fail "fresh nodes: $(field a disk)/$(field b peer_disk)"
echo "ok: connected (authenticated), both Inconsistent"

# the initial full sync
on a primary --force r0
wait_for b disk UpToDate
wait_for a peer_disk UpToDate
wait_for a connection Connected
grep -q 'resync as SyncSource' "$tmp/tandemd-a.log" || fail "no resync logged on alice"
grep -q 'resync done' "$tmp/tandemd-b.log" || fail "no resync end logged on bob"
same_data "after the initial sync"
echo "ok: primary --force: full sync to bob, disks identical"

# protocol C: every acknowledged write is on both disks
head -c 16M /dev/urandom >"$tmp/src"
nbdcopy "$tmp/src" "$(nbd_uri_of a)"
same_data "after 16 MiB of writes"
[ "$(field a oos)" = 0 ] || fail "out of sync after replicated writes: $(field a oos) KiB"
echo "ok: 16 MiB written through NBD reached both disks"

# disconnect, write 1 MiB, reconnect: only the changed blocks resync
on b disconnect r0
wait_for b connection StandAlone
wait_for a connection WFConnection
head -c 1M /dev/urandom >"$tmp/src2"
nbdcopy "$tmp/src2" "$(nbd_uri_of a)"
oos=$(field a oos)
[ "$oos" -ge 1024 ] && [ "$oos" -le 1100 ] || fail "alice marks $oos KiB out of sync, expected ~1024"
ns0=$(field a ns)
on b connect r0
wait_for a connection Connected
wait_for b disk UpToDate
[ "$(field a oos)" = 0 ] || fail "still out of sync after the resync: $(field a oos) KiB"
moved=$(( $(field a ns) - ns0 ))
[ "$moved" -ge 1024 ] && [ "$moved" -le 1200 ] || fail "the resync sent $moved KiB, expected ~1024"
grep -q 'resync as SyncSource: 10[0-9][0-9] KiB to copy' "$tmp/tandemd-a.log" ||
	{ grep 'resync as' "$tmp/tandemd-a.log"; fail "not a bitmap-based resync of ~1 MiB"; }
same_data "after the reconnect"
echo "ok: after a disconnect only the 1 MiB written meanwhile was resynced ($moved KiB sent)"

# a wrong shared secret: StandAlone with a clear message, and no retry
on a secondary r0
on b down r0
stop_node b
write_repl_conf "$tmp/bad.conf" 'protocol C; cram-hmac-alg sha256; shared-secret "wrong";'
start_node b "$tmp/bad.conf"
conf_of=$tmp/bad.conf on b up r0
conf_of=$tmp/bad.conf wait_for b connection StandAlone
[ "$(field a connection)" != Connected ] || fail "alice connected to a peer with the wrong secret"
grep -q 'Authentication of peer failed' "$tmp/tandemd-b.log" || fail "no authentication failure logged"
echo "ok: a wrong shared-secret is refused: StandAlone, 'Authentication of peer failed'"

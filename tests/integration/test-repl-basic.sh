#!/bin/sh
# Two nodes in two network namespaces: connect with CRAM-HMAC, the initial
# full sync after primary --force, protocol C replication of NBD writes
# (both disks identical), disconnect + writes + connect = a resync of only
# the changed blocks, and a wrong shared secret refused without a state change.
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

# writes over 256 KiB go to the peer in pieces as their payload arrives:
# odd sizes, FUA, and a client that hangs up in the middle of a payload
if [ -x /usr/bin/nbdsh ]; then
	nbdsh_ -u "$(nbd_uri_of a)" -c '
import os
h.pwrite(os.urandom(788 * 1024), 3 * 1024 * 1024 + 4096)
h.pwrite(os.urandom(4 * 1024 * 1024), 8 * 1024 * 1024, nbd.CMD_FLAG_FUA)
h.pwrite(os.urandom(256 * 1024 + 512), 20 * 1024 * 1024 + 512)
h.flush()' || fail "large writes"
	same_data "after writes of 788 KiB, 4 MiB (FUA) and 256.5 KiB"
	[ "$(field a oos)" = 0 ] || fail "out of sync after large writes: $(field a oos) KiB"
	/usr/bin/python3 - "$tmp/run-a/r0.nbd" <<'PY' || fail "raw client"
import socket, struct, sys, os
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
def recvn(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: break
        b += c
    return b
recvn(18); s.sendall(struct.pack(">I", 3))
s.sendall(b"IHAVEOPT" + struct.pack(">II", 1, 2) + b"r0")
recvn(10)
# a 1 MiB write at 40 MiB, of which only 300 KiB arrive
s.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 1, 5, 40 << 20, 1 << 20))
s.sendall(os.urandom(300 * 1024))
s.close()
PY
	wait_for a clients 0
	oos=$(field a oos)
	[ "$oos" -ge 1024 ] || fail "a write cut short after a piece went to bob: $oos KiB out of sync, expected 1 MiB"
	on a resync-oos r0 >/dev/null || fail "resync-oos"
	wait_for a oos 0
	same_data "after the cut-short write was resynced"
	# still served; the flush makes the peer acknowledge the last epoch
	# before the disconnect below (unacknowledged ones are resynced)
	nbdcopy --flush "$tmp/src" "$(nbd_uri_of a)"
	echo "ok: writes in pieces reached both disks; a payload cut short is marked out of sync and resynced"
else
	echo "SKIP: large writes in pieces: nbdsh (python3-libnbd) is not installed"
fi

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

# a wrong shared secret: refused before authentication, so nothing changes
# (doc/wire-protocol.md §5.5): both stay in WFConnection and retry, the
# refusal is logged with the connection's real address; once the secret is
# right again they connect
on a secondary r0
on b down r0
stop_node b
write_repl_conf "$tmp/bad.conf" 'protocol C; cram-hmac-alg sha256; shared-secret "wrong";'
log_mark a
log_mark b
start_node b "$tmp/bad.conf"
conf_of=$tmp/bad.conf on b up r0
# (each side logs its first refusal at once, then one per 10 s)
wait_log a "connection from $ip_b:[0-9]+ refused: Authentication of peer failed"
# bob counts his refusals too (which one his rate-limited log shows first
# depends on who connected first, so count them instead of reading it)
bob_refused() { [ "$(conf_of=$tmp/bad.conf field b refused)" -ge 1 ]; }
wait_until 30 "bob to count a refusal of alice" bob_refused
for n in a b; do
	c=$(conf_of=$tmp/bad.conf field $n connection)
	[ "$c" = WFConnection ] || fail "$n is $c after a failed authentication, not WFConnection"
done
echo "ok: a wrong shared-secret is refused with the peer's address, both stay WFConnection"
on b down r0
stop_node b
start_node b
on b up r0
wait_for a connection Connected
wait_for b connection Connected
echo "ok: with the right secret again they connect"

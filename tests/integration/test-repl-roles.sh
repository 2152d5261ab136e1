#!/bin/sh
# Two nodes in network namespaces, protocol C: the roles reversed; kill -9
# of the Primary during writes, then the Secondary promoted: every write
# the client saw acknowledged is there; the crashed node comes back as
# SyncTarget. Refusals: an incompatible protocol, unrelated data.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdsh
requires nbdcopy

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

# roles reversed: bob writes, alice receives; verified after down
on a secondary r0
on b primary r0
head -c 8M /dev/urandom >"$tmp/src"
nbdcopy "$tmp/src" "$(nbd_uri_of b)"
on b secondary r0
on a down r0
on b down r0
cmp -n $((8 << 20)) "$tmp/src" "$tmp/a.img" || fail "bob's writes are not on alice's disk"
echo "ok: roles reversed: bob's 8 MiB are on alice's disk after down"

# kill -9 the Primary during writes; the client logs each acknowledged write
on a up r0
on b up r0
on a wait-connect --timeout 20 r0 >/dev/null
on a primary r0
PATH=/usr/bin:$PATH nbdsh -u "$(nbd_uri_of a)" -c "
import random, struct, sys
random.seed(7)
log = open('$tmp/acked', 'w', buffering=1)
seq = 0
try:
    while True:
        seq += 1
        off = random.randrange(0, 16384) * 4096
        h.pwrite(struct.pack('>QQ', seq, off) * 256, off)
        log.write('%d %d\n' % (off, seq))
except nbd.Error:
    pass
" 2>/dev/null &
client=$!
# kill -9 once 200 writes are acknowledged, not after a guessed time
acked_200() {
	kill -0 "$client" 2>/dev/null || fail "the writer died before the kill"
	[ "$(wc -l <"$tmp/acked" 2>/dev/null || echo 0)" -ge 200 ]
}
wait_until 60 "200 acknowledged writes before the kill" acked_200
kill -9 "$pid_a"
wait "$pid_a" 2>/dev/null || true
pid_a=
wait "$client" 2>/dev/null || true
acked=$(wc -l <"$tmp/acked")
[ "$acked" -gt 50 ] || fail "only $acked writes acknowledged before the kill"
wait_for b connection WFConnection 20
on b primary r0
PATH=/usr/bin:$PATH nbdsh -u "$(nbd_uri_of b)" -c "
import struct
last = {}
for line in open('$tmp/acked'):
    off, seq = map(int, line.split())
    last[off] = max(seq, last.get(off, 0))
bad = 0
for off, seq in last.items():
    got, goff = struct.unpack('>QQ', h.pread(16, off))
    if goff != off or got < seq:
        bad += 1
assert bad == 0, '%d of %d acknowledged blocks missing on bob' % (bad, len(last))
print('checked', len(last))
" >"$tmp/check" || { cat "$tmp/check"; fail "acknowledged writes lost"; }
echo "ok: kill -9 of the Primary: all $acked acknowledged writes are on bob ($(cat "$tmp/check") blocks)"

# the crashed node returns: AL replay, then SyncTarget from bob
start_node a
on a up r0
wait_for a connection Connected 30
wait_for a disk UpToDate 30
grep -q 'activity log replayed' "$tmp/tandemd-a.log" || fail "no AL replay on alice"
on b secondary r0
on a down r0
on b down r0
same_data "after the crashed primary came back"
echo "ok: the crashed Primary came back as SyncTarget; disks identical"

# an incompatible protocol is refused
write_repl_conf "$tmp/a.conf" 'protocol A; connect-int 1; timeout 5;'
stop_node a
start_node a "$tmp/a.conf"
conf_of=$tmp/a.conf on a up r0
on b up r0
conf_of=$tmp/a.conf wait_for a connection StandAlone 20
grep -q 'incompatible communication protocols' "$tmp/tandemd-a.log" || fail "not logged"
echo "ok: protocol A against C refused: StandAlone, 'incompatible communication protocols'"
conf_of=$tmp/a.conf on a down r0
stop_node a

# unrelated data is refused
on b down r0
on a set-gi --force 1234567890ABCDE0:0:0:0 r0 >/dev/null
start_node a
on a up r0
on b up r0
wait_for a connection StandAlone 20
grep -q 'Unrelated data' "$tmp/tandemd-a.log" || fail "unrelated data not logged"
echo "ok: unrelated data refused: StandAlone, 'Unrelated data'"

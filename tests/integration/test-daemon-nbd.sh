#!/bin/sh
# A StandAlone Primary serves its volume over NBD to real clients:
# nbdinfo (size, flags), nbdcopy round trip compared with the backing
# file, nbdsh flush/FUA/trim/zero; demotion is refused while a client is
# connected (exit 11); down leaves clean metadata.
. "$(dirname "$0")/functions.sh"
requires nbdinfo
requires nbdcopy
[ -x /usr/bin/nbdsh ] || skip "nbdsh is not installed (python3-libnbd)"

new_image "$tmp/d.img" 256M
write_conf "$tmp/t.conf" "$tmp/d.img" internal
adm create-md --force r0 >/dev/null
start_tandemd
ctl up r0 || fail "up"
set +e
ctl primary r0 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 17 ] || fail "primary on Inconsistent data: exit $rc, expected 17"
grep -q 'Need access to UpToDate data' "$tmp/err" || fail "primary refusal message: $(cat "$tmp/err")"
ctl primary --force r0 || fail "primary --force"
[ "$(ctl role r0)" = "Primary/Unknown" ] || fail "role: $(ctl role r0)"
[ "$(ctl dstate r0)" = "UpToDate/DUnknown" ] || fail "dstate while up: $(ctl dstate r0)"
[ "$(ctl cstate r0)" = "WFConnection" ] || fail "cstate: $(ctl cstate r0) (up connects: WFConnection while the peer is away)"
ctl sh-status r0 | grep -qx '_role=Primary' || fail "sh-status"
# the data path runs where io-engine (or TANDEM_IO) says; io_uring must
# really be used (the engine falls back to threads where io_uring cannot be
# set up)
io=$(ctl status --json r0 | sed -n 's/.*"io": *"\([a-z_]*\)".*/\1/p')
want=${TANDEM_IO:-${IO_ENGINE:-inline}}
if [ "$want" = io_uring ] && [ "$io" = threads ]; then
	grep -q 'io_uring unavailable' "$tmp/tandemd.log" &&
		skip "io_uring cannot be set up here: $(grep 'io_uring unavailable' "$tmp/tandemd.log")"
fi
[ "$io" = "$want" ] || fail "status says I/O via '$io', expected $want"
echo "ok: data I/O via $io"

nbdinfo --json "$(nbd_uri)" >"$tmp/info" || fail "nbdinfo"
size=$(ctl status --json r0 | sed -n 's/.*"size_sect": *\([0-9]*\).*/\1/p')
grep -q "\"export-size\": $((size * 512))" "$tmp/info" || { cat "$tmp/info"; fail "export size"; }
for f in can_flush can_fua can_trim can_zero can_multi_conn; do
	grep -q "\"$f\": true" "$tmp/info" || fail "nbdinfo: $f is not true"
done
echo "ok: nbdinfo: $((size * 512)) bytes, flush/fua/trim/zero/multi-conn"

head -c 48M /dev/urandom >"$tmp/src"
nbdcopy "$tmp/src" "$(nbd_uri)" || fail "nbdcopy to the export"
nbdcopy "$(nbd_uri)" "$tmp/back" || fail "nbdcopy from the export"
cmp -n $((48 * 1024 * 1024)) "$tmp/src" "$tmp/back" || fail "read back differs"
cmp -n $((48 * 1024 * 1024)) "$tmp/src" "$tmp/d.img" || fail "backing file differs"
echo "ok: nbdcopy round trip of 48 MiB, backing file identical"

nbdsh_ -u "$(nbd_uri)" -c '
import os
buf = os.urandom(65536)
h.pwrite(buf, 1048576, nbd.CMD_FLAG_FUA)
assert h.pread(65536, 1048576) == buf
h.flush()
h.zero(65536, 1048576)
assert h.pread(65536, 1048576) == bytes(65536)
h.trim(65536, 2097152)
h.flush()
try:
    h.pread(4096, h.get_size())
    raise SystemExit("read past the end was accepted")
except nbd.Error as e:
    pass
' || fail "nbdsh flush/fua/zero/trim"
cmp -n 65536 -i 1048576:1048576 /dev/zero "$tmp/d.img" || fail "zeroed range not zero on disk"
echo "ok: nbdsh: FUA write, flush, zero, trim, out-of-range read refused"

# a client that stays until it is killed (a simple command, so that $! is
# nbdsh itself); the daemon counts it first
PATH=/usr/bin:$PATH nbdsh -u "$(nbd_uri)" -c 'import time; time.sleep(120)' &
client=$!
clients_are() { [ "$(ctl_field clients)" = "$1" ]; }
wait_until 30 "the NBD client to be counted in status" clients_are 1
set +e
ctl secondary r0 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 11 ] || fail "secondary with a client connected: exit $rc, expected 11"
grep -q 'held open' "$tmp/err" || fail "secondary refusal message: $(cat "$tmp/err")"
kill $client 2>/dev/null || true
wait $client 2>/dev/null || true
wait_until 30 "the NBD client to be gone from status" clients_are 0
ctl secondary r0 || fail "secondary after the client left"
echo "ok: demotion refused while a client is connected (exit 11), done after"

ctl status --verbose r0
ctl down r0 || fail "down"
adm check-md r0 | grep -q 'superblock: OK .*(clean' || fail "metadata not clean after down"
# down: the metadata says Consistent (drbdmeta: UpToDate only with peer-outdated)
[ "$(ctl dstate r0)" = "Consistent" ] || fail "dstate from the metadata when down: $(ctl dstate r0)"
adm get-gi r0
echo "ok: down leaves clean metadata"

#!/bin/sh
# kill -9 of a Primary's tandemd during writes: at the next attach the
# activity log is replayed, its hot extents are marked out of sync
# (visible in dump-md and in status oos), and the node knows it was a
# crashed primary.
. "$(dirname "$0")/functions.sh"
requires nbdcopy

new_image "$tmp/d.img" 512M
write_conf "$tmp/t.conf" "$tmp/d.img" internal
adm create-md --force r0 >/dev/null
start_tandemd
ctl up r0 && ctl primary --force r0 || fail "up/primary"
# flush the bitmap of the forced promotion out of the picture: a clean cycle
head -c 300M /dev/urandom >"$tmp/src"
nbdcopy "$tmp/src" "$(nbd_uri)" &
copy=$!
sleep 0.7
kill -9 "$tandemd_pid"
wait "$tandemd_pid" 2>/dev/null || true
tandemd_pid=
wait $copy 2>/dev/null || true

adm check-md r0 >"$tmp/check" || true
grep -q 'in use' "$tmp/check" || { cat "$tmp/check"; fail "metadata not marked in use after kill -9"; }
grep -q 'update transactions' "$tmp/check" || fail "check-md output"
echo "ok: after kill -9 the metadata is marked in use"

start_tandemd
ctl up r0 || { cat "$tmp/tandemd.log"; fail "up after the crash"; }
grep -q 'activity log replayed: [1-9][0-9]* extents' "$tmp/tandemd.log" ||
	{ cat "$tmp/tandemd.log"; fail "no AL replay logged"; }
extents=$(sed -n 's/.*activity log replayed: \([0-9]*\) extents.*/\1/p' "$tmp/tandemd.log")
oos=$(ctl status --json r0 | sed -n 's/.*"oos": *\([0-9]*\).*/\1/p')
[ "$oos" -ge $((extents * 4096)) ] || fail "status oos $oos KiB < $extents extents of 4 MiB"
echo "ok: replayed $extents hot extents; status shows $oos KiB out of sync"
ctl down r0
gi=$(adm get-gi r0)
[ "${gi##*:}" = 1 ] || fail "not marked as a crashed primary: $gi"
bits=$(adm dump-md r0 | sed -n 's/^# bits-set \([0-9]*\);/\1/p')
[ "$bits" -ge $((extents * 1024)) ] || fail "dump-md: $bits bits set"
echo "ok: dump-md shows $bits bits out of sync; get-gi: crashed primary"

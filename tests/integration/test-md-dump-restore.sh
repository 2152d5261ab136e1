#!/bin/sh
# dump-md | restore-md round trips through tandem and through drbdmeta
# (with the real flags, which drbdmeta 9.22's own dump loses), and
# check-md reports a healthy volume.
. "$(dirname "$0")/functions.sh"

new_image "$tmp/a.img" 300M
write_conf "$tmp/t.conf" "$tmp/a.img" internal
adm create-md --force r0 >/dev/null || fail "create-md"
adm set-gi --force 1234567890ABCDEE:FEDCBA0987654320:1111111111111110::1:1:0:1:0:1:0 r0 >/dev/null 2>&1 || fail "set-gi"
# give the volume a size (la_size_sect, big-endian u64 at the start of the
# superblock: 614000 = 0x95E70) and some bitmap bits
md=$(adm dump-md r0 | sed -n 's/^# md_offset \([0-9]*\)/\1/p')
printf '\000\000\000\000\000\011\136\160' | dd of="$tmp/a.img" bs=1 seek="$md" conv=notrunc status=none
bm=$(adm dump-md r0 | sed -n 's/^# bm_offset \([0-9]*\)/\1/p')
printf '\001\000\000\000\000\000\000\200\377\377' | dd of="$tmp/a.img" bs=1 seek="$bm" conv=notrunc status=none
adm dump-md r0 >"$tmp/before" || fail "dump-md"
grep -q 'flags 0x000000B5' "$tmp/before" || fail "dump-md does not show the real flags"
grep -q '^la-size-sect 614000;' "$tmp/before" || fail "la-size-sect not shown"
new_image "$tmp/a.img" 300M
adm create-md --force r0 >/dev/null
adm restore-md --force "$tmp/before" r0 2>/dev/null || fail "restore-md"
adm dump-md r0 >"$tmp/after" || fail "dump-md after restore-md"
strip_dump "$tmp/before" >"$tmp/x"; strip_dump "$tmp/after" >"$tmp/y"
diff -u "$tmp/x" "$tmp/y" || fail "restore-md did not restore the dump"
grep -q '0x8000000000000001; 0x000000000000FFFF;' "$tmp/after" || fail "bitmap bits lost"
grep -q 'flags 0x000000B5' "$tmp/after" || fail "flags lost"
adm check-md r0 >"$tmp/check" || { cat "$tmp/check"; fail "check-md"; }
grep -q 'KiB out of sync' "$tmp/check" || fail "check-md output"
echo "ok: tandem dump-md | restore-md round trip keeps UUIDs, flags and bitmap"

# a broken dump is refused with its line number, the device untouched
sed 's/^bm-byte-per-bit 4096;/bm-byte-per-bit four;/' "$tmp/after" >"$tmp/bad"
sum=$(md5sum <"$tmp/a.img")
if adm restore-md --force "$tmp/bad" r0 2>"$tmp/err"; then fail "bad dump accepted"; fi
grep -q 'line [0-9]*:' "$tmp/err" || { cat "$tmp/err"; fail "no line number"; }
[ "$(md5sum <"$tmp/a.img")" = "$sum" ] || fail "a refused restore-md changed the device"
echo "ok: a broken dump is refused: $(cat "$tmp/err")"

if [ "$(id -u)" -eq 0 ] && command -v drbdmeta >/dev/null; then
	cp --sparse=always "$tmp/a.img" "$tmp/b.img"
	b=$(new_loop "$tmp/b.img")
	drbdmeta --force 0 v08 "$b" internal restore-md "$tmp/after" >/dev/null 2>&1 || fail "drbdmeta restore-md of our dump"
	[ "$(drbdmeta 0 v08 "$b" internal get-gi)" = "$(adm get-gi r0)" ] || fail "drbdmeta restored other UUIDs/flags"
	echo "ok: drbdmeta restore-md accepts our dump, flags included"
else
	echo "(drbdmeta part skipped: needs root and drbd-utils)"
fi

#!/bin/sh
# Bad metadata gives a clear error and leaves the device untouched:
# wrong magic, truncated device, bad offsets, a device too small, an
# existing filesystem signature, unclean metadata for dump-md.
. "$(dirname "$0")/functions.sh"

img=$tmp/data.img
write_conf "$tmp/t.conf" "$img" internal
expect_fail() { # VERB MESSAGE-PATTERN
	verb=$1; pat=$2
	before=$(md5sum <"$img")
	if adm $verb r0 >"$tmp/out" 2>&1; then fail "$verb succeeded on bad input"; fi
	grep -q -- "$pat" "$tmp/out" || { cat "$tmp/out"; fail "$verb: message lacks '$pat'"; }
	[ "$(md5sum <"$img")" = "$before" ] || fail "$verb changed the device"
	echo "ok: $verb: $(head -n1 "$tmp/out")"
}

new_image "$img" 64M
expect_fail get-gi "no v08 metadata found"
expect_fail dump-md "create-md"

adm create-md --force r0 >/dev/null || fail "create-md"
# existing metadata is not overwritten without --force
expect_fail create-md "found v08 metadata"
# wrong magic (offset 60 of the superblock: last 4 KiB block of 64 MiB)
printf '\001\002\003\004' | dd of="$img" bs=1 seek=$((64*1024*1024 - 4096 + 60)) conv=notrunc status=none
expect_fail get-gi "magic 0x01020304"
adm create-md --force r0 >/dev/null
# bm_offset out of range
printf '\377\377\000\000' | dd of="$img" bs=1 seek=$((64*1024*1024 - 4096 + 76)) conv=notrunc status=none
expect_fail dump-md "bm_offset"
adm create-md --force r0 >/dev/null
# the device shrank: the superblock is no longer where it must be
truncate -s 60M "$img"
expect_fail get-gi "no v08 metadata found"
# too small for any metadata
new_image "$img" 20K
expect_fail create-md "too small"
# a filesystem signature: create-md refuses without --force
new_image "$img" 64M
printf '\123\357' | dd of="$img" bs=1 seek=1080 conv=notrunc status=none
expect_fail create-md "found an ext2/3/4 filesystem"
# activity-log blocks with a bad checksum: one (a torn last write) is
# tolerated, more are reported; nothing is written by check-md
adm create-md --force r0 >/dev/null
al=$((64*1024*1024 - 4096 - 32768))
printf 'X' | dd of="$img" bs=1 seek=$((al + 100)) conv=notrunc status=none
adm check-md r0 >"$tmp/out" || fail "check-md with one torn AL block"
grep -q 'activity log: OK: .* 1 with a bad magic or checksum' "$tmp/out" || { cat "$tmp/out"; fail "torn block not reported"; }
printf 'X' | dd of="$img" bs=1 seek=$((al + 4096 + 100)) conv=notrunc status=none
expect_fail check-md "activity log: FAILED"
# unclean (in use) metadata: dump-md refuses, apply-al fixes
adm create-md --force r0 >/dev/null
printf '\203\164\002\154' | dd of="$img" bs=1 seek=$((64*1024*1024 - 4096 + 60)) conv=notrunc status=none
expect_fail dump-md "unclean"
adm apply-al r0 || fail "apply-al on unclean metadata"
adm dump-md r0 >/dev/null || fail "dump-md after apply-al"
echo "ok: apply-al made unclean metadata clean"

#!/bin/sh
# tandemadm reads metadata made by drbdmeta create-md and changed by
# drbdmeta set-gi / outdate: get-gi, show-gi, dstate and dump-md agree.
. "$(dirname "$0")/functions.sh"
requires_root
requires drbdmeta

new_image "$tmp/data.img" 256M
data=$(new_loop "$tmp/data.img")
write_conf "$tmp/t.conf" "$data" internal
drbdmeta --force 0 v08 "$data" internal create-md >/dev/null 2>&1 || fail "drbdmeta create-md"

for gi in 1234567890ABCDEF:FEDCBA0987654322:1111111111111110:2222222222222220:1:1:0:1:0:1:0 \
	  ::::0:0:1:0:1:0:1 ABCDEF0123456788::::1:1:1:1:1:1:1; do
	drbdmeta --force 0 v08 "$data" internal set-gi "$gi" >/dev/null 2>&1 || fail "set-gi $gi"
	for verb in get-gi show-gi dstate; do
		drbdmeta 0 v08 "$data" internal $verb >"$tmp/theirs" 2>&1
		adm $verb r0 >"$tmp/ours" 2>&1 || fail "$verb after set-gi $gi"
		diff -u "$tmp/theirs" "$tmp/ours" || fail "$verb differs after set-gi $gi"
	done
	drbdmeta --force 0 v08 "$data" internal dump-md >"$tmp/theirs" 2>/dev/null
	adm dump-md r0 >"$tmp/ours" || fail "dump-md after set-gi $gi"
	strip_dump "$tmp/theirs" >"$tmp/a"; strip_dump "$tmp/ours" >"$tmp/b"
	diff -u "$tmp/a" "$tmp/b" || fail "dump-md differs after set-gi $gi"
done
echo "ok: get-gi, show-gi, dstate, dump-md agree with drbdmeta"

# our set-gi, their reading
adm set-gi --force 0000000000000010:0:0:0:1:1:0:0:0:0:0 r0 >/dev/null 2>&1 || fail "our set-gi"
[ "$(drbdmeta 0 v08 "$data" internal get-gi)" = "0000000000000010:0000000000000000:0000000000000000:0000000000000000:1:1:0:0:0:0:0" ] ||
	fail "drbdmeta does not read our set-gi"
# outdate: both tools agree on the result
adm outdate r0 || fail "outdate"
[ "$(drbdmeta 0 v08 "$data" internal dstate)" = "Outdated" ] || fail "drbdmeta does not see Outdated"
echo "ok: drbdmeta reads what our set-gi and outdate wrote"

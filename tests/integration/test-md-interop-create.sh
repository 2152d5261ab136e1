#!/bin/sh
# tandemadm create-md writes what drbdmeta reads: dump-md and get-gi of
# drbdmeta equal ours, for internal, flexible and indexed metadata.
. "$(dirname "$0")/functions.sh"
requires_root
requires drbdmeta

check() { # DESC DRBDMETA-ARGS...
	desc=$1; shift
	adm create-md --force r0 >/dev/null || fail "$desc: create-md"
	drbdmeta --force 0 v08 "$@" dump-md >"$tmp/theirs" 2>"$tmp/err" ||
		fail "$desc: drbdmeta cannot read our metadata: $(cat "$tmp/err")"
	adm dump-md r0 >"$tmp/ours" || fail "$desc: dump-md"
	strip_dump "$tmp/theirs" >"$tmp/a"; strip_dump "$tmp/ours" >"$tmp/b"
	diff -u "$tmp/a" "$tmp/b" || fail "$desc: dump-md differs from drbdmeta's"
	[ "$(drbdmeta --force 0 v08 "$@" get-gi)" = "$(adm get-gi r0)" ] ||
		fail "$desc: get-gi differs"
	echo "ok: $desc"
}

new_image "$tmp/data.img" 1G
data=$(new_loop "$tmp/data.img")
write_conf "$tmp/t.conf" "$data" internal
check "internal 1 GiB" "$data" internal

new_image "$tmp/odd.img" 488281K
odd=$(new_loop "$tmp/odd.img")
write_conf "$tmp/t.conf" "$odd" internal
check "internal odd size" "$odd" internal

new_image "$tmp/meta.img" 4M
meta=$(new_loop "$tmp/meta.img")
write_conf "$tmp/t.conf" "$data" "$meta"
check "external flexible" "$meta" flex-external

new_image "$tmp/slots.img" 384M
slots=$(new_loop "$tmp/slots.img")
write_conf "$tmp/t.conf" "$data" "$slots[2]"
check "external indexed slot 2" "$slots" 2

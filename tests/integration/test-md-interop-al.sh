#!/bin/sh
# An activity log written by tandem (crashed Primary) replays under
# drbdmeta apply-al to the same bitmap as tandemadm apply-al gives, and
# every extent that was active at the crash is marked out of sync.
. "$(dirname "$0")/functions.sh"
requires_root
requires drbdmeta
: "${AL_WRITER:=$(dirname "$TANDEMADM")/../tests/integration/al-writer}"
[ -x "$AL_WRITER" ] || fail "al-writer not built ($AL_WRITER)"

run() { # DESC AL-EXTENTS SEED WRITES [STRIPES SIZE-KB]
	desc=$1 ext=$2 seed=$3 writes=$4
	new_image "$tmp/a.img" "${size:-512M}"
	write_conf "$tmp/t.conf" "$tmp/a.img" internal
	if [ $# -ge 6 ]; then
		adm create-md --force --al-stripes "$5" --al-stripe-size-kB "$6" r0 >/dev/null
	else
		adm create-md --force r0 >/dev/null
	fi || fail "$desc: create-md"
	"$AL_WRITER" "$tmp/a.img" "$ext" "$seed" "$writes" >"$tmp/active" || fail "$desc: al-writer"
	[ -s "$tmp/active" ] || fail "$desc: nothing active at the crash"
	cp --sparse=always "$tmp/a.img" "$tmp/b.img"
	b=$(new_loop "$tmp/b.img")
	drbdmeta 0 v08 "$b" internal apply-al 2>"$tmp/derr" || fail "$desc: drbdmeta apply-al: $(cat "$tmp/derr")"
	drbdmeta 0 v08 "$b" internal dump-md >"$tmp/theirs" 2>/dev/null || fail "$desc: drbdmeta dump-md"
	adm apply-al r0 2>"$tmp/terr" || fail "$desc: tandemadm apply-al: $(cat "$tmp/terr")"
	adm dump-md r0 >"$tmp/ours" || fail "$desc: dump-md"
	strip_dump "$tmp/theirs" >"$tmp/x"; strip_dump "$tmp/ours" >"$tmp/y"
	diff -u "$tmp/x" "$tmp/y" >"$tmp/diff" || { cat "$tmp/diff"; fail "$desc: bitmaps differ"; }
	diff "$tmp/derr" "$tmp/terr" || fail "$desc: apply-al messages differ"
	# every extent active at the crash: its 1024 bits are set
	bits=$(sed -n 's/^# bits-set \([0-9]*\);/\1/p' "$tmp/ours")
	[ "$bits" -ge $(($(wc -l <"$tmp/active") * 1024)) ] || fail "$desc: $bits bits for $(wc -l <"$tmp/active") extents"
	adm check-md r0 >/dev/null || fail "$desc: check-md after apply-al"
	echo "ok: $desc: $(wc -l <"$tmp/active") active extents, $bits bits, same as drbdmeta"
}

run "al-extents 257" 257 1 300
size=40G run "al-extents 1237, many transactions" 1237 7 3000
size=40G run "al-extents 6433 (the most the default ring holds)" 6433 3 4000
run "2 stripes of 32 KiB" 1237 11 500 2 32
run "al-extents 67, ring wraps" 67 5 5000

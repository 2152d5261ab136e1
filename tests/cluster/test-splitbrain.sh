#!/bin/sh
# Split brain under Pacemaker (issue 8, scenario 7).  UNSAFE LAB SETUP:
# stonith is disabled, so that a cut cluster can promote both halves.
# Never run a cluster like this.
#
# The replication link and the corosync ring are both cut; each half
# promotes its own instance, and each Primary writes its own data.  Then
# the halves are healed and tandem's after-sb policies (tandem.conf(5),
# ../shared/ref/drbd-semantics.md §6) resolve the split brain, one case each:
#   1. after-sb-1pri discard-secondary: the ring is healed first, Pacemaker
#      demotes one of the two Promoted instances, then the replication link
#      is healed; the node Pacemaker demoted is the Secondary at the
#      handshake and loses;
#   2. after-sb-0pri discard-least-changes: the clone is set to
#      target-role=Unpromoted before the link is healed, so both are
#      Secondary; the node that wrote less loses: here the winner of case 1,
#      so that each node loses once.
# Each time: the loser resyncs from the winner, the winner's writes are on
# both disks, the loser's are gone from them but saved in its save set
# (tandemadm sb-list/sb-show, doc/split-brain-saves.md), byte for byte; and
# the blocks the client wrote before the split read back intact.
#
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build
# (make check-cluster makes it); without it the test is skipped.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"

clone=mysql-data-clone
MIB=1048576
STATE=/var/lib/tandem	# tandemd's default state dir (per node: overlay)

tandem_cluster_up "" || die "cannot bring the tandem cluster up"
pass "the tandem clone runs, Promoted on $P"

echo "# UNSAFE LAB SETUP: stonith-enabled=false, so that both halves of a"
echo "# cut cluster promote (a split brain).  Never run a cluster like this."
check "stonith disabled (unsafe, for this test only)" tc stonith off

# The after-sb policies, in both nodes' tandem.conf; tandemd reads them at
# the next handshake (adjust).
policies='after-sb-0pri discard-least-changes; after-sb-1pri discard-secondary;'
for n in n1 n2; do
	on "$n" sed -i "s/^\(\tnet { .*\) }$/\1 $policies }/" /etc/tandem.conf ||
		die "$n: cannot edit /etc/tandem.conf"
	on "$n" tandemadm adjust mysql || die "$n: adjust failed"
	on "$n" tandemadm dump mysql | grep -q 'after-sb-1pri *discard-secondary' ||
		die "$n: the policies are not in effect: $(on "$n" tandemadm dump mysql)"
done
pass "after-sb policies set: $policies"

check "the client writes 200 blocks through $P's export" client_write "$P" 200

# tcw ARGS: tcluster wait, quietly
tcw() { "$TCLUSTER" wait "$@" >/dev/null; }
dstate_is() { [ "$(on "$1" tandemadm dstate mysql)" = "$2" ]; }
role_is() { [ "$(on "$1" tandemadm role mysql)" = "$2" ]; }
uri=$(client_uri)

# Each node writes its split-brain data at its own place, outside the
# client's first 8 MiB.
off_of() { [ "$1" = n1 ] && echo $((12 * MIB)) || echo $((20 * MIB)); }
other() { [ "$1" = n1 ] && echo n2 || echo n1; }

# put NODE KIB CASE: NODE writes KIB KiB of random data at its place
put() {
	head -c "$(($2 * 1024))" /dev/urandom >"$tmp/data-$3-$1"
	on "$1" nbdsh -u "$uri" \
		-c "h.pwrite(open('/dev/stdin', 'rb').read(), $(off_of "$1")); h.flush()" \
		<"$tmp/data-$3-$1"
}

# holds NODE FILE OFFSET: NODE's backing file has FILE at OFFSET
holds() {
	cmp -s -i "0:$3" -n "$(stat -c %s "$2")" "$2" "$TC_DIR/nodes/$1/disk.img"
}

# split CASE KIB-P KIB-U: cut both networks; the unpromoted half ($U)
# promotes itself; $P writes KIB-P KiB, $U KIB-U KiB
split() {
	check "$1: ring and replication link cut" tc cut n1 n2 all
	check "$1: $U promotes itself (split brain)" \
		tcw -n "$U" -t 30 promoted "$clone" "$U"
	check "$1: $P is still Promoted in its own view" \
		tcw -n "$P" -t 5 promoted "$clone" "$P"
	check "$1: both are Primary" retry 10 role_is "$U" Primary/Unknown
	check "$1: $P writes $2 KiB" put "$P" "$2" "$1"
	check "$1: $U writes $3 KiB" put "$U" "$3" "$1"
}

# resolved CASE WINNER LOSER POLICY: after the heal, LOSER resynced from
# WINNER, its blocks are saved, the disks are the same
resolved() {
	w=$2 l=$3
	check "$1: $l is UpToDate/UpToDate again" \
		retry 30 dstate_is "$l" UpToDate/UpToDate
	check "$1: $l resynced as SyncTarget from $w" \
		[ "$(nlog "$l" 'resync as SyncTarget')" -gt "$sync_l" ]
	check "$1: $w was the SyncSource" \
		[ "$(nlog "$w" 'resync as SyncSource')" -gt "$sync_w" ]
	tlog "$l" | grep 'split brain\|uuid_compare\|resync as' | tail -n 4 |
		sed "s/^/# $l: /"
	check "$1: $l logged its save" [ "$(nlog "$l" \
		"split brain: saved .* KiB of this node's diverging blocks")" -gt "$saves_l" ]
	check "$1: $w's write is on both disks" \
		both_hold "$tmp/data-$1-$w" "$(off_of "$w")"
	check "$1: $l's write is on neither disk" \
		neither_holds "$tmp/data-$1-$l" "$(off_of "$l")"
	check "$1: the two disks hold the same data" same_data "$w"
	# The save set: the newest one on the loser
	on "$l" tandemadm --state-dir "$STATE" sb-list mysql | sed "s/^/# $l: /"
	set=$(on "$l" tandemadm --state-dir "$STATE" sb-list --json mysql |
		python3 -c 'import json, sys; print(json.load(sys.stdin)[-1]["name"])')
	check "$1: a save set on $l ($set)" [ -n "$set" ]
	on "$l" tandemadm --state-dir "$STATE" sb-show --json mysql "$set" \
		>"$tmp/set.json"
	check "$1: the set is complete, lost by $l to $w, by $4, and covers $l's write" \
		python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
node, peer, policy, off, n = sys.argv[2:7]
off, n = int(off), int(n)
assert s["state"] == "complete", s["state"]
assert s["node"] == node and s["peer"] == peer, (s["node"], s["peer"])
assert policy in s["policy"], (policy, s["policy"])
assert any(r["offset"] <= off and off + n <= r["offset"] + r["length"]
           for r in s["ranges"]), s["ranges"]
' "$tmp/set.json" "$l" "$w" "$4" "$(off_of "$l")" \
		"$(stat -c %s "$tmp/data-$1-$l")"
	on "$l" dd if="$STATE/mysql/$set/image" iflag=skip_bytes,count_bytes \
		skip="$(off_of "$l")" count="$(stat -c %s "$tmp/data-$1-$l")" \
		status=none >"$tmp/saved"
	check "$1: the save set holds $l's write, byte for byte" \
		cmp -s "$tmp/saved" "$tmp/data-$1-$l"
}
both_hold() { holds n1 "$1" "$2" && holds n2 "$1" "$2"; }
neither_holds() { ! holds n1 "$1" "$2" && ! holds n2 "$1" "$2"; }
# nlog NODE ERE: how many lines of NODE's tandemd log match
nlog() { tlog "$1" | grep -c -- "$2"; }
# before_heal WINNER LOSER: the log counts resolved compares with
before_heal() {
	sync_w=$(nlog "$1" 'resync as SyncSource')
	sync_l=$(nlog "$2" 'resync as SyncTarget')
	saves_l=$(nlog "$2" 'split brain: saved')
}
# nsets NODE: the save sets on NODE
nsets() {
	on "$1" tandemadm --state-dir "$STATE" sb-list --json mysql |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}
# The data areas of the two backing files (the metadata is at their end).
same_data() {
	sect=$(on "$1" tandemadm status --json mysql 2>/dev/null |
		sed -n 's/.*"size_sect": *\([0-9]*\).*/\1/p' | head -n 1)
	[ -n "$sect" ] && cmp -n $((sect * 512)) \
		"$TC_DIR/nodes/n1/disk.img" "$TC_DIR/nodes/n2/disk.img"
}

# --- 1. after-sb-1pri discard-secondary ----------------------------------------
c=1pri
split $c 512 1024
check "$c: the ring is healed" tc uncut n1 n2 ring
check "$c: both online" tcw -t 30 online
check "$c: Pacemaker demotes one of the two" tcw -t 30 promoted "$clone"
W=$(tc promoted "$clone")
L=$(other "$W")
check "$c: $L is Unpromoted" tcw -t 30 role "$clone" "$L" Unpromoted
check "$c: $L is Secondary, $W Primary" retry 10 role_is "$L" Secondary/Unknown
echo "# $c: Pacemaker kept $W Promoted and demoted $L"
before_heal "$W" "$L"
check "$c: the replication link is healed" tc uncut n1 n2 repl
resolved $c "$W" "$L" after-sb-1pri=discard-secondary
check "$c: $W stays Promoted" [ "$(tc promoted "$clone")" = "$W" ]
check "$c: the client's blocks are intact" client_verify "$W"

# --- 2. after-sb-0pri discard-least-changes ------------------------------------
c=0pri
P=$W U=$L
# $P, the winner of case 1, writes 256 KiB, $U 2048 KiB: $P has the least
# changes and loses this time.
split $c 256 2048
check "$c: the ring is healed" tc uncut n1 n2 ring
check "$c: both online" tcw -t 30 online
check "$c: target-role=Unpromoted on the clone" tc exec n1 crm_resource \
	-r "$clone" --meta -p target-role -v Unpromoted
check "$c: nothing Promoted" tcw -t 30 nomatch 'Promoted: \['
check "$c: n1 is Secondary" retry 10 role_is n1 Secondary/Unknown
check "$c: n2 is Secondary" retry 10 role_is n2 Secondary/Unknown
echo "# $c: both Secondary: $P wrote 256 KiB, $U 2048 KiB"
before_heal "$U" "$P"
check "$c: the replication link is healed" tc uncut n1 n2 repl
resolved $c "$U" "$P" after-sb-0pri=discard-least-changes
check "$c: promotion allowed again" tc exec n1 crm_resource -r "$clone" \
	--meta -d target-role
check "$c: one Promoted again" tcw -t 30 promoted "$clone"
check "$c: the client's blocks are intact" client_verify "$(tc promoted "$clone")"
check "$c: one save set on each node" [ "$(nsets n1) $(nsets n2)" = "1 1" ]

if [ "$nfail" -gt 0 ]; then
	tc exec n1 crm_mon -1 -r -f >&2
	tail -n 40 "$TC_DIR"/nodes/*/log/tandemd.log >&2
fi
finish

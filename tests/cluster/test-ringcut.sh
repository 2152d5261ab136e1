#!/bin/sh
# A cut corosync ring (issue 8, scenario 6), with stonith: only the ring
# between the two nodes is cut (tcluster cut ... ring); the replication
# link stays up, and a client keeps writing through the promoted node.
# Each half loses the other and wants to fence it.  With
# priority-fencing-delay set and a priority on the promotable clone (as
# Pacemaker documents for promotable clones), fencing aimed at the node that
# holds the promoted role waits, so the node with the promoted role wins the
# race: it survives and stays Promoted, the other is fenced, and no
# acknowledged write is lost.  The promoted role is put on the node that
# is not the DC, which would win the race without the delay (tried with
# priority-fencing-delay=0: the DC fenced the promoted node).  The fenced node then comes back, resyncs and
# becomes Unpromoted.
#
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build
# (make check-cluster makes it); without it the test is skipped.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"

DELAY=5
clone=mysql-data-clone
tandem_cluster_up "" || die "cannot bring the tandem cluster up"
pass "the tandem clone runs, Promoted on $P"

# tcw ARGS: tcluster wait, quietly
tcw() { "$TCLUSTER" wait "$@" >/dev/null; }
dstate_is() { [ "$(on "$1" tandemadm dstate mysql)" = "$2" ]; }
state_of() { tc status | awk -v n="$1" '$1 == n { print $2 }'; }
# fenced_by VICTIM: the nodes that powered VICTIM off (fence.log lines
# "DATE TIME NODE[PID] ACTION VICTIM: off")
fenced_by() {
	awk -v v="$1:" '$5 == v && ($4 == "off" || $4 == "reboot") &&
		/: (reboot: )?off$/ { sub(/\[.*/, "", $3); print $3 }' \
		"$TC_DIR/shared/fence.log" 2>/dev/null | sort -u
}

check "stonith-enabled=true" tc exec n1 crm_attribute -t crm_config \
	-n stonith-enabled -v true
check "priority-fencing-delay=${DELAY}s" tc exec n1 crm_attribute \
	-t crm_config -n priority-fencing-delay -v "${DELAY}s"
check "priority=10 on $clone" tc exec n1 crm_resource -r "$clone" \
	--meta -p priority -v 10 >/dev/null
check "the fence devices run" tcw -t 20 nomatch 'fence-[a-z]*.*Stopped'
check "the cluster settles" tcw -t 30 settled

# The DC schedules its fencing at once, the other node only after it has
# made itself DC: without the delay the DC would win the race.  So that
# the test shows the delay at work, the promoted role goes to the node
# that is not the DC.
dc=$(tc state | awk '$1 == "dc" { print $2 }')
if [ "$dc" = "$P" ]; then
	tc exec n1 crm_resource -r "$clone" --move --promoted --node "$U" \
		>/dev/null 2>&1
	check "the promoted role moves away from the DC ($dc) to $U" \
		tcw -t 30 promoted "$clone" "$U"
	tc exec n1 crm_resource -r "$clone" --clear >/dev/null 2>&1
	check "the cluster settles after the move" tcw -t 30 settled
	t=$P P=$U U=$t
fi
dc=$(tc state | awk '$1 == "dc" { print $2 }')
dc_unpromoted() { [ "$dc" = "$U" ] && [ "$(tc promoted "$clone")" = "$P" ]; }
check "$U is the DC, $P holds the promoted role" dc_unpromoted

check "the client writes 200 blocks through $P's export" client_write "$P" 200

# The ring is cut while the client writes.
client_write "$P" 600 >"$tmp/client.out" 2>&1 &
cpid=$!
check "the client is writing" client_wait_acked 220
t0=$(date +%s)
check "the ring between n1 and n2 is cut" tc cut n1 n2 ring
# Whoever fences first wins; wait for the first power-off.
retry 30 grep -q ': off$' "$TC_DIR/shared/fence.log" 2>/dev/null
echo "# first fencing $(($(date +%s) - t0)) s after the cut:" \
	"$(grep ': off$' "$TC_DIR/shared/fence.log" | head -n 1)"
check "$U was fenced, by $P" [ "$(fenced_by "$U")" = "$P" ]
# $U's own attempt on $P waited for priority-fencing-delay, and $U died
# first: nobody fenced $P.
[ -z "$(fenced_by "$P")" ] ||
	die "$P, the promoted node, was fenced (by $(fenced_by "$P")): priority-fencing-delay did not protect it"
pass "$P was not fenced"
wait "$cpid"
crc=$?
cat "$tmp/client.out"
check "the client's writes through $P went on" [ "$crc" -eq 0 ]
check "$U is off" [ "$(state_of "$U")" = off ]
check "$P is running" [ "$(state_of "$P")" = running ]
check "$P has $U fenced in its history" tcw -n "$P" -t 10 fenced "$U"
check "$P sees $U offline" tcw -n "$P" -t 20 offline "$U"
check "$P is still the Promoted one" tcw -n "$P" -t 20 promoted "$clone" "$P"
check "$P is still Primary, its peer gone" \
	[ "$(on "$P" tandemadm role mysql)" = Primary/Unknown ]
check "every acknowledged write is on $P" client_verify "$P"
check "$P takes writes without its peer" client_write "$P" 50
# $U's request to fence $P, if $U got that far: "Requesting fencing
# (reboot) of node $P | ... priority_delay=5"
grep "Requesting fencing .* of node $P " \
	"$TC_DIR/nodes/$U/log/cluster/pacemaker.log" 2>/dev/null | tail -n 1 |
	sed "s/^.*(controld_execute_fence_action)[[:space:]]*/# $U: /"

# --- The ring is mended, the fenced node comes back ---------------------------
check "the ring is mended" tc uncut n1 n2 ring
check "$U boots" tc start "$U"
check "both online" tcw -t 30 online
check "$U is Unpromoted" tcw -t 30 role "$clone" "$U" Unpromoted
check "$U is UpToDate/UpToDate again" retry 30 dstate_is "$U" UpToDate/UpToDate
check "$P is still the only Promoted" [ "$(tc promoted "$clone")" = "$P" ]
resync=$(tlog "$U" | grep 'resync as SyncTarget' | tail -n 1)
echo "# $U: ${resync#*: }"
# (a full sync copies the whole 32728 KiB device; from the bitmap, this is
# what $P wrote without $U, plus $U's activity-log extents if any)
from_bitmap() {
	case $resync in
	"" | *"full sync"*) return 1 ;;
	esac
	kib=$(echo "$resync" | sed -n 's/.* \([0-9][0-9]*\) KiB to copy.*/\1/p')
	[ -n "$kib" ] && [ "$kib" -lt 16384 ]
}
check "$U resynced as SyncTarget from the bitmap (no full sync)" from_bitmap
check "every acknowledged write is on $P after the resync" client_verify "$P"
# the resynced node itself: its disk, read from the host (it has no export)
check "every acknowledged write is on $U, the resynced node" client_verify_disk "$U"
disks_identical() {
	sect=$(on "$P" tandemadm status --json mysql | python3 -c '
import json, sys
print(json.load(sys.stdin)["resources"][0]["volumes"][0]["size_sect"])')
	[ -n "$sect" ] && cmp -n $((sect * 512)) "$TC_DIR/nodes/$P/disk.img" \
		"$TC_DIR/nodes/$U/disk.img"
}
check "the data areas of $P's and $U's disks are identical" disks_identical
check "$P was never fenced" [ -z "$(fenced_by "$P")" ]
check "no failed actions" tcw -t 1 nomatch 'Failed (Resource )?Actions'

if [ "$nfail" -gt 0 ]; then
	tc exec "$P" crm_mon -1 -r -f >&2
	cat "$TC_DIR/shared/fence.log" >&2
	tail -n 30 "$TC_DIR"/nodes/*/log/tandemd.log >&2
fi
finish

#!/bin/sh
# A promote of the Unpromoted node while the Promoted node's link is cut
# and its power is still on (issue 16), with the fencing of
# doc/fence-handlers.md: `fencing resource-only`, fence-peer, unfence-peer
# and after-resync-target.  The cuts are silent (tcluster cut: blackhole
# routes, no connection reset), so each tandemd learns of them only from
# its pings; this test makes them slow (ping-int 8 s, ping-timeout 2 s) so
# that the order of events is fixed: the survivor's promote comes while
# it still believes the peer Primary and connected, and the agent must
# retry until tandemd sees the peer go, then until fence-peer's verdict.
#
# A. Outdating.  The client stops; the replication link alone is cut (the
#    ring stays: both nodes online) and at once `crm_resource --move
#    --promoted` asks for the other node.  Pacemaker demotes the Promoted
#    node (its demotion never reaches the peer) and promotes the other.
#    Its tandemd refuses while the peer seems Primary, then, once it has
#    seen the link go, refuses again and runs fence-peer, which finds the
#    peer reachable and places tandem-fence-RES for this node: exit 4,
#    the peer outdated.  Only then may it become Primary.
# B. Fencing.  The client writes through the (new) Promoted node while both
#    its networks to the other node are cut (ring and replication link).
#    Both sides want to fence; a pcmk_delay_base on the device that fences
#    the Unpromoted node makes it the survivor.  It fences the Promoted node
#    (fence_tcluster off), is promoted, sees the link go, runs fence-peer,
#    which finds the peer fenced: exit 7.  Only then may it become Primary.
#
# Each time the order is checked in the logs (millisecond timestamps):
# the outdating (fence-peer's exit 4 and its constraint) or the fencing
# (fence.log's off) comes before the survivor's "role( Secondary ->
# Primary )".  And no acknowledged write is lost: under resource-only a
# Primary acknowledges writes on its own once it has declared the link
# lost, so the guarantee covers what it acknowledged before then; here it
# acknowledges nothing after the cut (A: the client stopped first; B: it is
# fenced before its pings time out, which the test checks), so every
# acknowledged write must be on the new Primary (client_verify accepts
# nothing else, bar the one write in flight), and, after the old node has
# come back and resynced, on both disks.
#
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build
# (make check-cluster makes it); without it the test is skipped.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"

clone=mysql-data-clone
netopt="connect-int 1; ping-int 8; ping-timeout 20; timeout 5;"
tandem_cluster_up "$FENCE_DISK" "$FENCE_HANDLERS" "$netopt" ||
	die "cannot bring the tandem cluster up"
pass "the tandem clone runs with fencing resource-only, Promoted on $P"

tcw() { "$TCLUSTER" wait "$@" >/dev/null; }
tandem_is() { [ "$(on "$1" tandemadm "$2" "$CLIENT_RES" 2>/dev/null)" = "$3" ]; }
tfile() { echo "$TC_DIR/nodes/$1/log/tandemd.log"; }
# since_ms FILE MS ERE: the time of the first line of FILE that matches ERE
# and was logged at or after MS
since_ms() {
	sm_f=$1 sm_t=$2 sm_re=$3
	grep -E -- "$sm_re" "$sm_f" 2>/dev/null | while read -r sm_l; do
		sm_ms=$(log_ms "$sm_l")
		if [ "$sm_ms" -ge "$sm_t" ]; then
			echo "$sm_ms"
			break
		fi
	done
}
before() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" -le "$2" ]; }
d() { if [ -n "$1" ] && [ -n "$2" ]; then echo $(($2 - $1)); else echo "?"; fi; }
# promote_tries NODE SINCE_LINE: the agent's promote lines on NODE since
# line SINCE_LINE of its pacemaker.log; ok if every try but the last was
# refused with a reason to retry, and the last made it Primary
plog() { echo "$TC_DIR/nodes/$1/log/cluster/pacemaker.log"; }
promote_tries() {
	pt=$(tail -n +$(($2 + 1)) "$(plog "$1")" | grep 'tandem(' |
		grep -E 'promote of mysql|is Primary after')
	echo "$pt" | sed 's/.*tandem([^)]*)\[[0-9]*\]: /# agent: /; s/ \]$//' |
		awk '{ print (length > 300 ? substr($0, 1, 297) "..." : $0) }'
	n=$(echo "$pt" | sed -n 's/.*mysql is Primary after \([0-9]*\) tr.*/\1/p' |
		tail -n 1)
	[ -n "$n" ] && [ "$n" -gt 1 ] || return 1
	echo "$pt" | grep -q 'refused after every retry' && return 1
	i=1
	while [ "$i" -lt "$n" ]; do
		echo "$pt" | grep -Eq "promote of mysql: try $i refused: .+; retrying while .+" ||
			return 1
		i=$((i + 1))
	done
}
retry_reason() {
	tail -n +$(($2 + 1)) "$(plog "$1")" | grep -Eq "retrying while $3"
}
# promote_ms NODE SINCE_LINE: when NODE's executor began the promote
promote_ms() {
	pm_l=$(tail -n +$(($2 + 1)) "$(plog "$1")" |
		grep 'executing - rsc:mysql-data action:promote ' | head -n 1)
	[ -n "$pm_l" ] && log_ms "$pm_l"
}
# saw_peer_primary NODE SINCE_LINE T_LOST: when NODE's tandemd lost the
# link (T_LOST) well after its promote began, the agent must have retried
# while the peer was still Primary for it; when it lost it before, it need
# not (each tandemd learns of a silent cut at its own next ping, 2 to 10 s
# after the cut, whichever side it is on)
saw_peer_primary() {
	sp_t=$(promote_ms "$1" "$2")
	echo "# $1: promote began $(d "$t0" "$sp_t") ms after the cut"
	if [ -n "$sp_t" ] && [ -n "$3" ] && [ "$3" -lt $((sp_t + 1000)) ]; then
		echo "# $1 lost the link before (or as) its promote began"
		return 0
	fi
	retry_reason "$1" "$2" 'the peer is still (believed )?Primary'
}
same_data() {
	sect=$(on "$1" tandemadm status --json "$CLIENT_RES" |
		sed -n 's/.*"size_sect": *\([0-9]*\).*/\1/p' | head -n 1)
	[ -n "$sect" ] && cmp -n $((sect * 512)) \
		"$TC_DIR/nodes/n1/disk.img" "$TC_DIR/nodes/n2/disk.img"
}
unfenced() { [ -z "$(fence_constraint "$1")" ]; }

check "the client writes 200 blocks through $P's export" client_write "$P" 200
check "they read back through $P" client_verify "$P"

# --- A: the replication link cut, then a move: outdating ----------------------
echo "# A: $P Promoted; its replication link is cut, and the role is moved to $U"
pl=$(wc -l <"$(plog "$U")")
# The writes go on until just before the cut, so that the last packets
# crossed the link then: neither side can time out its pings for 8 s.
check "the client writes 100 more blocks through $P, and stops" \
	client_write "$P" 100
t0=$(date +%s%3N)
tc cut "$P" "$U" repl || die "tcluster cut $P $U repl failed"
check "crm_resource --move --promoted --node $U" tc exec "$U" \
	crm_resource -r "$clone" --move --promoted --node "$U"
check "Pacemaker has the Promoted role on $U" tcw -t 60 promoted "$clone" "$U"
check "$U is Primary" tandem_is "$U" role Primary/Unknown
t_dem=$(since_ms "$(tfile "$P")" "$t0" 'role\( Primary -> Secondary \)')
t_lost=$(since_ms "$(tfile "$U")" "$t0" 'connection\( Connected -> ')
t_fp=$(since_ms "$(tfile "$U")" "$t0" 'fence-peer helper returned 4')
t_pri=$(since_ms "$(tfile "$U")" "$t0" 'role\( Secondary -> Primary \)')
echo "# A: from the cut: $P demoted $(d "$t0" "$t_dem") ms; $U lost the" \
	"link $(d "$t0" "$t_lost") ms; fence-peer exit 4 $(d "$t0" "$t_fp") ms;" \
	"$U Primary $(d "$t0" "$t_pri") ms"
check "$P was demoted before $U became Primary" before "$t_dem" "$t_pri"
check "$U's fence-peer outdated $P (exit 4) before $U became Primary" \
	before "$t_fp" "$t_pri"
check "tandem-fence-mysql allows the Promoted role on $U only" \
	[ "$(fence_constraint "$U")" = "$U" ]
check "the agent retried the promote, each time with its reason" \
	promote_tries "$U" "$pl"
check "... while $U believed $P Primary (if it did)" \
	saw_peer_primary "$U" "$pl" "$t_lost"
check "... and while fence-peer ran (or had not decided)" \
	retry_reason "$U" "$pl" '(fence-peer is running|the peer is not outdated yet)'
check "no failed action" no_failures "$U"
check "every acknowledged write is on $U" client_verify "$U"
check "$U takes writes without its peer" client_write "$U" 100

t1=$(date +%s%3N)
tc uncut "$P" "$U" repl || die "tcluster uncut $P $U repl failed"
# $P may not have noticed the cut at all (its pings had not timed out):
# it still shows its old connection, UpToDate/UpToDate, until its next
# packet meets the peer's reset.  So wait for the resync itself.
resync=""
resynced() { resync=$(since_ms "$(tfile "$P")" "$t1" 'resync as SyncTarget') &&
	[ -n "$resync" ]; }
check "$P reconnects and resyncs as SyncTarget" retry 40 resynced
check "$P is UpToDate/UpToDate again" retry 40 tandem_is "$P" dstate \
	UpToDate/UpToDate
echo "# A: $P: $(tlog "$P" | grep 'resync as Sync' | tail -n 1 |
	sed 's/.*\] //') ($(d "$t1" "$resync") ms after the uncut)"
check "no split brain" not grep -qi 'split.brain' "$(tfile n1)" "$(tfile n2)"
check "the resync took tandem-fence-mysql away" retry 30 unfenced "$U"
check "crm_resource --clear" tc exec "$U" crm_resource -r "$clone" --clear
check "the cluster settles" tcw -t 60 settled
check "$U is still the only Promoted" [ "$(tc promoted "$clone")" = "$U" ]
check "$P is Unpromoted" tcw -t 30 role "$clone" "$P" Unpromoted
check "every acknowledged write is on $U after the resync" client_verify "$U"
check "the two disks hold the same data" same_data "$U"
check "no failed action after A" no_failures "$U"

# --- B: both networks cut while the client writes: fencing -------------------------
P2=$U U2=$P
echo "# B: $P2 Promoted; both its networks to $U2 are cut while the client writes"
# fence-alice fences n1, fence-bob n2 (promotable.xml): the device that
# fences the Unpromoted node waits, so that the Unpromoted node wins
case $U2 in
n1) slow=fence-alice ;;
*) slow=fence-bob ;;
esac
check "pcmk_delay_base=10s on $slow, the device that fences $U2" \
	tc exec "$U2" crm_resource -r "$slow" --set-parameter pcmk_delay_base \
	--parameter-value 10s
check "the cluster settles" tcw -t 60 settled
check "$slow runs" tcw -t 30 role "$slow" "$P2" Started
pl=$(wc -l <"$(plog "$U2")")
fc=$(tc fence_count "$P2")
client_write "$P2" 100000 >/dev/null 2>&1 &
cpid=$!
check "the client is writing through $P2" \
	client_wait_acked "$(($(client_acked) + 30))"
t0=$(date +%s%3N)
tc cut "$P2" "$U2" all || die "tcluster cut $P2 $U2 all failed"
check "$U2 fences $P2" tcw -t 60 -n "$U2" fenced "$P2" "$fc"
wait "$cpid"
check "the fencing cut the client off" [ $? -ne 0 ]
check "Pacemaker has the Promoted role on $U2" \
	tcw -t 60 -n "$U2" promoted "$clone" "$U2"
check "$U2 is Primary" tandem_is "$U2" role Primary/Unknown
t_off=$(fenced_ms "$P2")
t_p2lost=$(since_ms "$(tfile "$P2")" "$t0" 'connection\( Connected -> ')
t_lost=$(since_ms "$(tfile "$U2")" "$t0" 'connection\( Connected -> ')
t_fp=$(since_ms "$(tfile "$U2")" "$t0" 'fence-peer helper returned 7')
t_pri=$(since_ms "$(tfile "$U2")" "$t0" 'role\( Secondary -> Primary \)')
echo "# B: from the cut: $P2 fenced $(d "$t0" "$t_off") ms; $U2 lost the" \
	"link $(d "$t0" "$t_lost") ms; fence-peer exit 7 $(d "$t0" "$t_fp") ms;" \
	"$U2 Primary $(d "$t0" "$t_pri") ms"
# The guarantee of resource-only covers what the Primary acknowledged
# while connected: had $P2 declared the link lost before its fencing, it
# would have acknowledged writes $U2 lacks.
check "$P2 was fenced before it declared the link lost (it never did)" \
	[ -z "$t_p2lost" ]
check "$P2 was fenced before $U2 became Primary" before "$t_off" "$t_pri"
check "$U2's fence-peer found $P2 fenced (exit 7) before $U2 became Primary" \
	before "$t_fp" "$t_pri"
check "tandem-fence-mysql allows the Promoted role on $U2 only" \
	[ "$(fence_constraint "$U2")" = "$U2" ]
check "the agent retried the promote, each time with its reason" \
	promote_tries "$U2" "$pl"
check "... while $U2 believed $P2 Primary (if it did)" \
	saw_peer_primary "$U2" "$pl" "$t_lost"
check "... and while fence-peer ran (or had not decided)" \
	retry_reason "$U2" "$pl" '(fence-peer is running|the peer is not outdated yet)'
check "every acknowledged write is on $U2" client_verify "$U2"
check "the stand-ins follow to $U2" tcw -t 30 role mysql-ip "$U2" Started
check "$U2 takes writes without its peer" client_write "$U2" 100
check "no failed action" no_failures "$U2"

# The old node comes back, its networks mended.
tc uncut "$P2" "$U2" all || die "tcluster uncut $P2 $U2 all failed"
t1=$(date +%s%3N)
check "$P2 boots" tc start "$P2"
check "$P2 is online again" tcw -t 30 online
check "$P2 is Unpromoted" tcw -t 60 role "$clone" "$P2" Unpromoted
check "$P2 is UpToDate/UpToDate again" retry 40 tandem_is "$P2" dstate \
	UpToDate/UpToDate
resync=$(tlog "$P2" | grep 'resync as Sync' | tail -n 1)
echo "# B: $P2: ${resync#*\] } ($(d "$t1" "$(date +%s%3N)") ms after its start)"
from_bitmap() {
	case $resync in
	*"full sync"* | "") return 1 ;;
	*SyncTarget*) ;;
	*) return 1 ;;
	esac
	kib=$(echo "$resync" | sed -n 's/.* \([0-9][0-9]*\) KiB to copy.*/\1/p')
	[ -n "$kib" ] && [ "$kib" -lt 16384 ]
}
check "$P2 resynced as SyncTarget from the bitmap, not in full" from_bitmap
check "no split brain" not grep -qi 'split.brain' "$(tfile n1)" "$(tfile n2)"
check "the resync took tandem-fence-mysql away" retry 30 unfenced "$U2"
check "the cluster settles" tcw -t 60 settled
check "$U2 is still the only Promoted" [ "$(tc promoted "$clone")" = "$U2" ]
check "every acknowledged write is on $U2 after the resync" client_verify "$U2"
check "the two disks hold the same data" same_data "$U2"
check "no failed action after B" no_failures "$U2"
check "no failed actions (crm_mon)" tcw -t 1 nomatch 'Failed (Resource )?Actions'

if [ "$nfail" -gt 0 ]; then
	tc exec "$U2" crm_mon -1 -r -f >&2
	tc exec "$U2" cibadmin --query --scope constraints >&2
	tail -n 40 "$TC_DIR"/nodes/*/log/tandemd.log >&2
fi
finish

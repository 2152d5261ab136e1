#!/bin/sh
# The replication link cut alone (issue 8, scenario 5), with
#     disk { fencing resource-only; }
#     handlers { fence-peer "/usr/sbin/tandem-fence-peer";
#                unfence-peer "/usr/sbin/tandem-unfence-peer";
#                after-resync-target "/usr/sbin/tandem-unfence-peer"; }
# as doc/fence-handlers.md configures them.  `tcluster cut P U repl` drops
# the traffic between the two nodes on the replication link only; the
# corosync ring stays, so Pacemaker sees both nodes online.  Then:
# - no split brain: the Primary stays the only Promoted instance and
#   Primary, the other stays Secondary;
# - the Primary keeps serving: the client writes on through its export;
# - tandemd runs fence-peer on the Primary, which places tandem-fence-mysql
#   (the Promoted role on no node but the Primary), so the peer is not
#   promotable: its promotion score in crm_simulate is -INFINITY, and a
#   `crm_resource --move --promoted` to it leaves the role where it is;
# - after `tcluster uncut`, the nodes reconnect, the peer resyncs as
#   SyncTarget what it missed (not the whole device), after-resync-target
#   removes the constraint, and every acknowledged block is on both disks.
#
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build
# (make check-cluster makes it); without it the test is skipped.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"

# The configuration of doc/fence-handlers.md (client.sh's FENCE_DISK and
# FENCE_HANDLERS), from the start.  With TCLUSTER_FENCING_BY_ADJUST=1 it is
# added to the running resource instead (tandemadm adjust), as an
# administrator would to a running cluster.
if [ -z "${TCLUSTER_FENCING_BY_ADJUST:-}" ]; then
	tandem_cluster_up "$FENCE_DISK" "$FENCE_HANDLERS" ||
		die "cannot bring the tandem cluster up"
else
	tandem_cluster_up "" "" || die "cannot bring the tandem cluster up"
	sed -e "s/c-plan-ahead 0; /&$FENCE_DISK/" "$tmp/tandem.conf" |
		awk -v h="$(echo "$FENCE_HANDLERS" | sed "s|@sbin@|/$sbin|g")" \
			'{ print } /^	disk / { print h }' >"$tmp/tandem-fencing.conf"
	for n in n1 n2; do
		tc exec "$n" sh -c 'cat >/etc/tandem.conf' \
			<"$tmp/tandem-fencing.conf" ||
			die "cannot write /etc/tandem.conf in $n"
		on "$n" tandemd -t >/dev/null ||
			die "$n: tandemd -t refuses the fencing configuration"
		check "$n: tandemadm adjust to fencing resource-only" \
			on "$n" tandemadm adjust "$CLIENT_RES"
	done
fi
pass "the tandem clone runs with fencing resource-only, Promoted on $P"
clone=mysql-data-clone
fc=tandem-fence-$CLIENT_RES

check "the client writes 200 blocks through $P's export" client_write "$P" 200
check "they read back through $P" client_verify "$P"

ms() { echo $((($(date +%s%N) - t0) / 1000000)); }
tcw() { "$TCLUSTER" wait "$@" >/dev/null; }
tandem_is() { [ "$(on "$1" tandemadm "$2" "$CLIENT_RES" 2>/dev/null)" = "$3" ]; }
resyncs() { tlog "$1" | grep -c 'resync as Sync'; }
constraints() { tc exec "$U" cibadmin --query --scope constraints 2>/dev/null; }
# fenced_for NODE: tandem-fence-RES is there, Promoted only on NODE
fenced_for() {
	constraints | tr -d '\n' |
		grep -o "<rsc_location id=\"$fc\".*</rsc_location>" |
		grep -q "attribute=\"#uname\" operation=\"ne\" value=\"$1\""
}
unfenced() { ! constraints | grep -q "id=\"$fc\""; }
# promotion_score NODE: crm_simulate's promotion score of NODE's instance
promotion_score() {
	tc exec "$U" crm_simulate -L -s 2>/dev/null |
		sed -n "s/^mysql-data:[0-9]* promotion score on $1: *//p" |
		head -n 1
}
peer_not_promotable() {
	s=$(promotion_score "$U")
	echo "# $U's promotion score: ${s:-none}"
	[ "$s" = "-INFINITY" ]
}
split_brain() { grep -qi 'split.brain' "$TC_DIR"/nodes/*/log/tandemd.log; }
still_promoted() {
	[ "$(tc promoted "$clone")" = "$P" ] &&
		tcw -t 5 role "$clone" "$U" Unpromoted
}

positive_score() {
	s=$(promotion_score "$1")
	[ -n "$s" ] && [ "$s" != "-INFINITY" ] && [ "$s" -gt 0 ] 2>/dev/null
}
check "$U's promotion score is positive before the cut" positive_score "$U"

# --- Cut the replication link only ----------------------------------------------
t0=$(date +%s%N)
tc cut "$P" "$U" repl || die "tcluster cut $P $U repl failed"
check "$P sees the link down" retry 20 not tandem_is "$P" cstate Connected
echo "# cut: $P noticed the loss after $(ms) ms"
check "the ring is intact: both nodes online" tcw -t 5 online
check "$P is still Primary" tandem_is "$P" role Primary/Unknown
check "$U is still Secondary" tandem_is "$U" role Secondary/Unknown
check "$P keeps serving: 100 writes through its export" \
	client_write "$P" 100
check "every acknowledged block reads back through $P" client_verify "$P"
check "fence-peer placed $fc for $P" retry 30 fenced_for "$P"
echo "# cut: $fc placed after $(ms) ms"
grep -h 'fence-peer' "$TC_DIR/nodes/$P/log/tandemd.log" | sed 's/^/# /'
check "$U is not promotable (crm_simulate)" peer_not_promotable
if fenced_for "$P"; then
	check "crm_resource --move --promoted --node $U" tc exec "$U" \
		crm_resource -r "$clone" --move --promoted --node "$U"
	tcw -t 30 settled
	check "the move did not promote $U: $P is still the only Promoted" \
		still_promoted
	check "crm_resource --clear" tc exec "$U" \
		crm_resource -r "$clone" --clear
else
	# Without the constraint Pacemaker would demote $P and try $U,
	# whose promote tandemd refuses: no Primary at all.
	fail "no fence constraint: the move to $U is not tried"
fi
check "no split brain: $P Primary, $U Secondary" sh -c \
	"[ \"\$1\" = Primary/Unknown ] && [ \"\$2\" = Secondary/Unknown ]" - \
	"$(on "$P" tandemadm role "$CLIENT_RES")" \
	"$(on "$U" tandemadm role "$CLIENT_RES")"
check "$P is still the only Promoted" still_promoted
check "the client writes 50 more blocks through $P" client_write "$P" 50

# --- Uncut: resync, unfence --------------------------------------------------------
rs=$(resyncs "$U")
t0=$(date +%s%N)
tc uncut "$P" "$U" repl || die "tcluster uncut $P $U repl failed"
check "$U is UpToDate/UpToDate again" retry 30 tandem_is "$U" dstate \
	UpToDate/UpToDate
echo "# uncut: in sync after $(ms) ms"
resync=$(tlog "$U" | grep 'resync as Sync' | tail -n +$((rs + 1)))
echo "# $U: ${resync:-no resync}" | sed 's/: .*: resync/: resync/'
# "volume 0: resync as SyncTarget: N KiB to copy[ (full sync)]": the 150
# blocks written during the cut (600 KiB) at least, not the 32 MiB
from_bitmap() {
	case $resync in
	*"full sync"*) return 1 ;;
	*SyncTarget*) ;;
	*) return 1 ;;
	esac
	kib=$(echo "$resync" | sed -n 's/.* \([0-9][0-9]*\) KiB to copy.*/\1/p' |
		tail -n 1)
	[ -n "$kib" ] && [ "$kib" -ge 600 ] && [ "$kib" -lt 32768 ]
}
check "$U resynced as SyncTarget what it missed, not in full" from_bitmap
check "after-resync-target removed $fc" retry 30 unfenced
echo "# uncut: $fc removed after $(ms) ms"
check "$U's promotion score is positive again" retry 30 positive_score "$U"
check "no split brain in either log" not split_brain
check "$P is still the only Promoted" still_promoted
check "every acknowledged block reads back through $P" client_verify "$P"
# The data areas of the two backing files (the metadata is at their end).
same_data() {
	sect=$(on "$P" tandemadm status --json "$CLIENT_RES" |
		sed -n 's/.*"size_sect": *\([0-9]*\).*/\1/p' | head -n 1)
	[ -n "$sect" ] && cmp -n $((sect * 512)) \
		"$TC_DIR/nodes/n1/disk.img" "$TC_DIR/nodes/n2/disk.img"
}
check "the two disks hold the same data" same_data
check "no failed actions" tcw -t 1 nomatch 'Failed (Resource )?Actions'

if [ "$nfail" -gt 0 ]; then
	tc exec n1 crm_mon -1 -r -f >&2
	constraints >&2
	tail -n 30 "$TC_DIR"/nodes/*/log/tandemd.log >&2
fi
finish

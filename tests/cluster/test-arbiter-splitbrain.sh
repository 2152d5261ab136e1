#!/bin/sh
# A staged split brain resolved by one verdict of tandem-arbiterd (issue 18,
# scenario 4; doc/arbiter.md §6.3).
#
# The corosync ring stays up, so both arbiters share one table.  With the
# cluster in maintenance mode (Pacemaker leaves the resource alone), the
# replication link is cut, the Primary P writes, and the Secondary U is
# made Primary by hand, writes blocks of its own and goes back to
# Secondary: both current UUIDs changed, a split brain.  When the link
# comes back, both tandemds find it in the handshake and ask their
# arbiter; the decider (the lower node id) applies
#     after-sb-0pri discard-least-changes; after-sb-1pri discard-secondary;
# to the shared table and multicasts one SB_VERDICT.  Then:
# - both tandemd logs name the same verdict id, and both arbiters' logs;
# - U, the Secondary at the handshake, loses: it resyncs from P, and its
#   diverging blocks are saved first (doc/split-brain-saves.md), byte for
#   byte;
# - every block the client wrote through P, before and during the cut,
#   reads back, and the two disks end up the same.
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"

SB_NET="connect-int 1; ping-int 1; ping-timeout 5; timeout 5;
		after-sb-0pri discard-least-changes; after-sb-1pri discard-secondary;
		after-sb-2pri disconnect;"
tandem_cluster_up "" "" "$SB_NET" || die "cannot bring the tandem cluster up"
pass "the tandem clone runs with after-sb policies, Promoted on $P"
for n in n1 n2; do
	check "tandem-arbiterd runs on $n" arbiter_start "$n"
done
check "both arbiters hold both records" retry 30 arbiter_pair n1 "$P" "$U"
check "the client writes 50 blocks through $P" client_write "$P" 50

check "maintenance mode: Pacemaker leaves the resource alone" \
	tc exec n1 crm_attribute -t crm_config -n maintenance-mode -v true
tc wait -t 30 settled >/dev/null
tandem_is() { [ "$(on "$1" tandemadm "$2" "$CLIENT_RES" 2>/dev/null)" = "$3" ]; }

# --- The split brain ----------------------------------------------------------------
tc cut "$P" "$U" repl || die "tcluster cut $P $U repl failed"
check "$P sees the link down" retry 20 not tandem_is "$P" cstate Connected
check "$U sees the link down" retry 20 not tandem_is "$U" cstate Connected
check "the client writes 30 more blocks through $P" client_write "$P" 30
check "$U is made Primary by hand (the split brain)" on "$U" tandemadm primary "$CLIENT_RES"
# U's own writes, 8 blocks far from the client's span, kept to compare with
# the save set
SB_OFF=$((8 * 1048576))
head -c $((8 * 4096)) /dev/urandom >"$tmp/u-data"
check "$U writes 8 blocks of its own" client_nbdsh "$U" -u "$(client_uri)" -c "
data = open('$tmp/u-data', 'rb').read()
h.pwrite(data, $SB_OFF)
h.flush()"
check "$U goes back to Secondary" on "$U" tandemadm secondary "$CLIENT_RES"

verdicts() { tlog "$1" | sed -n 's/.*split brain: verdict \([^ ]*\) from tandem-arbiterd.*/\1/p'; }
tc uncut "$P" "$U" repl || die "tcluster uncut $P $U repl failed"
check "$U is UpToDate/UpToDate again" retry 40 tandem_is "$U" dstate UpToDate/UpToDate
vp=$(verdicts "$P" | tail -n 1)
vu=$(verdicts "$U" | tail -n 1)
echo "# verdict on $P: ${vp:-none}; on $U: ${vu:-none}"
tlog "$P" | grep -i 'split.brain' | sed "s/^/# $P: /"
tlog "$U" | grep -i 'split.brain' | sed "s/^/# $U: /"
alog n1 | grep -i 'split' | sed 's/^/# n1 arbiter: /'
check "both tandemds applied one verdict, the same id" sh -c '[ -n "$1" ] && [ "$1" = "$2" ]' - "$vp" "$vu"
check "both arbiters logged that verdict" sh -c \
	"grep -q 'split-brain verdict $vp ' '$TC_DIR/nodes/n1/log/tandem-arbiterd.log' &&
	 grep -q 'split-brain verdict $vp ' '$TC_DIR/nodes/n2/log/tandem-arbiterd.log'"
check "$U (the Secondary) lost: this node's changes are discarded" sh -c \
	"grep -q 'verdict $vp from tandem-arbiterd: this node.s changes are discarded' \
	'$TC_DIR/nodes/$U/log/tandemd.log'"
check "$U resynced as SyncTarget" sh -c "grep -q 'resync as SyncTarget' '$TC_DIR/nodes/$U/log/tandemd.log'"

# U's blocks are saved before the resync overwrote them
STATE=/var/lib/tandem
set=$(on "$U" tandemadm --state-dir "$STATE" sb-list --json "$CLIENT_RES" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)[-1]["name"])')
check "a save set on $U (${set:-none})" [ -n "$set" ]
on "$U" tandemadm --state-dir "$STATE" sb-show --json "$CLIENT_RES" "$set" >"$tmp/set.json"
check "the set is complete, lost by $U to $P, and covers $U's blocks" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
node, peer, off, n = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
assert s["state"] == "complete", s["state"]
assert s["node"] == node and s["peer"] == peer, (s["node"], s["peer"])
assert any(r["offset"] <= off and off + n <= r["offset"] + r["length"]
           for r in s["ranges"]), s["ranges"]
' "$tmp/set.json" "$U" "$P" "$SB_OFF" $((8 * 4096))
on "$U" dd if="$STATE/$CLIENT_RES/$set/image" iflag=skip_bytes,count_bytes \
	skip="$SB_OFF" count=$((8 * 4096)) status=none >"$tmp/saved"
check "the save set holds $U's blocks, byte for byte" cmp -s "$tmp/saved" "$tmp/u-data"
check "every block the client wrote through $P reads back" client_verify "$P"
check "the two disks hold the same data" disks_same "$P"
u_gone() {
	! cmp -s -n $((8 * 4096)) -i "$SB_OFF:0" "$TC_DIR/nodes/$P/disk.img" "$tmp/u-data"
}
check "$U's diverging blocks are not on the winner's disk" u_gone
check "leaving maintenance mode" \
	tc exec n1 crm_attribute -t crm_config -n maintenance-mode -v false
check "the clone is still Promoted on $P" tc wait -t 60 promoted mysql-data-clone
check "no failed actions" tc wait -t 5 nomatch 'Failed (Resource )?Actions'

if [ "$nfail" -gt 0 ]; then
	tail -n 40 "$TC_DIR"/nodes/*/log/tandemd.log "$TC_DIR"/nodes/*/log/tandem-arbiterd.log >&2
fi
finish

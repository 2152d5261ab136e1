#!/bin/sh
# A full partition of a two-node cluster with a quorum device (issue 18,
# scenario 2): corosync-qnetd on a third host (tcluster's TC_QNETD=1, its own
# namespace on the ring), corosync-qdevice (model net, ffsplit, tie_breaker
# lowest) on both nodes instead of two_node, tandem-arbiterd on both nodes,
# and the resource configured with
#     options { quorum majority; on-no-quorum suspend-io; }
# plus the fencing doc/fence-handlers.md recommends (fencing resource-only,
# tandem-fence-peer, ...).  `tcluster cut n1 n2` drops every path between
# the two nodes, ring and replication link, while both still reach qnetd:
# ffsplit gives its vote to one partition, n1's (the tie is broken by the
# lowest node id).  So n1 keeps quorum and n2 loses it; the quorate side
# fences n2 (fence_tcluster, pcmk_reboot_action=off).
#
# The fencing of n2 is delayed by 6 s (pcmk_delay_base on fence-bob, the
# device that fences n2) so that the test can look at the loser while it
# lives; without the delay it is powered off about a second after the
# membership change.
#
# A: the Primary on n1, the side with the vote.  It keeps serving (the
#    writer's every write is acknowledged), its tandemd is never told that
#    quorum is lost; n2's tandemd is (quorum.quorate false) and n2 is fenced.
# B: the Primary on n2, the side without the vote.  Its tandemd suspends
#    I/O (susp-quorum, "susp" & 8 in status --json, quorum.quorate false):
#    the writer's requests wait; n2 is fenced, n1 is promoted and serves.
# Each time: every acknowledged write reads back through the Primary, no
# split brain in either tandemd log, and after the heal (`tcluster heal`,
# `tcluster start n2`) n2 resyncs, both are UpToDate and the disks equal.
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build.
TC_QNETD=1 TC_QNETD_ALGO=ffsplit TC_QNETD_TIE=lowest
export TC_QNETD TC_QNETD_ALGO TC_QNETD_TIE
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"

W=n1 L=n2	# the partition with qnetd's vote (lowest node id), the other
t_start=$(date +%s)
tandem_cluster_up "$FENCE_DISK" "$FENCE_HANDLERS
	options { quorum majority; on-no-quorum suspend-io; }" ||
	die "cannot bring the tandem cluster up"
pass "the tandem clone runs (quorum majority, suspend-io, fencing resource-only), Promoted on $P"
echo "# bring-up: $(($(date +%s) - t_start)) s"

# --- Helpers ---------------------------------------------------------------------
# st NODE KEY: from tandemadm status --json of CLIENT_RES: role, susp,
# quorate (quorum.quorate), policy (quorum.policy), disk
st() {
	on "$1" tandemadm status --json "$CLIENT_RES" 2>/dev/null | python3 -c '
import json, sys
def find(o):
    if isinstance(o, dict):
        if "quorum" in o:
            return o
        for v in o.values():
            r = find(v)
            if r is not None:
                return r
    elif isinstance(o, list):
        for v in o:
            r = find(v)
            if r is not None:
                return r
    return None
r = find(json.load(sys.stdin))
k = sys.argv[1]
if r is None:
    sys.exit(1)
if k in ("quorate", "policy", "on_no_quorum"):
    v = r["quorum"][k]
else:
    v = r.get(k)
print(str(v).lower() if isinstance(v, bool) else v)
' "$2"
}
st_is() { [ "$(st "$1" "$2")" = "$3" ]; }
susp_quorum() { s=$(st "$1" susp) && [ -n "$s" ] && [ $((s & 8)) -ne 0 ]; }
no_susp() { [ "$(st "$1" susp)" = 0 ]; }
tandem_is() { [ "$(on "$1" tandemadm "$2" "$CLIENT_RES" 2>/dev/null)" = "$3" ]; }
# arb NODE EXPR: a Python expression on NODE's `tandemadm arbiter --json` (t)
arb() {
	on "$1" tandemadm arbiter --json 2>/dev/null | python3 -c '
import json, sys
t = json.load(sys.stdin)
sys.exit(0 if eval(sys.argv[1]) else 1)' "$2"
}
# since LINE_COUNT_FILE NODE: NODE's tandemd log after the line count saved
since() { tlog "$2" | tail -n +"$(($(cat "$1") + 1))"; }
mark() { tlog "$1" | wc -l >"$tmp/mark.$1"; }
no_split_brain() { ! grep -qi 'split.brain' "$TC_DIR"/nodes/*/log/tandemd.log; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# log_after_ms NODE ERE FROM: epoch ms of NODE's first tandemd log line
# matching ERE at or after FROM (epoch ms), or nothing
log_after_ms() {
	tlog "$1" | grep -E -- "$2" | while read -r mon day hms _; do
		t=$(date -u -d "$mon $day $hms" +%s%3N 2>/dev/null) || continue
		[ "$t" -ge "$3" ] && { echo "$t"; break; }
	done
}
d() { if [ -n "$1" ] && [ -n "$2" ]; then echo $(($2 - $1)); else echo "?"; fi; }
# since_has NODE ERE: NODE's tandemd log has a line matching ERE after its mark
since_has() { since "$tmp/mark.$1" "$1" | grep -Eq -- "$2"; }
no_fence_constraint() { [ -z "$(fence_constraint "$W")" ]; }
# susp_quorate_is NODE SUSP QUORATE: tandemd's susp and quorum.quorate
susp_quorate_is() { st_is "$1" susp "$2" && st_is "$1" quorate "$3"; }
# uptodate_or_sb: until L is UpToDate/UpToDate (true) or its log says
# "Split-Brain detected but unresolved" since its mark (false: no use
# waiting), at most 90 s
uptodate_or_sb() {
	tandem_is "$L" dstate UpToDate/UpToDate && return 0
	since_has "$L" 'Split-Brain detected but unresolved' && return 2
	return 1
}
sync_decided() { uptodate_or_sb; [ $? -ne 1 ]; }
uptodate_or_split_brain() {
	retry 90 sync_decided
	uptodate_or_sb
}
# heal_and_rejoin: plug everything back, power L on (it was fenced off) and
# start its arbiter; the clone starts there, L resyncs from W
heal_and_rejoin() {
	tc heal || die "tcluster heal failed"
	check "$L is off (fenced, pcmk_reboot_action=off)" not tc exec "$L" true
	tc start "$L" || die "cannot power $L on"
	check "tandem-arbiterd runs on $L again" arbiter_start "$L"
	check "both nodes online again" tc wait -t 60 online
	check "the quorum device votes in both nodes' view again" \
		tc wait -t 60 qdevice
	check "$L is UpToDate/UpToDate (resynced)" uptodate_or_split_brain
	check "$W is Primary/Secondary" retry 30 tandem_is "$W" role Primary/Secondary
	check "no fence constraint left (after-resync-target)" \
		retry 30 no_fence_constraint
	check "every acknowledged block reads back through $W" client_verify "$W"
	check "the two disks hold the same data" disks_same "$W"
	check "no split brain after the heal" no_split_brain
}

# --- Before the partition: the arbiter's view of quorum ----------------------------
for n in n1 n2; do
	check "tandem-arbiterd runs on $n" arbiter_start "$n"
done
check "$P's arbiter holds both nodes' records" retry 30 arbiter_pair "$P" "$P" "$U"
check "$U's arbiter holds the same records" retry 10 arbiter_pair "$U" "$P" "$U"
for n in n1 n2; do
	check "$n's arbiter: quorate, a qdevice registered, no two_node, 3 votes of 3" \
		retry 10 arb "$n" 't["quorate"] and t["votequorum"]["qdevice"] and not t["votequorum"]["two_node"] and t["votequorum"]["expected_votes"] == 3 and t["votequorum"]["total_votes"] == 3 and t["votequorum"]["quorum"] == 2'
	check "$n's tandemd: quorum majority, suspend-io, quorate" sh -c \
		"[ \"\$1\" = majority ] && [ \"\$2\" = suspend-io ] && [ \"\$3\" = true ]" - \
		"$(st "$n" policy)" "$(st "$n" on_no_quorum)" "$(st "$n" quorate)"
done
on n1 tandemadm arbiter --json | python3 -c '
import json, sys
t = json.load(sys.stdin)
print("# n1 arbiter: quorate %s, votequorum %s" % (t["quorate"], json.dumps(t["votequorum"], sort_keys=True)))'
tc qnetd | grep -E 'Algorithm|Tie-breaker|Node ID|Vote' | sed 's/^/# qnetd: /'
# n2's fencing waits 6 s: the test looks at n2 while it lives
tc exec n1 crm_resource -r fence-bob --set-parameter pcmk_delay_base \
	--parameter-value 6s >/dev/null 2>&1 ||
	die "cannot set pcmk_delay_base on fence-bob"
tc wait -t 30 settled >/dev/null

# move_promoted NODE: the Promoted role to NODE, constraint cleared again
move_promoted() {
	[ "$(tc promoted mysql-data-clone)" = "$1" ] && return 0
	tc exec n1 crm_resource -r mysql-data-clone --move --promoted \
		--node "$1" >/dev/null 2>&1 &&
		tc wait -t 60 promoted mysql-data-clone "$1" >/dev/null &&
		tc exec n1 crm_resource -r mysql-data-clone --clear >/dev/null 2>&1 &&
		tc wait -t 30 settled >/dev/null
}

# cut_while_writing NODE COUNT PART: a writer of COUNT blocks through
# NODE's export in the background (writer, its acknowledgement times in
# times), then both networks cut between n1 and n2 (cut_ms): $L loses
# quorum, $W keeps qnetd's vote
cut_while_writing() {
	mark "$W"
	mark "$L"
	fences_before=$(tc fence_count "$L")
	base=$(client_acked)
	times=$tmp/ack-times.$3
	client_write "$1" "$2" "$times" &
	writer=$!
	check "the writer is under way" client_wait_acked $((base + 150))
	cut_ms=$(now_ms)
	tc cut n1 n2 all || die "tcluster cut n1 n2 all failed"
	check "$L loses quorum (corosync)" tc wait -t 30 inquorate "$L"
	check "$W keeps quorum (corosync: qnetd's vote)" tc wait -t 5 quorate "$W"
}

# ===================================================================================
# A: the Primary on the side with the vote
echo "# --- A: Primary on $W, the side with qnetd's vote"
move_promoted "$W" || die "cannot move the Promoted role to $W"
check "$W Primary, $L Secondary" tandem_is "$W" role Primary/Secondary
check "the client writes 100 blocks through $W's export" client_write "$W" 100
cut_while_writing "$W" 800 a
check "$L's tandemd is told: quorum.quorate false" retry 15 st_is "$L" quorate false
check "$L is a Secondary: no quorum suspension there (susp 0)" no_susp "$L"
check "$L's arbiter: not quorate" arb "$L" 'not t["quorate"]'
check "$L is fenced by $W's partition" tc wait -t 60 -n "$W" fenced "$L" "$fences_before"
retry 90 not kill -0 "$writer" 2>/dev/null ||
	{ fail "the writer through $W is stuck"; kill "$writer" 2>/dev/null; }
wait "$writer"
check "every write of the writer through $W was acknowledged" [ $? -eq 0 ]
t_lq=$(log_after_ms "$L" 'quorum lost' "$cut_ms")
t_out=$(log_after_ms "$W" 'fence-peer helper returned' "$cut_ms")
t_fenced=$(fenced_ms "$L")
gap=$(awk -v c="$cut_ms" '$2 >= c - 5000 { if (p && $2 - p > g) g = $2 - p; p = $2 }
	END { print g + 0 }' "$times")
echo "# A: cut -> $L's tandemd told no quorum $(d "$cut_ms" "$t_lq") ms; cut -> $W's fence-peer returned $(d "$cut_ms" "$t_out") ms; cut -> $L fenced $(d "$cut_ms" "$t_fenced") ms (6 s of it pcmk_delay_base); longest wait between two acknowledgements around the cut: $gap ms"
since "$tmp/mark.$W" "$W" | grep -E 'fence-peer|quorum|susp' | sed 's/^/# A W: /'
since "$tmp/mark.$L" "$L" | grep -E 'fence-peer|quorum|susp' | sed 's/^/# A L: /'
check "$W's tandemd was never told quorum lost" not since_has "$W" 'quorum lost'
check "$W's fence-peer: the peer left a quorate partition (exit 4, the constraint)" \
	since_has "$W" 'fence-peer helper returned 4'
check "$W is still Primary" tandem_is "$W" role Primary/Unknown
check "$W: susp 0, quorate" susp_quorate_is "$W" 0 true
check "every acknowledged block reads back through $W" client_verify "$W"
check "no split brain (A)" no_split_brain

echo "# --- A: heal"
heal_and_rejoin

# ===================================================================================
# B: the Primary on the side without the vote
echo "# --- B: Primary on $L, the side without qnetd's vote"
check "$L's arbiter holds both records again" retry 30 arbiter_pair "$L" "$W" "$L"
move_promoted "$L" || die "cannot move the Promoted role to $L"
check "$L Primary, $W Secondary" retry 10 tandem_is "$L" role Primary/Secondary
check "the client writes 100 blocks through $L's export" client_write "$L" 100
cut_while_writing "$L" 2000 b
check "$L's tandemd suspends I/O: susp & 8 (susp-quorum)" retry 15 susp_quorum "$L"
check "$L's tandemd: quorum.quorate false" st_is "$L" quorate false
# The writer's requests wait: from the suspension seen to n2's fencing
# (that window is pcmk_delay_base's 6 s less what the checks above took)
# nothing is acknowledged; after the fencing nothing can be.
a1=$(client_acked)
t1=$(now_ms)
check "$L is fenced by $W's partition" tc wait -t 60 -n "$W" fenced "$L" "$fences_before"
a2=$(client_acked)
echo "# B: acknowledged writes $a1 -> $a2 over the $(($(now_ms) - t1)) ms from the suspension seen to the fencing"
check "no write is acknowledged while $L is suspended" [ "$a1" -eq "$a2" ]
retry 30 not kill -0 "$writer" 2>/dev/null ||
	{ fail "the writer through $L does not end after its fencing"; kill "$writer" 2>/dev/null; }
wait "$writer"
echo "# B: the writer through $L exited $? (it dies with $L)"
check "$W is promoted" tc wait -t 60 promoted mysql-data-clone "$W"
check "$W is Primary" retry 20 tandem_is "$W" role Primary/Unknown
t_lq=$(log_after_ms "$L" 'susp-quorum\( 0 -> 1 \)' "$cut_ms")
t_fenced=$(fenced_ms "$L")
t_prim=$(primary_ms "$W")
echo "# B: cut -> $L suspended (susp-quorum) $(d "$cut_ms" "$t_lq") ms; cut -> $L fenced $(d "$cut_ms" "$t_fenced") ms (6 s of it pcmk_delay_base); cut -> $W Primary $(d "$cut_ms" "$t_prim") ms"
since "$tmp/mark.$L" "$L" | grep -E 'fence-peer|quorum|susp' | sed 's/^/# B L: /'
since "$tmp/mark.$W" "$W" | grep -E 'fence-peer|quorum|susp|Primary' | sed 's/^/# B W: /'
check "$L's log: susp-quorum( 0 -> 1 )" since_has "$L" 'susp-quorum\( 0 -> 1 \)'
check "$L's fence-peer never outdated $W (no exit 4 or 7 without quorum)" \
	not since_has "$L" 'fence-peer helper returned (4|7)'
check "$W's tandemd was never told quorum lost" not since_has "$W" 'quorum lost'
check "$W: susp 0, quorate" susp_quorate_is "$W" 0 true
check "every acknowledged block reads back through $W" client_verify "$W"
check "the client writes 100 blocks through $W's export" client_write "$W" 100
check "no split brain (B)" no_split_brain

echo "# --- B: heal"
heal_and_rejoin
echo "# total: $(($(date +%s) - t_start)) s"

if [ "$nfail" -gt 0 ]; then
	tc exec "$W" crm_mon -1 -r -f >&2
	tail -n 40 "$TC_DIR"/nodes/*/log/tandemd.log \
		"$TC_DIR"/nodes/*/log/tandem-arbiterd.log >&2
fi
finish

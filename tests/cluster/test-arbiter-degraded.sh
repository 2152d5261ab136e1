#!/bin/sh
# Degraded-wait with tandem-arbiterd (issue 18, scenario 3): both nodes
# lose their power, only one comes back, and its start waits the degraded
# timeout because its arbiter knows that the peer node is not in the
# membership (doc/arbiter.md §6.2).  The configuration doc/fence-handlers.md
# recommends (fencing resource-only; fence-peer, unfence-peer,
# after-resync-target), the agent's wfc_timeout=config (so that the
# startup section applies, doc/ocf-agent.md), and distinct startup
# timeouts, so that the wait tells which one applied:
#     startup { wfc-timeout 40; degr-wfc-timeout 9; outdated-wfc-timeout 4; }
#
# What is exercised, exactly:
# - both nodes are powered off at once (tcluster kill of both: a PDU or a
#   rack losing power) while the client writes through the Primary P;
# - only P is powered on again (tcluster start); U stays off.
#   corosync runs two_node with wait_for_all (tcluster's corosync.conf),
#   so a node that boots alone is NOT quorate and Pacemaker starts
#   nothing: votequorum waits until it has seen every node once.  That is
#   checked.  The arbiter is started then, as systemd starts it after
#   corosync (tandem-arbiterd.service).
# - The operator, who knows U is off, does what a real one does: `pcs
#   quorum unblock` (it confirms the unjoined node fenced, stonith_admin
#   --confirm, and cancels wait_for_all: corosync-cmapctl -s
#   quorum.cancel_wait_for_all u8 1); without pcs the same two steps by
#   hand.  P becomes quorate; Pacemaker starts the resource (the agent
#   starts tandemd).
# - The agent's start asks the arbiter which timeout class applies: the
#   peer node is not a member of the ring (or is known fenced): degraded,
#   so it waits degr-wfc-timeout (9 s), not wfc-timeout (40 s) and not
#   outdated-wfc-timeout (4 s), then starts without the peer; it logs the
#   class and that tandem-arbiterd decided.  Before the power cut, with
#   both nodes up, the same question (wfc) is answered "default".
# - P's disk is Consistent (fencing configured, the peer unknown): as
#   doc/ocf-agent.md says, it is not promoted alone; every acknowledged
#   write is on its disk (client_verify_disk).
# - Then U is powered on: they connect, P resyncs what its activity log
#   marked, both are UpToDate, Pacemaker promotes one, every acknowledged
#   write reads back through it, both disks hold the same data.
# Prints the seconds the start waited and the times from P's boot.
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"

clone=mysql-data-clone
WFC=40 DEGR=9 OUTD=4
tandem_cluster_up "$FENCE_DISK" "$FENCE_HANDLERS
	startup { wfc-timeout $WFC; degr-wfc-timeout $DEGR; outdated-wfc-timeout $OUTD; }" ||
	die "cannot bring the tandem cluster up"
pass "the tandem clone runs with fencing resource-only, Promoted on $P"
fc=tandem-fence-$CLIENT_RES

for n in n1 n2; do
	check "tandem-arbiterd runs on $n" arbiter_start "$n"
done
check "$P's arbiter holds both nodes' records" retry 30 arbiter_table_is "$P" \
	"$P:Primary:UpToDate" "$U:Secondary:UpToDate"
check "the agent's wfc_timeout is config (the startup section applies)" \
	tc exec "$P" crm_resource -r mysql-data --set-parameter wfc_timeout \
	--parameter-value config
check "the cluster settles" tc wait -t 60 settled
check "Pacemaker has $P promoted" tc wait -t 30 promoted "$clone" "$P"
wfc_q='{"cmd":"wfc","res":"'"$CLIENT_RES"'"}'
cls_up=$(arbiter_ask "$P" "$wfc_q")
echo "# wfc on $P with both nodes up: $cls_up"
check "with both nodes up, $P's arbiter answers the default class" \
	[ "$(echo "$cls_up" | json_get class)" = default ]

check "the client writes 100 blocks through $P's export" client_write "$P" 100
client_write "$P" 100000 >/dev/null 2>&1 &
writer=$!
check "the writer is under way" client_wait_acked 200

# --- Both nodes lose their power; only P comes back ---------------------------------
tc kill "$P" &
k1=$!
tc kill "$U" &
k2=$!
if ! wait "$k1" || ! wait "$k2"; then
	die "tcluster kill $P $U failed"
fi
wait "$writer"
check "the power cut cut the client off" [ $? -ne 0 ]
echo "# $(client_acked) writes acknowledged before the power cut"
state_of() { tc status | awk -v n="$1" '$1 == n { print $2 }'; }
check "both nodes are off" sh -c '[ "$1" = off ] && [ "$2" = off ]' - \
	"$(state_of "$P")" "$(state_of "$U")"

boot_ms=$(date +%s%3N)
check "$P boots alone" tc start "$P"
check "tandem-arbiterd runs on $P (as systemd starts it after corosync)" \
	arbiter_start "$P"
quorate_is() {
	[ "$(arbiter_ask "$P" '{"cmd":"show"}' | json_get quorate)" = "$1" ]
}
answers() { arbiter_ask "$P" '{"cmd":"show"}' >/dev/null 2>&1; }
check "$P's arbiter answers" retry 20 answers
check "$P alone is not quorate (two_node, wait_for_all)" retry 20 quorate_is false
tc exec "$P" corosync-quorumtool -s 2>&1 | grep -E 'Quorate|Flags|votes' | sed 's/^/# /'
not_started() { ! tandem_running; }
tandem_running() { on "$P" test -S /run/tandem/tandemd.sock; }
check "Pacemaker started nothing without quorum (no tandemd on $P)" not_started
# The arbiter learns the resource, and which node is its peer, from
# tandemd, which the agent's start runs: before it, it can say nothing.
echo "# wfc on $P, alone, before tandemd runs: $(arbiter_ask "$P" "$wfc_q")"

# The operator confirms that U is off and unblocks the quorum. pcs asks
# the fencer to confirm U fenced: wait until P's fencer takes connections
# (just after a boot it may not yet, and pcs then fails: "Could not
# connect to fencer").
fencer_up() { tc exec "$P" stonith_admin --list-registered >/dev/null 2>&1; }
check "$P's fencer takes connections" retry 30 fencer_up
unblock_ms=$(date +%s%3N)
if tc exec "$P" sh -c 'command -v pcs' >/dev/null 2>&1; then
	how="pcs quorum unblock --force"
	tc exec "$P" pcs quorum unblock --force 2>&1 | sed 's/^/# pcs: /'
else
	how="stonith_admin --confirm $U; corosync-cmapctl -s quorum.cancel_wait_for_all u8 1"
	tc exec "$P" stonith_admin --confirm "$U" 2>&1 | sed 's/^/# /'
	tc exec "$P" corosync-cmapctl -s quorum.cancel_wait_for_all u8 1 2>&1 |
		sed 's/^/# /'
fi
echo "# the operator: $how"
check "$P is quorate after the unblock" retry 20 quorate_is true
# the start ends after the wait: Unpromoted then (a start that waited
# wfc-timeout instead ends after $WFC s, inside this bound)
check "Pacemaker started the resource on $P" \
	tc wait -t $((WFC + 60)) role "$clone" "$P" Unpromoted
started_ms=$(date +%s%3N)

# The agent's start after the boot: the class, who decided, the seconds.
# Pacemaker logs an operation's output when it ends, so the lines carry
# its end's time; the wait is timed from tandemd's log (WFConnection, the
# agent waits from then on) to the start's result (the controller's log).
agent_since() {
	agent_log "$P" | while read -r as_l; do
		as_t=$(log_ms "$as_l") || continue
		[ "$as_t" -ge "$boot_ms" ] && echo "$as_l"
	done
}
al=$(agent_since)
echo "$al" | grep -E 'waiting up to|did not connect|connected to the peer|score' |
	sed 's/.*tandem(/# agent: tandem(/; s/ \]$//'
wline=$(echo "$al" | grep 'waiting up to [0-9]* s for the peer' | head -n 1)
dline=$(echo "$al" | grep 'the peer did not connect in time' | head -n 1)
check "the start waited degr-wfc-timeout ($DEGR s), the degraded class" sh -c \
	'case $1 in *"waiting up to $2 s for the peer (degraded timeout class"*) ;; *) exit 1 ;; esac' \
	- "$wline" "$DEGR"
check "tandem-arbiterd decided it: the peer node is not in the ring, or known fenced" sh -c \
	'case $1 in *"from tandem-arbiterd: the peer node is not a member of the ring)"* | *"from tandem-arbiterd: the peer node is known fenced)"*) ;; *) exit 1 ;; esac' \
	- "$wline"
check "then it started without the peer" [ -n "$dline" ]
t_wfc=$(tlog_ms "$P" 'connection\( Unconnected -> WFConnection \)' "$boot_ms")
t_res=$(grep -h "Result of start operation for mysql-data on $P" \
	"$TC_DIR/nodes/$P/log/cluster/pacemaker.log" | tail -n 1)
[ -z "$t_res" ] || t_res=$(log_ms "$t_res")
exec_time=$(grep -h "mysql-data start (call .*exited with status" \
	"$TC_DIR/nodes/$P/log/cluster/pacemaker.log" | tail -n 1 |
	sed -n 's/.*(execution time \(.*\))$/\1/p')
waited="?"
[ -z "$t_wfc" ] || [ -z "$t_res" ] || waited=$((t_res - t_wfc))
echo "# degraded start ($how at +$((unblock_ms - boot_ms)) ms after $P's boot):" \
	"the agent waited $waited ms for the peer (degr-wfc-timeout $DEGR s;" \
	"wfc-timeout $WFC s, outdated-wfc-timeout $OUTD s); the start took" \
	"${exec_time:-?}; boot -> started $((started_ms - boot_ms)) ms (polled)"
# It waits DEGR s (polling every 500 ms): at least DEGR s; the upper bound,
# halfway to wfc-timeout, tells the classes apart whatever the load
waited_degr() {
	[ "$waited" != "?" ] && [ "$waited" -ge $((DEGR * 1000 - 100)) ] &&
		[ "$waited" -lt $(((DEGR + WFC) * 500)) ]
}
check "it waited $DEGR s, the degraded timeout ($waited ms)" waited_degr
cls_started=$(arbiter_ask "$P" "$wfc_q")
echo "# wfc on $P, alone, tandemd running: $cls_started"
check "now that tandemd runs, $P's arbiter answers the degraded class" \
	[ "$(echo "$cls_started" | json_get class)" = degraded ]

# A node that comes back alone with Consistent data (it went down with
# fencing configured) is not promoted until it connects or is fenced
# (doc/ocf-agent.md, promotion_scores' C = 0, as in DRBD): P waits for U,
# Secondary; its disk holds every acknowledged write.
check "$P's disk is Consistent, its peer's unknown" \
	sh -c '[ "$1" = Consistent/DUnknown ]' - "$(on "$P" tandemadm dstate "$CLIENT_RES")"
check "$P is Secondary" sh -c '[ "$1" = Secondary/Unknown ]' - \
	"$(on "$P" tandemadm role "$CLIENT_RES")"
check "the cluster settles" tc wait -t 30 settled
# settled: the scheduler has run since the start's result; no promotion
check "Pacemaker promoted nothing (no promotion score on Consistent data)" \
	sh -c '[ -z "$1" ]' - "$(tc promoted "$clone")"
check "every acknowledged write is on $P's disk" client_verify_disk "$P"

# --- U comes back ---------------------------------------------------------------------
check "$U boots" tc start "$U"
check "tandem-arbiterd runs on $U" arbiter_start "$U"
check "$U is online again" tc wait -t 60 online
dstate_is() { [ "$(on "$1" tandemadm dstate "$CLIENT_RES")" = "$2" ]; }
# U missed nothing (protocol C), but P's activity log marked its hot
# extents out of sync at attach: a resync of those from P, then both
# UpToDate (a SyncSource's Consistent disk becomes UpToDate,
# ref/drbd-semantics.md: "SyncSource the reverse")
check "$P is UpToDate/UpToDate" retry 60 dstate_is "$P" UpToDate/UpToDate
check "$U is UpToDate/UpToDate" retry 30 dstate_is "$U" UpToDate/UpToDate
tlog "$P" | grep 'resync as\|resync done' | tail -n 2 | sed 's/^/# /'
check "Pacemaker promotes one node" tc wait -t 60 promoted "$clone"
NP=$(tc promoted "$clone")
echo "# promoted after the return of $U: $NP"
check "every acknowledged write reads back through $NP" client_verify "$NP"
check "$NP takes writes" client_write "$NP" 50
unfenced() { [ -z "$(fence_constraint "$P")" ]; }
check "no $fc left" retry 30 unfenced
case $NP in "$P") NU=$U ;; *) NU=$P ;; esac
check "both arbiters hold both records" retry 20 arbiter_table_is "$U" \
	"$NP:Primary:UpToDate" "$NU:Secondary:UpToDate"
check "the two disks hold the same data" disks_same "$P"
check "the cluster settles" tc wait -t 30 settled
check "no failed action" no_failures "$P"

if [ "$nfail" -gt 0 ]; then
	tc exec "$P" crm_mon -1 -r -f >&2
	agent_log "$P" | tail -n 30 >&2
	tail -n 40 "$TC_DIR"/nodes/*/log/tandemd.log "$TC_DIR"/nodes/*/log/tandem-arbiterd.log >&2
fi
finish

#!/bin/sh
# The replication link cut with tandem-arbiterd on both nodes (issue 18,
# scenario 1), in the configuration doc/fence-handlers.md recommends:
#     disk { fencing resource-only; }
#     handlers { fence-peer "/usr/sbin/tandem-fence-peer"; ... }
# `tcluster cut P U repl` drops the replication link only; the corosync
# ring stays.  The Primary's tandemd runs fence-peer, which asks its
# arbiter; the arbiter asks the peer's arbiter over CPG (OUTDATE_REQ), which
# has its tandemd outdate the disk and answers.  So:
# - the handler exits 4 and no CIB constraint appears (dopd's way: the
#   peer's own disk says Outdated, Pacemaker needs no constraint);
# - the Secondary's disk is Outdated, so it cannot be promoted with stale
#   data even without a constraint;
# - the Primary's writes go on: no acknowledgement waits more than 2 s
#   across the cut;
# - after `tcluster uncut` the peer resyncs what it missed and every
#   acknowledged block is on both disks.
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"

tandem_cluster_up "$FENCE_DISK" "$FENCE_HANDLERS" ||
	die "cannot bring the tandem cluster up"
pass "the tandem clone runs with fencing resource-only, Promoted on $P"
fc=tandem-fence-$CLIENT_RES

for n in n1 n2; do
	check "tandem-arbiterd runs on $n" arbiter_start "$n"
done
# both records, fresh, in both arbiters' tables: one table for both
check "$P's arbiter holds both nodes' records" retry 30 arbiter_pair "$P" "$P" "$U"
check "$U's arbiter holds the same records" retry 10 arbiter_pair "$U" "$P" "$U"
on "$P" tandemadm arbiter | sed 's/^/# /'

check "the client writes 100 blocks through $P's export" client_write "$P" 100

constraints() { tc exec "$U" cibadmin --query --scope constraints 2>/dev/null; }
no_constraint() { ! constraints | grep -q "id=\"$fc\""; }
tandem_is() { [ "$(on "$1" tandemadm "$2" "$CLIENT_RES" 2>/dev/null)" = "$3" ]; }

# --- Cut the replication link while the client writes ---------------------------
times=$tmp/ack-times
client_write "$P" 600 "$times" &
writer=$!
check "the writer is under way" client_wait_acked 150
cut_ms=$(($(date +%s%N) / 1000000))
tc cut "$P" "$U" repl || die "tcluster cut $P $U repl failed"
check "$P sees the link down" retry 20 not tandem_is "$P" cstate Connected
check "$U's disk is Outdated (the arbiter outdated it)" \
	retry 30 tandem_is "$U" dstate Outdated/DUnknown
wait "$writer"
check "every write of the writer was acknowledged" [ $? -eq 0 ]
exit4() { tlog "$P" | grep -q 'fence-peer.*exit 4\|fence-peer.*exit code 4\|returned 4'; }
check "fence-peer on $P exited 4" retry 10 exit4
tlog "$P" | grep 'fence-peer' | sed 's/^/# /'
alog "$P" | grep 'fence-peer\|outdate' | sed 's/^/# P arbiter: /'
alog "$U" | grep 'outdate' | sed 's/^/# U arbiter: /'
check "$P's arbiter had $U's arbiter outdate it (exit 4 over CPG)" sh -c \
	"grep -q 'fence-peer $U: exit, exit 4' '$TC_DIR/nodes/$P/log/tandem-arbiterd.log'"
check "no CIB constraint was placed" no_constraint
# cut_log_ms NODE ERE: the epoch ms of NODE's first tandemd log line
# matching ERE after the cut ("Dec 06 04:38:59.653 tandemd: ..."); not
# log_ms, which client.sh's fenced_ms and primary_ms use
cut_log_ms() {
	tlog "$1" | grep -- "$2" | while read -r mon day hms rest; do
		t=$(date -u -d "$mon $day $hms" +%s%3N 2>/dev/null) || continue
		[ "$t" -ge "$cut_ms" ] && { echo "$t"; break; }
	done
}
t_lost=$(cut_log_ms "$P" 'connection lost\|PingAck did not arrive')
t_out=$(cut_log_ms "$P" 'fence-peer helper returned 4')
d() { if [ -n "$1" ] && [ -n "$2" ]; then echo $(($2 - $1)); else echo "?"; fi; }
echo "# link cut (token $(tc env | sed -n 's/^TC_TOKEN=//p')ms): cut -> link loss seen $(d "$cut_ms" "$t_lost") ms -> peer Outdated (fence-peer exit 4) $(d "$cut_ms" "$t_out") ms; loss seen -> Outdated $(d "$t_lost" "$t_out") ms"
quick_outdate() { lo=$(d "$t_lost" "$t_out"); [ "$lo" != "?" ] && [ "$lo" -le 2000 ]; }
check "the peer was Outdated within 2 s of the loss being seen" quick_outdate
# the longest wait between two acknowledgements from the cut on
gap=$(awk -v c="$cut_ms" '$2 >= c - 5000 { if (p && $2 - p > g) g = $2 - p; p = $2 }
	END { print g + 0 }' "$times")
echo "# the longest wait between two acknowledgements around the cut: $gap ms"
check "$P's writes went on within 2 s of the cut ($gap ms)" [ "$gap" -le 2000 ]
check "$P is still Primary" tandem_is "$P" role Primary/Unknown
check "every acknowledged block reads back through $P" client_verify "$P"

# --- Uncut: resync ----------------------------------------------------------------
tc uncut "$P" "$U" repl || die "tcluster uncut $P $U repl failed"
check "$U is UpToDate/UpToDate again" retry 30 tandem_is "$U" dstate UpToDate/UpToDate
check "still no CIB constraint" no_constraint
check "$P's arbiter sees both UpToDate again" retry 10 arbiter_pair "$P" "$P" "$U"
check "every acknowledged block reads back through $P" client_verify "$P"
check "the two disks hold the same data" disks_same "$P"
check "no failed actions" tc wait -t 1 nomatch 'Failed (Resource )?Actions'

if [ "$nfail" -gt 0 ]; then
	tc exec n1 crm_mon -1 -r -f >&2
	tail -n 40 "$TC_DIR"/nodes/*/log/tandemd.log "$TC_DIR"/nodes/*/log/tandem-arbiterd.log >&2
fi
finish

#!/bin/sh
# `fencing resource-and-stonith` with tandem-arbiterd on both nodes, the
# Secondary powered off while the Primary writes (issue 18, scenario 5),
# with the handlers of doc/fence-handlers.md:
#     disk { fencing resource-and-stonith; }
#     handlers { fence-peer "/usr/sbin/tandem-fence-peer"; ... }
# `tcluster kill U` cuts the Secondary's power (cgroup.kill: corosync,
# tandemd and its arbiter at once).  The Primary's tandemd loses the
# connection and freezes I/O (susp-fen, resource-and-stonith); its
# fence-peer asks the arbiter, which finds the peer node gone from the
# ring (NODEDOWN) in a quorate partition (two_node) and answers "stonith"
# (doc/arbiter.md §6.1; if the handler asks before corosync has noticed,
# the arbiter first sends OUTDATE_REQ, which nobody answers, and decides
# again at the configuration change).  tandem-fence-peer then places the
# constraint tandem-fence-RES and asks Pacemaker's fencer to turn the peer
# off through the fencer API (stonith_api_kick, client "stonith-api" in
# the fencer's log); fence_tcluster logs the off in fence.log; the handler
# exits 7 and the frozen I/O goes on.  So:
# - fence-peer exits 7 on the arbiter's "stonith" answer, not the CIB
#   path's; the fencer had a request from the handler (stonith-api), and
#   fence.log an off of U after the kill;
# - the constraint allows the Promoted role on P only;
# - no write is acknowledged while I/O is frozen (tandemd's susp-fen 1 to
#   0), and the writer's every write is acknowledged in the end;
# - every acknowledged block reads back through P;
# - U, powered on again, resyncs, after-resync-target removes the
#   constraint, both arbiters see both records fresh and UpToDate, and
#   both disks hold the same data.
# (The Primary powered off instead is failover: test-failover*.sh.)
# Prints the times from the kill: the link loss seen, NODEDOWN in the
# arbiter, the arbiter's answer, the fencing confirmed, fence-peer's exit
# 7, the first acknowledgement after it, and how long I/O was frozen.
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"

clone=mysql-data-clone
tandem_cluster_up "fencing resource-and-stonith;" "$FENCE_HANDLERS" ||
	die "cannot bring the tandem cluster up"
pass "the tandem clone runs with fencing resource-and-stonith, Promoted on $P"

for n in n1 n2; do
	check "tandem-arbiterd runs on $n" arbiter_start "$n"
done
check "$P's arbiter holds both nodes' records" retry 30 arbiter_table_is "$P" \
	"$P:Primary:UpToDate" "$U:Secondary:UpToDate"
check "$U's arbiter holds the same records" retry 10 arbiter_table_is "$U" \
	"$P:Primary:UpToDate" "$U:Secondary:UpToDate"
check "the records say resource-and-stonith (fencing 2)" \
	[ "$(arbiter_record_of "$P" "$P" fencing)" = 2 ]
on "$P" tandemadm arbiter | sed 's/^/# /'

check "the client writes 100 blocks through $P's export" client_write "$P" 100
tandem_is() { [ "$(on "$1" tandemadm "$2" "$CLIENT_RES" 2>/dev/null)" = "$3" ]; }
fc=tandem-fence-$CLIENT_RES

# --- Power off the Secondary while the client writes ----------------------------
times=$tmp/ack-times
client_write "$P" 600 "$times" &
writer=$!
check "the writer is under way" client_wait_acked 200
fence_lines0=$(wc -l <"$TC_DIR/shared/fence.log" 2>/dev/null || echo 0)
kill_ms=$(date +%s%3N)
tc kill "$U" || die "tcluster kill $U failed"
wait "$writer"
check "every write of the writer was acknowledged (I/O went on)" [ $? -eq 0 ]
exit7() { tlog "$P" | grep -q 'fence-peer helper returned 7'; }
check "fence-peer on $P returned 7 (the peer was stonithed)" retry 60 exit7
tlog "$P" | grep -E 'fence-peer|susp-fen|connection lost|PingAck' | sed 's/^/# /'
alog "$P" | grep -E 'fence-peer|left|NODEDOWN|fenced|quorate' | sed 's/^/# P arbiter: /'

check "the arbiter answered stonith, exit 7 (NODEDOWN, quorate)" sh -c \
	"grep -q 'fence-peer $U: stonith, exit 7 (the peer node left the ring (NODEDOWN)' \
	'$TC_DIR/nodes/$P/log/tandem-arbiterd.log'"
check "the handler took the arbiter's answer, not the CIB path" sh -c \
	"grep -q 'tandem-fence-peer: $CLIENT_RES: tandem-arbiterd (asked for [0-9]* ms): stonith, exit 7' \
	'$TC_DIR/nodes/$P/log/tandemd.log'"
check "the handler asked the fencer to turn $U off" sh -c \
	"grep -q 'asking Pacemaker.s fencer to turn $U off' '$TC_DIR/nodes/$P/log/tandemd.log'"
check "the fencer confirmed it to the handler" sh -c \
	"grep -q 'the fencer confirmed that $U is off' '$TC_DIR/nodes/$P/log/tandemd.log'"
# stonith_api_kick signs on to the fencer as "stonith-api"; Pacemaker's
# own fencing of the lost node comes from pacemaker-controld
kick_lines() {
	grep -E "pacemaker-fenced.*stonith-api.*$U|pacemaker-fenced.*$U.*stonith-api" \
		"$TC_DIR/nodes/$P/log/cluster/pacemaker.log"
}
has_kick() { kick_lines >/dev/null; }
check "Pacemaker's fencer logged the handler's request (client stonith-api)" \
	retry 5 has_kick
kick_lines | head -n 4 | sed 's/^/# fencer: /'
offs=$(tail -n +"$((fence_lines0 + 1))" "$TC_DIR/shared/fence.log" |
	grep -E " off $U: off$")
echo "$offs" | sed 's/^/# fence.log: /'
check "fence_tcluster's log shows $U turned off after the kill" [ -n "$offs" ]
known_fenced() { [ "$(arbiter_node_of "$P" "$U" fenced)" = true ]; }
check "the arbiter multicast FENCED: $U known fenced in $P's table" retry 10 known_fenced
check "$fc allows the Promoted role on $P only" [ "$(fence_constraint "$P")" = "$P" ]

# the times, from the kill
t_lost=$(tlog_ms "$P" 'connection lost|PingAck did not arrive|susp-fen\( 0 -> 1 \)' "$kill_ms")
t_frz=$(tlog_ms "$P" 'susp-fen\( 0 -> 1 \)' "$kill_ms")
t_down=$(alog_ms "$P" "$U.*(left the ring|NODEDOWN)" "$kill_ms")
t_ans=$(alog_ms "$P" "fence-peer $U: stonith, exit 7" "$kill_ms")
t_conf=$(tlog_ms "$P" "the fencer confirmed that $U is off" "$kill_ms")
t_exit=$(tlog_ms "$P" 'fence-peer helper returned 7' "$kill_ms")
t_thaw=$(tlog_ms "$P" 'susp-fen\( 1 -> 0 \)' "$kill_ms")
t_ack=$(awk -v t="${t_exit:-0}" '$2 >= t { print $2; exit }' "$times")
d() { if [ -n "$1" ] && [ -n "$2" ]; then echo $(($2 - $1)); else echo "?"; fi; }
echo "# stonith (token $(tc env | sed -n 's/^TC_TOKEN=//p') ms): kill -> link loss seen" \
	"$(d "$kill_ms" "$t_lost") ms -> NODEDOWN in $P's arbiter $(d "$kill_ms" "$t_down") ms" \
	"-> arbiter answers stonith $(d "$kill_ms" "$t_ans") ms -> fencing confirmed" \
	"$(d "$kill_ms" "$t_conf") ms -> fence-peer exit 7 $(d "$kill_ms" "$t_exit") ms" \
	"-> next acknowledgement $(d "$kill_ms" "$t_ack") ms; I/O frozen" \
	"$(d "$t_frz" "$t_thaw") ms"
frozen_thawed() { [ -n "$t_frz" ] && [ -n "$t_thaw" ]; }
check "I/O was frozen (susp-fen) and thawed by the verdict" frozen_thawed
# Held writes complete when susp-fen goes back to 0 (doc: "Writes the
# peer had not acknowledged are held, not completed"); the client stamps
# an acknowledgement when it has read it, so one that tandemd sent just
# before the freeze may carry a stamp a little after it: 200 ms of slack
# at the start, none at the end.
frozen_acks() {
	[ -n "$t_frz" ] && [ -n "$t_thaw" ] &&
		ack_times_between "$times" $((t_frz + 200)) "$t_thaw"
}
fa=$(frozen_acks)
[ -z "$fa" ] || echo "$fa" | head -n 5 | sed 's/^/# acknowledged while frozen: /'
check "no write was acknowledged while I/O was frozen" [ -z "$fa" ]
check "the verdict came before I/O went on" \
	sh -c '[ -n "$1" ] && [ -n "$2" ] && [ "$1" -le "$2" ]' - "$t_exit" "$t_ack"
check "$P is still Primary" tandem_is "$P" role Primary/Unknown
check "$P's peer disk is Outdated (exit 7)" tandem_is "$P" dstate UpToDate/Outdated
check "Pacemaker keeps $P promoted" [ "$(tc promoted "$clone")" = "$P" ]
check "every acknowledged block reads back through $P" client_verify "$P"
check "$P takes writes alone" client_write "$P" 50

# --- The Secondary comes back ------------------------------------------------------
state_of() { tc status | awk -v n="$1" '$1 == n { print $2 }'; }
check "$U stays off after the fencing (pcmk_reboot_action=off)" \
	[ "$(state_of "$U")" = off ]
check "$U boots" tc start "$U"
check "tandem-arbiterd runs on $U again" arbiter_start "$U"
check "$U is online again" tc wait -t 60 online
check "$U is Unpromoted" tc wait -t 60 role "$clone" "$U" Unpromoted
check "$U is UpToDate/UpToDate again" retry 60 tandem_is "$U" dstate UpToDate/UpToDate
unfenced() { [ -z "$(fence_constraint "$P")" ]; }
check "the resync took $fc away" retry 30 unfenced
check "$P's arbiter sees both UpToDate again" retry 20 arbiter_table_is "$P" \
	"$P:Primary:UpToDate" "$U:Secondary:UpToDate"
check "$U's arbiter holds the same records" retry 10 arbiter_table_is "$U" \
	"$P:Primary:UpToDate" "$U:Secondary:UpToDate"
check "every acknowledged block reads back through $P" client_verify "$P"
check "the two disks hold the same data" disks_same "$P"
check "the cluster settles" tc wait -t 30 settled
check "no failed action" no_failures "$P"

if [ "$nfail" -gt 0 ]; then
	tc exec "$P" crm_mon -1 -r -f >&2
	tail -n 40 "$TC_DIR"/nodes/*/log/tandemd.log "$TC_DIR"/nodes/*/log/tandem-arbiterd.log >&2
fi
finish

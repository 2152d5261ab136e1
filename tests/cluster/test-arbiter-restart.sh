#!/bin/sh
# The arbiter of the Primary killed, then the replication link cut (issue
# 18, scenario 6), in the configuration doc/fence-handlers.md recommends
# (fencing resource-only; fence-peer, unfence-peer, after-resync-target),
# tandem-arbiterd on both nodes:
# - `kill -9` of P's tandem-arbiterd while the client writes: the writes
#   go on (the arbiter is not in the I/O path); U's arbiter sees it leave
#   the group with PROCDOWN (P's node stays in the ring); P's record in
#   U's table is stale once it is older than 2 x token (doc/arbiter.md §2:
#   a record is fresh while its sender is a member OR it is younger than
#   that), and U's arbiter refuses may-promote ("P's state is unknown and
#   it was not fenced", §6.4);
# - then `tcluster cut P U repl` while the client writes: P's fence-peer
#   cannot ask its arbiter (dead, its socket left behind) and takes the CIB
#   path: Pacemaker sees U reachable, the constraint tandem-fence-RES is
#   placed, exit 4; P stays Primary and serves;
# - nothing is promoted on stale facts: U stays Secondary and Unpromoted,
#   and U's arbiter still refuses may-promote; U's tandemd never becomes
#   Primary anywhere in this test (its whole log is checked at the end);
# - P's arbiter is started again: it rebuilds its table from tandemd's
#   event stream and the HELLO/FACTS its join causes: both records fresh
#   in both tables, P's arbiter a member again in U's, and may-promote on
#   U now refuses because P is a member that reports itself Primary;
# - after `uncut`, U resyncs, the constraint goes, every acknowledged block
#   reads back and both disks hold the same data.
# Prints the times: the kill to PROCDOWN in U's arbiter, to P's record
# stale and may-promote refused; the cut to fence-peer's exit 4 by the CIB
# path; the restart to both records fresh in both tables.
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"

clone=mysql-data-clone
tandem_cluster_up "$FENCE_DISK" "$FENCE_HANDLERS" ||
	die "cannot bring the tandem cluster up"
pass "the tandem clone runs with fencing resource-only, Promoted on $P"
fc=tandem-fence-$CLIENT_RES

for n in n1 n2; do
	check "tandem-arbiterd runs on $n" arbiter_start "$n"
done
both="$P:Primary:UpToDate $U:Secondary:UpToDate"
# shellcheck disable=SC2086 # two words
check "$P's arbiter holds both nodes' records" retry 30 arbiter_table_is "$P" $both
# shellcheck disable=SC2086
check "$U's arbiter holds the same records" retry 10 arbiter_table_is "$U" $both
token=$(on "$U" tandemadm arbiter --json 2>/dev/null | json_get token_ms)
echo "# totem.token: $token ms; a record of a non-member is stale after $((2 * ${token:-0})) ms"
# shellcheck disable=SC2016 # expanded by that sh
may_promote() { arbiter_ask "$1" '{"cmd":"may-promote","res":"'"$CLIENT_RES"'"}'; }
allow_is() { [ "$(may_promote "$1" | json_get allow)" = "$2" ]; }
check "may-promote on $U allows nothing while $P is Primary" allow_is "$U" false
may_promote "$U" | sed 's/^/# may-promote on '"$U"': /'

tandem_is() { [ "$(on "$1" tandemadm "$2" "$CLIENT_RES" 2>/dev/null)" = "$3" ]; }
check "the client writes 100 blocks through $P's export" client_write "$P" 100

# --- kill -9 of P's arbiter while the client writes -------------------------------
times1=$tmp/ack-times.1
client_write "$P" 400 "$times1" &
writer=$!
check "the writer is under way" client_wait_acked 200
apid=$(on "$P" pidof tandem-arbiterd)
check "$P's tandem-arbiterd has one pid ($apid)" \
	sh -c 'case $1 in "" | *" "*) exit 1 ;; esac' - "$apid"
kill_ms=$(date +%s%3N)
on "$P" kill -9 "$apid" || die "cannot kill $P's tandem-arbiterd ($apid)"
check "$P's tandem-arbiterd is gone" retry 10 not on "$P" kill -0 "$apid"
wait "$writer"
check "every write of the writer was acknowledged (the arbiter is not in the I/O path)" \
	[ $? -eq 0 ]
gap1=$(awk -v k="$kill_ms" '$2 >= k - 2000 { if (p && $2 - p > g) g = $2 - p; p = $2 }
	END { print g + 0 }' "$times1")
echo "# the longest wait between two acknowledgements around the arbiter's death: $gap1 ms"

procdown() { alog "$U" | grep -q "the arbiter of node $P .*PROCDOWN\|the arbiter of node $P died"; }
check "$U's arbiter saw $P's arbiter die (PROCDOWN)" retry 10 procdown
alog "$U" | grep "the arbiter of node $P" | tail -n 1 | sed 's/^/# U arbiter: /'
node_is() { [ "$(arbiter_node_of "$U" "$P" "$1")" = "$2" ]; }
check "in $U's table, $P's node is still in the ring" node_is ring true
check "in $U's table, $P's arbiter is not a member, left by procdown" \
	sh -c '[ "$1" = false ] && [ "$2" = procdown ]' - \
	"$(arbiter_node_of "$U" "$P" arbiter)" "$(arbiter_node_of "$U" "$P" left)"
stale() { [ "$(arbiter_record_of "$U" "$P" fresh)" = false ]; }
check "$P's record in $U's table goes stale" retry 10 stale
t_seen=$(date +%s%3N)
age=$(arbiter_record_of "$U" "$P" age_ms)
# when it went stale: at PROCDOWN, or 2 x token after its delivery if that
# came later (it was delivered age ms before t_seen)
t_pd=$(alog_ms "$U" "the arbiter of node $P" "$kill_ms")
t_stale=""
if [ -n "$age" ] && [ -n "$t_pd" ]; then
	t_stale=$((t_seen - age + 2 * token))
	[ "$t_stale" -ge "$t_pd" ] || t_stale=$t_pd
fi
echo "# $P's record in $U's table: fresh=false, age ${age:-?} ms (stale at 2 x token = $((2 * ${token:-0})) ms)"
check "it is stale only once older than 2 x token ($age ms)" \
	sh -c '[ -n "$1" ] && [ -n "$2" ] && [ "$1" -ge $((2 * $2)) ]' - "$age" "$token"
check "$U's own record stays fresh" [ "$(arbiter_record_of "$U" "$U" fresh)" = true ]
check "may-promote on $U refuses on stale facts" allow_is "$U" false
why=$(may_promote "$U" | json_get why)
echo "# may-promote on $U: $why"
check "because $P's state is unknown and it was not fenced" \
	sh -c 'case $1 in *"$2"*unknown*"not fenced"*) ;; *) exit 1 ;; esac' \
	- "$why" "$P"

# --- Cut the replication link while the client writes -----------------------------
times2=$tmp/ack-times.2
client_write "$P" 600 "$times2" &
writer=$!
check "the writer is under way" client_wait_acked 550
cut_ms=$(date +%s%3N)
tc cut "$P" "$U" repl || die "tcluster cut $P $U repl failed"
check "$P sees the link down" retry 20 not tandem_is "$P" cstate Connected
exit4() { tlog "$P" | grep -q 'fence-peer helper returned 4'; }
check "fence-peer on $P returned 4" retry 60 exit4
wait "$writer"
check "every write of the writer was acknowledged" [ $? -eq 0 ]
tlog "$P" | grep 'fence-peer' | sed 's/^/# /'
check "the handler could not ask the dead arbiter and took the CIB path" sh -c \
	"grep -q 'tandem-fence-peer: $CLIENT_RES: .*arbiter.sock): taking the CIB path' \
	'$TC_DIR/nodes/$P/log/tandemd.log'"
fenced_on() { [ "$(fence_constraint "$P")" = "$P" ]; }
check "the CIB path placed $fc: the Promoted role on $P only" retry 10 fenced_on
gap2=$(awk -v c="$cut_ms" '$2 >= c - 2000 { if (p && $2 - p > g) g = $2 - p; p = $2 }
	END { print g + 0 }' "$times2")
echo "# the longest wait between two acknowledgements around the cut: $gap2 ms"
check "$P is still Primary and serves" tandem_is "$P" role Primary/Unknown
check "$U is still Secondary" tandem_is "$U" role Secondary/Unknown
check "Pacemaker has $P promoted, $U Unpromoted" \
	sh -c '[ "$1" = "$2" ]' - "$(tc promoted "$clone")" "$P"
check "$U is Unpromoted" tc wait -t 10 role "$clone" "$U" Unpromoted
check "may-promote on $U still refuses" allow_is "$U" false
check "every acknowledged block reads back through $P" client_verify "$P"
t_exit=$(tlog_ms "$P" 'fence-peer helper returned 4' "$cut_ms")
t_lost=$(tlog_ms "$P" 'connection lost|PingAck did not arrive' "$cut_ms")

# --- Restart P's arbiter: its table comes back --------------------------------------
# the dead arbiter left its socket behind: wait for an answer, not the file
restart_ms=$(date +%s%3N)
on "$P" sh -c "/$sbin/tandem-arbiterd </dev/null \
	>>/var/log/tandem-arbiterd.log 2>&1 &" || die "cannot start $P's tandem-arbiterd"
answers() { arbiter_ask "$P" '{"cmd":"show"}' >/dev/null 2>&1; }
check "$P's tandem-arbiterd runs again and answers" retry 20 answers
apid2=$(on "$P" pidof tandem-arbiterd)
check "one tandem-arbiterd on $P, a new one ($apid2)" \
	sh -c 'case $1 in "" | *" "* | "$2") exit 1 ;; esac' - "$apid2" "$apid"
# shellcheck disable=SC2086
check "$P's new arbiter holds both records, fresh" retry 30 arbiter_table_is "$P" $both
t_back=$(date +%s%3N)
# shellcheck disable=SC2086
check "$U's arbiter holds them too" retry 10 arbiter_table_is "$U" $both
check "in $U's table, $P's arbiter is a member again" node_is arbiter true
check "$P's record is fresh again in $U's table" \
	[ "$(arbiter_record_of "$U" "$P" fresh)" = true ]
check "may-promote on $U refuses: $P is a member and Primary" allow_is "$U" false
why2=$(may_promote "$U" | json_get why)
echo "# may-promote on $U: $why2"
check "because $P is still Primary" \
	sh -c 'case $1 in *"$2"*Primary*) ;; *) exit 1 ;; esac' - "$why2" "$P"
on "$P" tandemadm arbiter | sed 's/^/# /'
alog "$P" | grep -E 'arbiter: node|incarnation|tandemd' | tail -n 4 | sed 's/^/# P arbiter: /'

d() { if [ -n "$1" ] && [ -n "$2" ]; then echo $(($2 - $1)); else echo "?"; fi; }
echo "# arbiter restart (token $token ms): kill -9 -> PROCDOWN in $U's arbiter" \
	"$(d "$kill_ms" "$t_pd") ms -> $P's record stale (PROCDOWN, or 2 x token after" \
	"its delivery) $(d "$kill_ms" "$t_stale") ms, seen stale (polled)" \
	"$(d "$kill_ms" "$t_seen") ms;" \
	"cut -> link loss seen $(d "$cut_ms" "$t_lost") ms -> fence-peer exit 4 (CIB path)" \
	"$(d "$cut_ms" "$t_exit") ms; restart -> both records fresh in $P's new table" \
	"$(d "$restart_ms" "$t_back") ms (polled)"

# --- Uncut: resync ------------------------------------------------------------------
tc uncut "$P" "$U" repl || die "tcluster uncut $P $U repl failed"
check "$U is UpToDate/UpToDate again" retry 60 tandem_is "$U" dstate UpToDate/UpToDate
unfenced() { [ -z "$(fence_constraint "$P")" ]; }
check "the resync took $fc away" retry 30 unfenced
# shellcheck disable=SC2086
check "$P's arbiter sees both UpToDate again" retry 20 arbiter_table_is "$P" $both
check "every acknowledged block reads back through $P" client_verify "$P"
check "the two disks hold the same data" disks_same "$P"
# the window of "nothing was promoted": $U's whole tandemd log, from the
# bring-up to now, and Pacemaker's promoted instance now
check "$U's tandemd never became Primary in this test" \
	not sh -c "grep -q 'role( Secondary -> Primary )' '$TC_DIR/nodes/$U/log/tandemd.log'"
check "$P is still the only Promoted" sh -c '[ "$1" = "$2" ]' - "$(tc promoted "$clone")" "$P"
check "the cluster settles" tc wait -t 30 settled
check "no failed action" no_failures "$P"

if [ "$nfail" -gt 0 ]; then
	tc exec "$P" crm_mon -1 -r -f >&2
	tail -n 40 "$TC_DIR"/nodes/*/log/tandemd.log "$TC_DIR"/nodes/*/log/tandem-arbiterd.log >&2
fi
finish

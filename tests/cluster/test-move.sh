#!/bin/sh
# Moves of the promoted role (issue 8, scenario 2): with a client's
# checksummed blocks on the volume, `pcs resource move <clone> NODE
# --promoted` (pcs 0.11, which takes its constraint away once the move is
# done; then `pcs resource clear`), then `crm_resource --move --promoted`
# followed by `crm_resource --clear`.  Each time the Promoted role and
# tandem's Primary move to the other node, every acknowledged block reads
# back intact through the new Primary's export, no failed action is left,
# and nothing is resynced in full: the replication counters of both nodes
# show (almost) nothing sent during the move, and a resync, if any, copies
# less than the device.  pcs must return within 15 s (issue 16).  Prints
# the time each move takes, until the new Primary's export serves a read
# (a probe in the node that tries every 20 ms), and until the command
# returned.
#
# Two variants: without a fencing policy (this file), and with
# TANDEM_FENCING=1 (test-move-fencing.sh) `fencing resource-only` and the
# handlers of doc/fence-handlers.md.  The move back after a failover with
# fencing is in test-failover-fencing.sh.
#
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build
# (make check-cluster makes it); without it the test is skipped.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"
command -v pcs >/dev/null 2>&1 ||
	skip "pcs is not installed (apt-get install pcs)"

if [ -n "${TANDEM_FENCING:-}" ]; then
	variant="fencing resource-only"
	tandem_cluster_up "$FENCE_DISK" "$FENCE_HANDLERS" ||
		die "cannot bring the tandem cluster up"
else
	variant="no fencing policy"
	tandem_cluster_up "" || die "cannot bring the tandem cluster up"
fi
pass "the tandem clone runs ($variant), Promoted on $P"
clone=mysql-data-clone

check "the client writes 300 blocks through $P's export" client_write "$P" 300
check "they read back through $P" client_verify "$P"

# counter NODE NAME: a replication counter (KiB) from tandemd's status
counter() {
	on "$1" tandemadm status --json "$CLIENT_RES" |
		sed -n "s/.*\"$2\": *\([0-9]*\).*/\1/p" | head -n 1
}
# resyncs NODE: the resyncs NODE's tandemd has logged so far
resyncs() { tlog "$1" | grep -c 'resync as Sync' ; }
snapshot() {
	s_ns1=$(counter n1 ns) s_nr1=$(counter n1 nr)
	s_ns2=$(counter n2 ns) s_nr2=$(counter n2 nr)
	s_rs1=$(resyncs n1) s_rs2=$(resyncs n2)
}
# sent_since A B: KiB between two readings of a counter (a counter that
# went back was reset, and counts from 0)
sent_since() {
	if [ "${2:-0}" -ge "${1:-0}" ]; then echo $((${2:-0} - ${1:-0}))
	else echo "${2:-0}"; fi
}
# no_full_resync WHAT: since the snapshot, less than 1 MiB went over the
# link in either direction, and no resync copied the whole 32 MiB device
no_full_resync() {
	d1=$(sent_since "$s_ns1" "$(counter n1 ns)")
	d2=$(sent_since "$s_ns2" "$(counter n2 ns)")
	r1=$(sent_since "$s_nr1" "$(counter n1 nr)")
	r2=$(sent_since "$s_nr2" "$(counter n2 nr)")
	echo "# $1: KiB sent/received since the move: n1 $d1/$r1, n2 $d2/$r2"
	new=$(tlog n1 | grep 'resync as Sync' | tail -n +$((s_rs1 + 1)))
	new="$new$(tlog n2 | grep 'resync as Sync' | tail -n +$((s_rs2 + 1)))"
	[ -z "$new" ] || echo "# $1: resync: $(echo "$new" | sed 's/.*: resync/resync/')"
	case $new in
	*"full sync"*) return 1 ;;
	esac
	for k in $(echo "$new" | sed -n 's/.* \([0-9][0-9]*\) KiB to copy.*/\1/p'); do
		[ "$k" -lt 32768 ] || return 1
	done
	[ "$d1" -lt 1024 ] && [ "$d2" -lt 1024 ] && [ "$r1" -lt 1024 ] &&
		[ "$r2" -lt 1024 ]
}
# The counters count: 300 blocks written = 1200 KiB sent and received.
counts() { n=$(counter "$1" "$2") && [ -n "$n" ] && [ "$n" -ge 1200 ]; }
check "$P's counter ns counts what it sent ($(counter "$P" ns) KiB)" \
	counts "$P" ns
check "$U's counter nr counts what it received ($(counter "$U" nr) KiB)" \
	counts "$U" nr
tandem_role() { [ "$(on "$1" tandemadm role "$CLIENT_RES")" = "$2" ]; }
cli_constraints() {
	tc exec n1 cibadmin --query --scope constraints 2>/dev/null |
		grep -o 'id="cli-[^"]*"'
}
# --- pcs resource move ----------------------------------------------------------
from=$P to=$U
snapshot
check "pcs resource move $clone $to --promoted" timed_move "$to" n1 \
	pcs resource move "$clone" "$to" --promoted
check "$to's export serves as Primary" [ -n "$t_serve" ]
check "Pacemaker has the Promoted role on $to" \
	tc wait -t 60 promoted "$clone" "$to"
echo "# pcs resource move ($variant): $from -> $to: Primary and serving" \
	"after ${t_serve:-?} ms; pcs returned after $t_cmd ms, of which n1" \
	"waited $t_cmd_stall ms for a CPU"
check "pcs returned within 15 s ($t_cmd ms, less $t_cmd_stall ms without a CPU)" \
	within_cpu 14999 "$t_cmd" "$t_cmd_stall"
check "no failed action after pcs resource move" no_failures n1
check "$to is Primary" tandem_role "$to" Primary/Secondary
check "$from is Secondary" tandem_role "$from" Secondary/Primary
check "$from is Unpromoted" tc wait -t 30 role "$clone" "$from" Unpromoted
check "the stand-ins follow to $to" tc wait -t 30 role mysql-ip "$to" Started
check "the cluster settles" tc wait -t 60 settled
check "pcs took its move constraint away" retry 20 not cli_constraints
check "pcs resource clear $clone" tc exec n1 pcs resource clear "$clone"
check "no full resync: pcs move" no_full_resync "pcs move"
check "every acknowledged block reads back through $to" client_verify "$to"
check "the client writes 100 blocks through $to" client_write "$to" 100
check "all 400 read back through $to" client_verify "$to"

# --- crm_resource --move --promoted, then --clear --------------------------------
from=$to to=$P
snapshot
check "crm_resource --move --promoted --node $to" timed_move "$to" n1 \
	crm_resource -r "$clone" --move --promoted --node "$to"
check "$to's export serves as Primary" [ -n "$t_serve" ]
check "Pacemaker has the Promoted role on $to" \
	tc wait -t 60 promoted "$clone" "$to"
echo "# crm_resource --move --promoted ($variant): $from -> $to: Primary" \
	"and serving after ${t_serve:-?} ms; crm_resource returned after" \
	"$t_cmd ms"
check "$to is Primary" tandem_role "$to" Primary/Secondary
check "$from is Secondary" tandem_role "$from" Secondary/Primary
check "a cli-prefer constraint is there" sh -c \
	"\"$TCLUSTER\" exec n1 cibadmin -Q --scope constraints | grep -q 'id=\"cli-prefer-$clone\"'"
check "crm_resource --clear" tc exec n1 crm_resource -r "$clone" --clear
check "no cli- constraint left" not cli_constraints
check "the cluster settles" tc wait -t 60 settled
p2=$(tc promoted "$clone")
echo "# after --clear: Promoted on $p2"
check "after --clear: one Promoted, and it is tandem's Primary" \
	tandem_role "$p2" Primary/Secondary
check "no full resync: crm_resource move and clear" no_full_resync \
	"crm_resource"
check "every acknowledged block reads back through $p2" client_verify "$p2"
check "the client writes 100 blocks through $p2" client_write "$p2" 100
check "all 500 read back through $p2" client_verify "$p2"
check "no failed action (failures, fail counts)" no_failures n1
check "no failed actions" tc wait -t 1 nomatch 'Failed (Resource )?Actions'

if [ "$nfail" -gt 0 ]; then
	tc exec n1 crm_mon -1 -r -f >&2
	tail -n 30 "$TC_DIR"/nodes/*/log/tandemd.log >&2
fi
finish

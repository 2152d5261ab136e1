#!/bin/sh
# Standby and stop (issue 8, scenario 3): with a client's checksummed
# blocks on the volume,
# - `crm node standby` of the promoted node: the other node is promoted and
#   serves every acknowledged block; the client writes on without a peer;
# - `crm node online` (unstandby): the node comes back Unpromoted, resyncs
#   as SyncTarget only what was written meanwhile (not the whole device),
#   and both disks are UpToDate;
# - `crm resource stop` of the clone: no instance left, tandem down on both
#   nodes, the stand-ins stopped; `crm resource start`: one Promoted again,
#   UpToDate on both sides with no resync, every block intact.
# Prints the time each step takes, until the new state is reached.
#
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build
# (make check-cluster makes it); without it the test is skipped.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"
command -v crm >/dev/null 2>&1 ||
	skip "crmsh is not installed (apt-get install crmsh)"

tandem_cluster_up "" || die "cannot bring the tandem cluster up"
pass "the tandem clone runs, Promoted on $P"
clone=mysql-data-clone

check "the client writes 200 blocks through $P's export" client_write "$P" 200
check "they read back through $P" client_verify "$P"

ms() { echo $((($(date +%s%N) - t0) / 1000000)); }
tcw() { "$TCLUSTER" wait "$@" >/dev/null; }
tandem_is() { [ "$(on "$1" tandemadm "$2" "$CLIENT_RES" 2>/dev/null)" = "$3" ]; }
resyncs() { tlog "$1" | grep -c 'resync as Sync'; }
# instance_on NODE: crm_mon has an instance of the clone active on NODE
instance_on() {
	tc state | grep -q "^res mysql-data $clone [A-Za-z]* $1\$"
}
# tandem_down NODE: tandemd on NODE has the resource down (or is not there)
tandem_down() {
	! on "$1" tandemadm status --json "$CLIENT_RES" 2>/dev/null |
		grep -q '"disk": *"UpToDate"'
}

# promoted_serving NODE: Pacemaker has the clone promoted on NODE only, and
# NODE's export serves reads
promoted_serving() {
	tcw -t 60 promoted "$clone" "$1" && retry 20 client_serves "$1"
}
no_resync_since() { [ "$(resyncs n1)" -eq "$1" ] && [ "$(resyncs n2)" -eq "$2" ]; }

# --- Standby of the promoted node -------------------------------------------------
t0=$(date +%s%N)
check "crm node standby $P" tc exec "$U" crm node standby "$P"
check "$U is promoted, its export serves" promoted_serving "$U"
echo "# standby $P: $U promoted and serving after $(ms) ms"
check "no instance left on $P" retry 30 not instance_on "$P"
check "$P: tandem down" retry 10 tandem_down "$P"
check "$U is Primary, alone" retry 10 tandem_is "$U" role Primary/Unknown
check "the stand-ins follow to $U" tcw -t 30 role mysql-ip "$U" Started
check "every acknowledged block reads back through $U" client_verify "$U"
check "the client writes 100 blocks through $U, without a peer" \
	client_write "$U" 100

# --- Unstandby ---------------------------------------------------------------------
rs=$(resyncs "$P")
t0=$(date +%s%N)
check "crm node online $P" tc exec "$U" crm node online "$P"
check "$P is Unpromoted again" tcw -t 60 role "$clone" "$P" Unpromoted
check "$P is UpToDate/UpToDate" retry 30 tandem_is "$P" dstate \
	UpToDate/UpToDate
echo "# unstandby $P: Unpromoted and in sync after $(ms) ms"
check "the cluster settles" tcw -t 60 settled
resync=$(tlog "$P" | grep 'resync as Sync' | tail -n +$((rs + 1)))
echo "# $P: ${resync:-no resync}" | sed 's/: .*: resync/: resync/'
# "volume 0: resync as SyncTarget: N KiB to copy[ (full sync)]"
from_bitmap() {
	case $resync in
	*"full sync"*) return 1 ;;
	*SyncTarget*) ;;
	*) return 1 ;;
	esac
	kib=$(echo "$resync" | sed -n 's/.* \([0-9][0-9]*\) KiB to copy.*/\1/p' |
		tail -n 1)
	[ -n "$kib" ] && [ "$kib" -ge 400 ] && [ "$kib" -lt 32768 ]
}
check "$P resynced as SyncTarget what $U wrote alone, not in full" \
	from_bitmap
p2=$(tc promoted "$clone")
echo "# after unstandby: Promoted on $p2"
check "one Promoted ($p2), and it is tandem's Primary" \
	tandem_is "$p2" role Primary/Secondary
check "every acknowledged block reads back through $p2" client_verify "$p2"

# --- crm resource stop / start -------------------------------------------------------
rs1=$(resyncs n1) rs2=$(resyncs n2)
t0=$(date +%s%N)
check "crm resource stop $clone" tc exec n1 crm resource stop "$clone"
check "no instance left" retry 60 not instance_on '[a-z0-9]*'
echo "# crm resource stop: stopped after $(ms) ms"
check "n1: tandem down" retry 10 tandem_down n1
check "n2: tandem down" retry 10 tandem_down n2
check "the stand-ins are stopped" tcw -t 30 match \
	'mysql-ip.*Stopped'
t0=$(date +%s%N)
check "crm resource start $clone" tc exec n1 crm resource start "$clone"
check "one Promoted again" tcw -t 60 promoted "$clone"
p3=$(tc promoted "$clone")
check "$p3's export serves" retry 20 client_serves "$p3"
echo "# crm resource start: $p3 promoted and serving after $(ms) ms"
check "the cluster settles" tcw -t 60 settled
check "$p3 is Primary, UpToDate on both sides" \
	tandem_is "$p3" dstate UpToDate/UpToDate
check "no resync after stop and start" no_resync_since "$rs1" "$rs2"
check "every acknowledged block reads back through $p3" client_verify "$p3"
check "the client writes 100 blocks through $p3" client_write "$p3" 100
check "all of them read back through $p3" client_verify "$p3"
check "no failed actions" tcw -t 1 nomatch 'Failed (Resource )?Actions'

if [ "$nfail" -gt 0 ]; then
	tc exec n1 crm_mon -1 -r -f >&2
	tail -n 30 "$TC_DIR"/nodes/*/log/tandemd.log >&2
fi
finish

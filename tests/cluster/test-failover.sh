#!/bin/sh
# Failover (issue 8, scenario 4): protocol C, a client writing through the
# promoted node's NBD export; the promoted node loses its power (tcluster
# kill: cgroup.kill, every process at once).  Pacemaker must fence it
# (fence_tcluster), promote the Secondary, and every write the client had
# acknowledged must be there.  The old node then comes back (tcluster start),
# resyncs as SyncTarget from the bitmap (not a full sync) and becomes
# Unpromoted/Secondary.  Prints the failover time: from the kill until the
# new Primary is promoted and its NBD export serves a read
# (doc/perf-failover.md).
#
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build
# (make check-cluster makes it); without it the test is skipped.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
. "$here/client.sh"

tandem_cluster_up "" || die "cannot bring the tandem cluster up"
pass "the tandem clone runs, Promoted on $P"
check "$P is Primary, $U Secondary" \
	[ "$(on "$P" tandemadm role mysql)" = Primary/Secondary ]
uri=$(client_uri)
dstate_is() { [ "$(on "$1" tandemadm dstate mysql)" = "$2" ]; }

# tcw ARGS: tcluster wait, quietly
tcw() { "$TCLUSTER" wait "$@" >/dev/null; }

check "the client writes 200 blocks through $P's export" client_write "$P" 200
check "all of them are there" client_verify "$P"

# The power cut comes while the client is writing: what it had
# acknowledged (protocol C: on both disks) must survive; what was in
# flight need not.
dc=$(tc state | awk '$1 == "dc" { print $2 }')
client_write "$P" 100000 >/dev/null 2>&1 &
cpid=$!
sleep 1
t0=$(date +%s%N)
tc kill "$P" || die "tcluster kill $P failed"
wait "$cpid"
check "the kill cut the client off" [ $? -ne 0 ]

# Poll until the new Primary's export serves a read, noting the fencing
# and the promotion on the way.
ms() { echo $((($(date +%s%N) - t0) / 1000000)); }
t_fenced="" t_primary="" t_read="" t_rs=""
end=$(($(date +%s) + 45))
while [ "$(date +%s)" -lt "$end" ]; do
	# fence.log lines: "DATE TIME NODE[PID] ACTION TARGET: off"
	if [ -z "$t_fenced" ] && grep -Eq " (off|reboot) $P: (reboot: )?off" \
	    "$TC_DIR/shared/fence.log" 2>/dev/null; then
		t_fenced=$(ms)
	fi
	if [ -z "$t_primary" ]; then
		case $(on "$U" tandemadm role mysql 2>/dev/null) in
		Primary/*) t_primary=$(ms) ;;
		esac
	fi
	if [ -n "$t_primary" ]; then
		t_rs=$(ms)
		if on "$U" nbdsh -u "$uri" -c 'h.pread(4096, 0)' \
		    >/dev/null 2>&1; then
			t_read=$(ms)
			break
		fi
	fi
	sleep 0.1
done
check "$U's export serves reads after the failover" [ -n "$t_read" ]
check "$P was fenced" tcw -t 10 fenced "$P"
check "Pacemaker has $U promoted" tcw -t 20 promoted mysql-data-clone "$U"
# The read is an nbdsh started in the node (Python, about 0.5 s): it began
# at t_rs and ended at t_read.
echo "# failover (the DC was $dc): kill -> $P fenced ${t_fenced:-?} ms ->" \
	"$U Primary ${t_primary:-?} ms -> $U's export serves a read" \
	"${t_read:-?} ms (that read began at ${t_rs:-?} ms)"
check "every acknowledged write is on $U" client_verify "$U"
check "the stand-ins follow to $U" tcw -t 20 role mysql-ip "$U" Started
check "$U takes writes without its peer" client_write "$U" 50

# --- The old node comes back ---------------------------------------------------
state_of() { tc status | awk -v n="$1" '$1 == n { print $2 }'; }
check "$P stays off after the fencing (pcmk_reboot_action=off)" \
	[ "$(state_of "$P")" = off ]
t1=$(date +%s)
check "$P boots" tc start "$P"
check "$P is online again" tcw -t 30 online
check "$P is Unpromoted" tcw -t 30 role mysql-data-clone "$P" Unpromoted
check "$P is UpToDate/UpToDate again" retry 30 dstate_is "$P" UpToDate/UpToDate
echo "# $P in sync again $(($(date +%s) - t1)) s after its start"
check "$P is Secondary" [ "$(on "$P" tandemadm role mysql)" = Secondary/Primary ]
check "$U is still the only Promoted" [ "$(tc promoted mysql-data-clone)" = "$U" ]
resync=$(tlog "$P" | grep 'resync as SyncTarget' | tail -n 1)
echo "# $P: ${resync#*: }"
check "$P resynced as SyncTarget" [ -n "$resync" ]
# "volume 0: resync as SyncTarget: N KiB to copy[ (full sync)]": from the
# bitmap, N is what $U wrote without it plus $P's activity-log extents
# (4 MiB each) over the client's 8 MiB span; a full sync would copy the
# whole device (32728 KiB).  Less than half of it, then.
from_bitmap() {
	case $resync in
	*"full sync"*) return 1 ;;
	esac
	kib=$(echo "$resync" | sed -n 's/.* \([0-9][0-9]*\) KiB to copy.*/\1/p')
	[ -n "$kib" ] && [ "$kib" -lt 16384 ]
}
check "from the bitmap, not a full sync" from_bitmap
check "$U was the SyncSource" grep -q 'resync as SyncSource' \
	"$TC_DIR/nodes/$U/log/tandemd.log"
check "every acknowledged write is on $U after the resync" client_verify "$U"
# The data areas of the two backing files (the metadata is at their end).
same_data() {
	sect=$(on "$U" tandemadm status --json mysql |
		sed -n 's/.*"size_sect": *\([0-9]*\).*/\1/p' | head -n 1)
	[ -n "$sect" ] && cmp -n $((sect * 512)) \
		"$TC_DIR/nodes/n1/disk.img" "$TC_DIR/nodes/n2/disk.img"
}
check "the two disks hold the same data" same_data
check "no failed actions" tcw -t 1 nomatch 'Failed (Resource )?Actions'

if [ "$nfail" -gt 0 ]; then
	tc exec "$U" crm_mon -1 -r -f >&2
	tail -n 30 "$TC_DIR"/nodes/*/log/tandemd.log >&2
fi
finish

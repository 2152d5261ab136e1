#!/bin/sh
# tandem cluster demo: build, then a real two-node Pacemaker cluster (corosync
# and pacemakerd in network namespaces, tests/cluster/tcluster) runs a tandem
# volume as a promotable clone through the OCF agent ocf:tandem:tandem.  A
# client writes checksummed blocks through the Primary's NBD export; `pcs
# resource move --promoted` fails the volume over to the other node; the same
# checksum is read back there, and every block is checked.  Takes about two
# minutes (less with a built tree), needs root, and leaves nothing behind but
# the build directory (BUILD_DIR, default build-demo/). scripts/demo-replication.sh shows
# replication alone, without a cluster.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build-demo}
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
die() { printf 'demo.sh: %s\n' "$*" >&2; exit 1; }
t_start=$(date +%s)

[ "$(id -u)" -eq 0 ] || die "must run as root (it builds network namespaces and cgroups)"
say "Build (in $build)"
cd "$top" || exit 1
# shellcheck disable=SC3013 # -nt: in dash, bash and busybox sh alike
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	autoreconf -fi >/dev/null || die "autoreconf failed: run scripts/install-deps.sh first"
fi
mkdir -p "$build"
if ! (cd "$build" && { [ -f Makefile ] || "$top/configure" -q; } &&
	make -s -j"$(nproc 2>/dev/null || echo 2)") >"$build/demo-build.log" 2>&1; then
	tail -n 20 "$build/demo-build.log" >&2
	die "the build failed (scripts/install-deps.sh installs what it needs)"
fi
echo "built (log: $build/demo-build.log)"

TCLUSTER=$top/tests/cluster/tcluster
why=$("$TCLUSTER" check) || die "this machine cannot run the cluster: $why"
tmp=$(mktemp -d /tmp/tandem-demo-cluster.XXXXXX) || exit 1
TC_DIR=$tmp/cluster
export TC_DIR TCLUSTER
cleanup() {
	trap - EXIT INT TERM HUP
	if [ -f "$TC_DIR/cluster.env" ]; then
		say "Tear down: the cluster, its namespaces, cgroups and files"
		"$TCLUSTER" down >/dev/null 2>&1 || echo "tcluster down failed: see $TC_DIR"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
(cd "$build" && make -s install DESTDIR="$tmp/dest" >/dev/null) ||
	die "make install DESTDIR=$tmp/dest failed"

# The cluster helpers of tests/cluster (tandem_cluster_up, client_write,
# client_verify) expect these.
here=$top/tests/cluster
retry() {
	r_end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$r_end" ] || return 1
		sleep 0.2
	done
}
not() { ! "$@" >/dev/null 2>&1; }
TANDEM_DESTDIR=$tmp/dest
CLIENT_LEDGER=$tmp/ledger
export TANDEM_DESTDIR CLIENT_LEDGER
# shellcheck disable=SC1091 # shellcheck -x from the top finds it
. "$here/client.sh"
clone=mysql-data-clone
tc() { "$TCLUSTER" "$@"; }
mon() { tc exec n1 crm_mon -1 -r | sed -n '/Node List/,$p'; }
roles() {
	for n in n1 n2; do
		printf '  %s: tandem role %s, disks %s\n' "$n" \
			"$(on "$n" tandemadm role mysql)" "$(on "$n" tandemadm dstate mysql)"
	done
}
# sum NODE: sha256 of the client's 8 MiB, read through NODE's NBD export
sum() {
	client_nbdsh "$1" -u "$(client_uri)" -c '
import hashlib
s = hashlib.sha256()
for off in range(0, 8 << 20, 1 << 20):
    s.update(h.pread(1 << 20, off))
print(s.hexdigest())'
}

say "A two-node cluster: n1 and n2, corosync + Pacemaker in namespaces"
cat <<'EOF'
Each node has its own network, mount, PID and UTS namespaces and cgroup; two
networks join them: the corosync ring (eth0) and tandem's replication link
(eth1).  tandem is installed into both nodes; each gets a 32 MiB disk file,
and the resource "mysql" (protocol C) is brought up and declared in sync.
Then cib-examples/promotable.xml is loaded: the volume as a promotable clone
of ocf:tandem:tandem, with a filesystem and an address (stand-ins here) that
follow the Promoted node, and fencing (fence_tcluster, a "PDU" for these
nodes). The resource runs as doc/fence-handlers.md recommends:
"fencing resource-only" with tandem-fence-peer as its fence-peer handler.
EOF
t0=$(date +%s)
tandem_cluster_up "$FENCE_DISK" "$FENCE_HANDLERS" 2>"$tmp/up.err" >/dev/null ||
	die "the cluster did not come up: $(cat "$tmp/up.err")"
echo "up, and Pacemaker promoted $P, in $(($(date +%s) - t0)) s"
mon
roles

say "tandem-arbiterd on both nodes: one table of facts over corosync"
echo "(systemd starts it with corosync on a real host: tandem-arbiterd.service)"
for n in n1 n2; do arbiter_start "$n" || die "tandem-arbiterd did not start on $n"; done
both_known() { [ "$(arbiter_records "$P" | wc -l)" = 2 ]; }
retry 20 both_known || die "the arbiters do not share both records"
run on "$P" tandemadm arbiter

say "A client writes 2048 checksummed 4 KiB blocks through $P's NBD export"
echo "(nbdsh in $P on /run/tandem/mysql.nbd; each write acknowledged under protocol C is on both disks)"
t0=$(date +%s)
client_write "$P" 2048 || die "the client could not write through $P"
echo "acknowledged: $(client_acked) blocks in $(($(date +%s) - t0)) s"

say "The replication link is cut: the arbiter outdates $U over corosync"
cat <<'EOF'
Only the replication link goes down; the corosync ring stays. The Primary's
tandemd runs fence-peer, which asks its arbiter; the arbiter asks the peer's
arbiter over CPG, which has its tandemd mark the disk Outdated (DRBD's dopd,
without heartbeat). The handler exits 4, and no CIB constraint is needed.
EOF
tc cut "$P" "$U" repl || die "tcluster cut failed"
outdated() { [ "$(on "$U" tandemadm dstate mysql)" = Outdated/DUnknown ]; }
retry 30 outdated || die "$U was not outdated"
client_write "$P" 512 || die "the client could not write through $P"
echo "$P kept writing: $(client_acked) blocks acknowledged"
grep -h 'tandem-fence-peer: mysql' "$TC_DIR/nodes/$P/log/tandemd.log" | tail -n 2
grep -h 'fence-peer \|outdate asked' "$TC_DIR"/nodes/*/log/tandem-arbiterd.log | tail -n 3
run on "$U" tandemadm status mysql
if tc exec n1 cibadmin --query --scope constraints | grep -q tandem-fence-mysql; then
	die "a CIB constraint was placed"
fi
echo "CIB constraints against $U: none (cibadmin --query --scope constraints)"
run on "$P" tandemadm arbiter

say "The link comes back: only what changed resyncs"
tc uncut "$P" "$U" repl || die "tcluster uncut failed"
on "$U" tandemadm wait-connect --timeout 30 mysql >/dev/null || die "$U did not reconnect"
on "$U" tandemadm wait-sync --timeout 60 mysql >/dev/null || die "the resync did not finish"
run on "$U" tandemadm status mysql
grep -h 'resync as SyncTarget' "$TC_DIR"/nodes/*/log/tandemd.log | tail -n 1

before=$(sum "$P") || die "cannot read through $P"
echo "sha256 of the 8 MiB, read through $P: $before"

say "Fail over: move the Promoted role to $U with pcs"
t0=$(date +%s%N)
run tc exec n1 pcs resource move "$clone" "$U" --promoted ||
	die "pcs resource move failed"
if ! tc wait -t 60 promoted "$clone" "$U" >/dev/null 2>&1 ||
	! retry 20 client_serves "$U"; then
	die "$U is not promoted and serving"
fi
echo "$U is Primary and its export serves after $((($(date +%s%N) - t0) / 1000000)) ms"
echo "(pcs 0.11 removed its move constraint once the move was done; the agent's"
echo "promote waited until the arbiter no longer saw $P as Primary)"
mon
roles

say "The data on $U"
after=$(sum "$U") || die "cannot read through $U"
echo "sha256 of the 8 MiB, read through $P before: $before"
echo "sha256 of the 8 MiB, read through $U after:  $after"
[ "$before" = "$after" ] || die "the checksums differ: data lost in the move"
echo "identical: the data survived the failover"
client_verify "$U" || die "some blocks differ"
echo "and each of the $(client_acked) blocks matches its own checksum"
client_write "$U" 256 && echo "$U takes new writes: 256 more blocks acknowledged"
echo "resyncs (SyncTarget) in either node's log: $(cat "$TC_DIR"/nodes/*/log/tandemd.log |
	grep -c 'resync as SyncTarget') (the one after the link came back; a move copies nothing)"

say "Done in $(($(date +%s) - t_start)) s: the cluster is torn down now"
echo "The tests that do this and more: tests/cluster/ (make check-cluster)."

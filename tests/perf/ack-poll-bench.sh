#!/bin/sh
# ack-poll-bench.sh: what net { ack-poll-usec N; } buys and costs
# (doc/perf-ack-poll.md). Two tandemd nodes, alice (Primary) and bob, in
# network namespaces joined by a veth pair (tests/integration's
# repl-functions.sh), protocol C. fio runs in alice's namespace with the nbd
# engine against her export; for each N in VALUES the connection is made
# anew with `ack-poll-usec N` (adjust, disconnect, connect). Workloads:
#   commit4k_qd1   4 KiB random write + FLUSH at QD1 (fio --fsync=1)
#   rand4k_j1      4 KiB random writes at QD1
# Each round takes the values in a shuffled order; the table gives the
# medians over the rounds of IOPS, the ratio to N = 0 within the round,
# write p50/p99 (and flush p50 for commit4k), CPU seconds per GiB written
# of both tandemd processes (/proc/PID/stat utime + stime over the run),
# the machine's busy CPUs (/proc/stat user + nice + system + irq + softirq
# over the run), and alice's spin counters (status ack_poll: spins, hits).
# Not part of make check.
#
# Environment (defaults in brackets):
#   BUILD_DIR  configured and built tree [/tmp/b2]
#   SCRATCH    where the two backing files go [/var/tmp]
#   SIZE_MB    each backing file [1280]
#   VALUES     the N to compare ["0 20 50 100"]
#   WORKLOADS  ["commit4k_qd1 rand4k_j1"]
#   ROUNDS     [3]   RUN_SECONDS  seconds per fio run [4]
#   LINK       htb1g (HTB rate 1gbit on both ends) or veth [htb1g]
#   RAW        raw lines [tests/perf/results/ack-poll-bench-DATE.txt]
#
#   ack-poll-bench.sh report RAWFILE   the table from a raw file again
#
# Needs root, ip, tc (sch_htb), fio with the nbd engine, python3. Wrap a run
# in `flock /tmp/bench.lock` on a shared machine.
set -eu

here=$(cd "$(dirname "$0")" && pwd)

report() {
	awk '
	$1 == "run" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		k = f["wl"] SUBSEP f["n"]
		r = f["round"]
		iops[k, r] = f["iops"]; base[f["wl"], r] = (f["n"] == 0 ? f["iops"] : base[f["wl"], r])
		wl[f["wl"]] = 1; nv[f["n"]] = 1; rounds[r] = 1
		cnt[k]++
		v[k, "iops", cnt[k]] = f["iops"]; v[k, "p50", cnt[k]] = f["wp50"]
		v[k, "p99", cnt[k]] = f["wp99"]; v[k, "fp50", cnt[k]] = f["fp50"]
		v[k, "cpu", cnt[k]] = f["cpu_s_gib"]; v[k, "busy", cnt[k]] = f["busy"]
		v[k, "hit", cnt[k]] = f["spins"] > 0 ? f["hits"] / f["spins"] : 0
		v[k, "spins", cnt[k]] = f["spins"] / (f["ios"] > 0 ? f["ios"] : 1)
		next
	}
	/^#/ { print; next }
	function med(k, what,   n, i, j, a, t) {
		n = cnt[k]
		for (i = 1; i <= n; i++) a[i] = v[k, what, i] + 0
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		for (w in wl) {
			print ""
			print "### " w " (medians over " length(rounds) " rounds)"
			print ""
			print "| ack-poll-usec | IOPS | / N=0 (same round) | write p50 µs | write p99 µs | flush p50 µs | CPU s/GiB (both tandemd) | machine busy CPUs | spins per I/O | hit rate |"
			print "|---|---|---|---|---|---|---|---|---|---|"
			nn = 0
			for (n in nv) order[++nn] = n + 0
			for (i = 2; i <= nn; i++) { t = order[i]; for (j = i - 1; j >= 1 && order[j] > t; j--) order[j + 1] = order[j]; order[j + 1] = t }
			for (i = 1; i <= nn; i++) {
				n = order[i]; k = w SUBSEP n
				if (!cnt[k]) continue
				m = 0; delete rr
				for (r in rounds) if ((k, r) in iops && base[w, r] > 0) rr[++m] = iops[k, r] / base[w, r]
				for (a = 2; a <= m; a++) { t = rr[a]; for (b = a - 1; b >= 1 && rr[b] > t; b--) rr[b + 1] = rr[b]; rr[b + 1] = t }
				ratio = m ? (m % 2 ? rr[(m + 1) / 2] : (rr[m / 2] + rr[m / 2 + 1]) / 2) : 0
				printf "| %d | %.0f | %.2f | %.0f | %.0f | %s | %.2f | %.2f | %.2f | %.2f |\n", n, med(k, "iops"), ratio,
					med(k, "p50"), med(k, "p99"), w ~ /commit/ ? sprintf("%.0f", med(k, "fp50")) : "–",
					med(k, "cpu"), med(k, "busy"), med(k, "spins"), med(k, "hit")
			}
		}
	}' "$1"
}

if [ "${1:-}" = report ]; then
	report "$2"
	exit 0
fi

: "${BUILD_DIR:=/tmp/b2}" "${SCRATCH:=/var/tmp}" "${SIZE_MB:=1280}" "${VALUES:=0 20 50 100}"
: "${WORKLOADS:=commit4k_qd1 rand4k_j1}" "${ROUNDS:=3}" "${RUN_SECONDS:=4}" "${LINK:=htb1g}"
: "${RAW:=$here/results/ack-poll-bench-$(date -u +%Y%m%d-%H%M%S).txt}"
for t in fio ip tc python3; do
	command -v "$t" >/dev/null 2>&1 || { echo "ack-poll-bench: $t is needed" >&2; exit 1; }
done
[ -x "$BUILD_DIR/replicator/tandemd" ] ||
	{ echo "ack-poll-bench: no tandemd in BUILD_DIR=$BUILD_DIR (configure and make it)" >&2; exit 1; }
export TANDEMADM="$BUILD_DIR/replicator/tandemadm" TANDEMD="$BUILD_DIR/replicator/tandemd"
# shellcheck source=../integration/functions.sh
. "$here/../integration/functions.sh"
# shellcheck source=../integration/repl-functions.sh
. "$here/../integration/repl-functions.sh"
mkdir -p "$(dirname "$RAW")"
: >"$RAW"
raw() { echo "$*" >>"$RAW"; echo "$*"; }

if [ "$LINK" = htb1g ]; then
	for side in "$ns_a va$$" "$ns_b vb$$"; do
		# shellcheck disable=SC2086
		set -- $side
		ip netns exec "$1" tc qdisc add dev "$2" root handle 1: htb default 10 r2q 1000
		ip netns exec "$1" tc class add dev "$2" parent 1: classid 1:10 htb rate 1gbit \
			ceil 1gbit burst 15k
	done
fi

# the backing files on SCRATCH (a disk, not tmpfs), reached from $tmp
for x in a b; do
	f=$SCRATCH/ack-poll-bench-$$-$x.img
	rm -f "$f"
	fallocate -l "${SIZE_MB}M" "$f"
	ln -s "$f" "$tmp/$x.img"
done
rm_images() { rm -f "$SCRATCH/ack-poll-bench-$$-a.img" "$SCRATCH/ack-poll-bench-$$-b.img"; }
cleanup_hooks="$cleanup_hooks rm_images"

conf_for() { write_repl_conf "$tmp/t.conf" "protocol C; connect-int 1; timeout 5; ack-poll-usec $1;"; }
conf_for 0
blank_pair
socket=$tmp/run-a/r0.nbd
uri="nbd+unix:///r0?socket=$socket"

# switch N: the new option applies from the next connect
switch() {
	conf_for "$1"
	on a adjust r0 >/dev/null
	on b adjust r0 >/dev/null
	on a disconnect r0
	on b disconnect r0
	on a connect r0
	on b connect r0
	on a wait-connect --timeout 30 r0 >/dev/null || fail "no connection with ack-poll-usec $1"
	wait_for a peer_disk UpToDate 60
	wait_for b disk UpToDate 60
}

fio_args() {
	case $1 in
	commit4k_qd1) echo "--rw=randwrite --bs=4k --size=1G --iodepth=1 --fsync=1 --randseed=$2" ;;
	rand4k_j1) echo "--rw=randwrite --bs=4k --size=1G --iodepth=1 --randseed=$2" ;;
	*) fail "unknown workload $1" ;;
	esac
}

busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
spin_field() {
	on a status --json r0 | python3 -c '
import json, sys
r = json.load(sys.stdin)["resources"][0]
print(r.get("ack_poll", {}).get(sys.argv[1], 0))' "$1"
}

# one ROUND N WORKLOAD
one() {
	wait_idle a 60
	wait_idle b 60
	sync
	s0=$(spin_field spins); h0=$(spin_field hits)
	b0=$(busy); ca0=$(cpu_of "$pid_a"); cb0=$(cpu_of "$pid_b")
	# shellcheck disable=SC2046
	ip netns exec "$ns_a" fio --name=w --ioengine=nbd --uri="$uri" $(fio_args "$3" "$1$2") \
		--time_based --runtime="$RUN_SECONDS" --output-format=json --output="$tmp/fio.json" >"$tmp/fio.err" 2>&1 ||
		{ cat "$tmp/fio.err"; fail "fio $3 with ack-poll-usec $2"; }
	b1=$(busy); ca1=$(cpu_of "$pid_a"); cb1=$(cpu_of "$pid_b")
	s1=$(spin_field spins); h1=$(spin_field hits)
	python3 - "$tmp/fio.json" "$1" "$2" "$3" "$((b1 - b0))" "$((ca1 - ca0 + cb1 - cb0))" \
		"$((s1 - s0))" "$((h1 - h0))" "$RUN_SECONDS" "$(getconf CLK_TCK)" <<'PY' >>"$RAW"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
rnd, n, wl, busy, cpu, spins, hits, secs, hz = sys.argv[2:]
w = j["write"]
ios = w["total_ios"]
gib = w["io_bytes"] / 2**30
pct = w["clat_ns"].get("percentile", {})
sync = j.get("sync", {})
fp50 = sync.get("lat_ns", {}).get("percentile", {}).get("50.000000", 0) / 1000
print("run round=%s n=%s wl=%s iops=%.0f ios=%d wp50=%.0f wp99=%.0f fp50=%.0f cpu_s_gib=%.3f busy=%.3f spins=%s hits=%s" % (
    rnd, n, wl, w["iops"], ios, pct.get("50.000000", 0) / 1000, pct.get("99.000000", 0) / 1000, fp50,
    (int(cpu) / int(hz)) / gib if gib else 0, int(busy) / int(hz) / float(secs), spins, hits))
PY
	tail -n 1 "$RAW"
}

raw "# ack-poll-bench $(date -u +%Y-%m-%dT%H:%M:%SZ) tree $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
raw "# link $LINK; protocol C; values $VALUES; workloads $WORKLOADS; $ROUNDS rounds of $RUN_SECONDS s; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
raw "# binaries: $("$TANDEMD" --version 2>&1 | head -n 1), built $(date -u -r "$TANDEMD" +%Y-%m-%dT%H:%M:%SZ) in $BUILD_DIR (the tree above is the script's)"
raw "# backing files on $SCRATCH ($(df -P "$SCRATCH" | awk 'NR == 2 { print $1 }'))"
for round in $(seq 1 "$ROUNDS"); do
	# (not $n: repl-functions.sh's on() uses it)
	for val in $(printf '%s\n' $VALUES | shuf); do
		switch "$val"
		for wl in $(printf '%s\n' $WORKLOADS | shuf); do
			one "$round" "$val" "$wl"
		done
	done
done
raw "# done $(date -u +%Y-%m-%dT%H:%M:%SZ); load average $(cut -d' ' -f1-3 /proc/loadavg)"
report "$RAW"

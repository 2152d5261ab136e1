#!/bin/sh
# nbd-bench.sh: the NBD front end of a StandAlone Primary against nbdkit's
# file plugin and the raw file (doc/perf-nbd.md). One preallocated backing
# file with internal metadata serves every target in turn; the same fio
# jobs run against each target in shuffled rounds, ratios are taken within
# a round, and the script prints Markdown tables. Not part of make check.
#
#   targets   raw          fio psync/libaio --direct=1 on the backing file
#             nbdkit       nbdkit file plugin, default cache, Unix socket
#             nbdkit_none  the same with cache=none
#             tandemd      tandemd, StandAlone Primary (primary --force)
#   workloads seq1m_qd1 seq1m_qd8     1 MiB sequential writes, QD1 / QD8
#             rand4k_jN (N=1,2,4,8)   4 KiB random writes, N jobs (N NBD
#                                     connections), 128 MiB apart, QD1 each
#             commit4k_qd1            4 KiB random write + FLUSH, QD1, 1 GiB
#             rand4k_wide             4 KiB random writes, QD1, the whole
#                                     region (AL experiment only)
#
# Every run starts with nothing dirty and none of the backing file in the
# page cache (sync, then POSIX_FADV_DONTNEED through dd iflag=nocache).
# Before the rounds one size-based pass of 1 MiB writes over the test region
# goes through tandemd (its activity log and bitmap reach their steady
# state: al-extents 1237 cover this device), then one discarded warm-up
# round. Optional afterwards: AL=1, tandemd with al-extents 67 against the
# default in shuffled rounds (a hot set smaller than the region: AL
# transactions, each a synchronous 4 KiB metadata write); PROFILE=1:
# syscalls per request (strace -c -f), the fdatasync calls per FLUSH
# (strace -T), context switches, CPU and io_uring punts per request (perf
# stat), a cpu-clock profile of tandemd (perf record), and the page-cache
# calibration (also alone: nbd-bench.sh pagecache [FILE]); optionally
# ALT_BUILD_DIR, another build against this one (set alt).
#
# CPU: busy jiffies of the whole machine from /proc/stat (user + nice +
# system + irq + softirq) over the fio run and over run + the `sync` after
# it (writeback of what a buffered target left dirty); the server's
# utime + stime from /proc/PID/stat; fio's own from /usr/bin/time.
#
# Environment (defaults in brackets):
#   BUILD_DIR  configured and built tree [/work/main/build, else /tmp/b-nbdperf]
#   SCRATCH    where the backing file goes, on the disk under test [/var/tmp]
#   SIZE_MB    backing file [4096]        REGION_MB  test region [3072]
#   ROUNDS     timed rounds [5]           SECS       seconds per run [2]
#   WARM_SECS  seconds per warm-up run [1]
#   TARGETS    ["raw nbdkit nbdkit_none tandemd"]
#   WORKLOADS  ["seq1m_qd1 seq1m_qd8 rand4k_j1 rand4k_j2 rand4k_j4 rand4k_j8 commit4k_qd1"]
#   AL         1 = the al-extents 67 experiment [1], AL_ROUNDS rounds [3],
#              AL_WORKLOADS [seq1m_qd1 rand4k_wide commit4k_qd1]
#   PROFILE    1 = strace/perf profiles [1]
#   ALT_BUILD_DIR  another build (e.g. an older commit) as tandemd_alt against
#              this one in ALT_ROUNDS [3] shuffled rounds of ALT_WORKLOADS
#              [seq1m_qd8 rand4k_j1 commit4k_qd1]; ALT_LABEL names it
#   RAW        file for the raw lines [tests/perf/results/nbd-bench-DATE.txt]
#
#   nbd-bench.sh report RAWFILE   render the tables from a raw file again
#   nbd-bench.sh sparse           copy a sparse export with nbdcopy (below)
#
# sparse: a sparse backing file of SPARSE_MB [4096] MiB with 1 MiB of data
# every 128 MiB, exported by tandemd (StandAlone Primary) and by nbdkit's
# file plugin on a file with the same data in the same places (the size
# of tandemd's export). nbdcopy copies each export to null: and to a new
# sparse file, SPARSE_ROUNDS [3] shuffled rounds, the page cache of both
# backing files dropped before each run, then once with --no-extents. Per
# run: seconds, bytes the server read (rchar of /proc/PID/io: its preads;
# the requests on the socket are a few bytes each), the blocks the copy
# has allocated. Block status is what lets nbdcopy skip the holes.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
export LC_ALL=C

# ------------------------------------------------------------------ report
# Raw lines: "run set=S round=R target=T wl=W key=value..." (round 0 is the
# warm-up), "prof ...", and "# ..." comments.
report() {
	awk '
function kv(    i, p) {
	delete f
	for (i = 2; i <= NF; i++)
		if ((p = index($i, "=")) > 0)
			f[substr($i, 1, p - 1)] = substr($i, p + 1)
}
function stats(list,    v, n, i, j, t) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	s_n = n; s_min = v[1]; s_max = v[n]
	s_med = n == 0 ? "" : n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function add(key, val) { acc[key] = acc[key] " " val }
function med(key, fmt) { stats(acc[key]); return s_n ? sprintf(fmt, s_med) : "—" }
function spread(key, fmt) {
	stats(acc[key])
	return s_n ? sprintf(fmt " (" fmt "–" fmt ")", s_med, s_min, s_max) : "—"
}
function unit(w) { return w ~ /^seq/ ? "MB/s" : "IOPS" }
function metric(w) { return w ~ /^seq/ ? f["mbs"] : f["iops"] }
function fmt_of(w) { return w ~ /^seq/ ? "%.0f" : "%.0f" }
function tname(t) {
	return t == "nbdkit_none" ? "nbdkit cache=none" : t == "tandemd_al67" ? "tandemd al-extents 67" : t
}
/^# targets / { ntg = split(substr($0, 11), tg, " ") }
/^# workloads / { nwl = split(substr($0, 13), wls, " ") }
/^# al-workloads / { nal = split(substr($0, 16), alw, " ") }
/^# alt-workloads / { nalt = split(substr($0, 17), altw, " ") }
/^# alt-build / { altname = substr($0, 13) }
/^run / {
	kv()
	if (f["round"] == 0)
		next
	s = f["set"]; w = f["wl"]; t = f["target"]; r = f["round"]
	v = metric(w)
	val[s, w, t, r] = v
	rounds[s, r] = 1
	add(s SUBSEP w SUBSEP t SUBSEP "m", v)
	gib = f["bytes"] / 1073741824
	stl[s] += f["steal"]; stms[s] += f["ms"] / 10
	if (gib > 0) {
		add(s SUBSEP w SUBSEP t SUBSEP "sys", f["sys"] / 100 / gib)
		add(s SUBSEP w SUBSEP t SUBSEP "syssync", f["syssync"] / 100 / gib)
		add(s SUBSEP w SUBSEP t SUBSEP "srv", f["srv"] / 100 / gib)
		add(s SUBSEP w SUBSEP t SUBSEP "fio", f["fio"] / gib)
		add(s SUBSEP w SUBSEP t SUBSEP "gib", gib)
		add(s SUBSEP w SUBSEP t SUBSEP "alpg", f["al"] / gib)
	}
	for (k in f)
		if (k ~ /^(wp50|wp99|fp50|fp99|al|bm|steal)$/)
			add(s SUBSEP w SUBSEP t SUBSEP k, f[k])
}
/^prof / { prof[++nprof] = $0 }
/^# / { hdr[++nhdr] = $0 }
# ratio cells: DUT / anchor within each round, median (min–max)
function ratio(s, w, a, b,    r, list) {
	list = ""
	for (r = 1; r <= 99; r++)
		if ((s, r) in rounds && (s, w, a, r) in val && (s, w, b, r) in val && val[s, w, b, r] > 0)
			list = list " " val[s, w, a, r] / val[s, w, b, r]
	stats(list)
	return s_n ? sprintf("%.2f (%.2f–%.2f)", s_med, s_min, s_max) : "—"
}
END {
	print "Setup (from the raw file):"
	print ""
	for (i = 1; i <= nhdr; i++)
		print "    " substr(hdr[i], 3)
	for (s in stl)
		if (stms[s] > 0)
			printf "    CPUs stolen by the hypervisor during the runs of set %s: %.2f (mean)\n", s, stl[s] / stms[s]
	print ""
	print "### Throughput: median (min–max) over the rounds; ratios within a round"
	print ""
	line = "| workload | unit |"
	sep = "|---|---|"
	for (i = 1; i <= ntg; i++) { line = line " " tname(tg[i]) " |"; sep = sep "---|" }
	print line " tandemd / nbdkit | tandemd / nbdkit cache=none | tandemd / raw |"
	print sep "---|---|---|"
	for (j = 1; j <= nwl; j++) {
		w = wls[j]
		line = "| " w " | " unit(w) " |"
		for (i = 1; i <= ntg; i++)
			line = line " " spread("main" SUBSEP w SUBSEP tg[i] SUBSEP "m", fmt_of(w)) " |"
		line = line " **" ratio("main", w, "tandemd", "nbdkit") "** |"
		line = line " " ratio("main", w, "tandemd", "nbdkit_none") " |"
		line = line " " ratio("main", w, "tandemd", "raw") " |"
		print line
	}
	print ""
	print "### Commit latency (commit4k_qd1): medians over the rounds, µs"
	print ""
	print "| target | IOPS | write p50 | write p99 | flush p50 | flush p99 |"
	print "|---|---|---|---|---|---|"
	w = "commit4k_qd1"
	for (i = 1; i <= ntg; i++) {
		k = "main" SUBSEP w SUBSEP tg[i] SUBSEP
		if (!((k "m") in acc))
			continue
		printf "| %s | %s | %s | %s | %s | %s |\n", tname(tg[i]), spread(k "m", "%.0f"),
			med(k "wp50", "%.0f"), med(k "wp99", "%.0f"), med(k "fp50", "%.0f"), med(k "fp99", "%.0f")
	}
	print ""
	print "### Latency of the writes (clat p50 / p99, µs, medians over the rounds)"
	print ""
	line = "| workload |"; sep = "|---|"
	for (i = 1; i <= ntg; i++) { line = line " " tname(tg[i]) " |"; sep = sep "---|" }
	print line; print sep
	for (j = 1; j <= nwl; j++) {
		w = wls[j]
		line = "| " w " |"
		for (i = 1; i <= ntg; i++) {
			k = "main" SUBSEP w SUBSEP tg[i] SUBSEP
			line = line " " med(k "wp50", "%.0f") " / " med(k "wp99", "%.0f") " |"
		}
		print line
	}
	print ""
	print "### CPU seconds per GiB written: whole machine during the run / run + sync / server process / fio (medians)"
	print ""
	line = "| workload |"; sep = "|---|"
	for (i = 1; i <= ntg; i++) { line = line " " tname(tg[i]) " |"; sep = sep "---|" }
	print line; print sep
	for (j = 1; j <= nwl; j++) {
		w = wls[j]
		line = "| " w " |"
		for (i = 1; i <= ntg; i++) {
			k = "main" SUBSEP w SUBSEP tg[i] SUBSEP
			line = line " " med(k "sys", "%.2f") " / " med(k "syssync", "%.2f") " / " \
				(tg[i] == "raw" ? "—" : med(k "srv", "%.2f")) " / " med(k "fio", "%.2f") " |"
		}
		print line
	}
	print ""
	print "### tandemd: activity-log transactions and bitmap pages written per run (median (min–max))"
	print ""
	print "| workload | GiB per run | AL transactions | bitmap pages |"
	print "|---|---|---|---|"
	for (j = 1; j <= nwl; j++) {
		k = "main" SUBSEP wls[j] SUBSEP "tandemd" SUBSEP
		if ((k "m") in acc)
			printf "| %s | %s | %s | %s |\n", wls[j], med(k "gib", "%.2f"), spread(k "al", "%.0f"), spread(k "bm", "%.0f")
	}
	if (nal) {
		print ""
		print "### Activity log smaller than the region: tandemd al-extents 67 vs 1237 (set al)"
		print ""
		print "| workload | unit | tandemd (1237) | tandemd al-extents 67 | 67 / 1237 | AL transactions per GiB (67) | CPU s/GiB, run + sync (1237 / 67) |"
		print "|---|---|---|---|---|---|---|"
		for (j = 1; j <= nal; j++) {
			w = alw[j]
			ka = "al" SUBSEP w SUBSEP "tandemd" SUBSEP
			kb = "al" SUBSEP w SUBSEP "tandemd_al67" SUBSEP
			printf "| %s | %s | %s | %s | %s | %s | %s / %s |\n", w, unit(w), spread(ka "m", "%.0f"),
				spread(kb "m", "%.0f"), ratio("al", w, "tandemd_al67", "tandemd"),
				med(kb "alpg", "%.0f"), med(ka "syssync", "%.2f"), med(kb "syssync", "%.2f")
		}
	}
	if (nalt) {
		print ""
		print "### This build (tandemd) against " altname " (tandemd_alt), set alt"
		print ""
		print "| workload | unit | tandemd | tandemd_alt | tandemd / tandemd_alt | server CPU s/GiB (tandemd / alt) | write p50 / p99 µs (tandemd; alt) |"
		print "|---|---|---|---|---|---|---|"
		for (j = 1; j <= nalt; j++) {
			w = altw[j]
			ka = "alt" SUBSEP w SUBSEP "tandemd" SUBSEP
			kb = "alt" SUBSEP w SUBSEP "tandemd_alt" SUBSEP
			printf "| %s | %s | %s | %s | %s | %s / %s | %s / %s; %s / %s |\n", w, unit(w),
				spread(ka "m", "%.0f"), spread(kb "m", "%.0f"), ratio("alt", w, "tandemd", "tandemd_alt"),
				med(ka "srv", "%.2f"), med(kb "srv", "%.2f"), med(ka "wp50", "%.0f"), med(ka "wp99", "%.0f"),
				med(kb "wp50", "%.0f"), med(kb "wp99", "%.0f")
		}
	}
	if (nprof) {
		print ""
		print "### Profiles (prof lines)"
		print ""
		for (i = 1; i <= nprof; i++)
			print "    " prof[i]
	}
}' "$1"
}

if [ "${1:-}" = report ]; then
	report "$2"
	exit 0
fi

# Page-cache calibration (also run in the profile phase): 1 GiB of
# buffered dd bs=1M into FILE, each time right after its pages left the
# page cache, or WAIT seconds later. A guest with virtio-balloon free page
# reporting hands free memory back to the host after a while; a page cache
# that grows into such memory pays for the host's page faults.
reporting_kib() { cat /sys/module/page_reporting/parameters/reported_kib 2>/dev/null || echo 0; }
pagecache_wait() {
	for w in 0 "$2" 0 "$2"; do
		sync
		dd if="$1" iflag=nocache count=0 status=none
		k0=$(reporting_kib)
		sleep "$w"
		k1=$(reporting_kib)
		rate=$(dd if=/dev/zero of="$1" bs=1M count=1024 conv=notrunc 2>&1 | sed -n 's/.*, //p' | tail -1)
		echo "prof pagecache-wait wait_s=$w reported_to_host_mib=$(((k1 - k0) / 1024)) dd_1g_buffered=$(echo "$rate" | tr -d ' ')"
	done
	sync
}
if [ "${1:-}" = pagecache ]; then
	out=${2:-$here/results/nbd-bench-pagecache-$(date -u +%Y%m%d-%H%M%S).txt}
	d=$(mktemp -d "${SCRATCH:-/var/tmp}/nbd-bench.XXXXXX")
	trap 'rm -rf "$d"' EXIT
	{
		echo "# date $(date -u '+%Y-%m-%d %H:%M:%S UTC'); kernel $(uname -r)"
		for f in /sys/bus/virtio/devices/*/features; do
			dev=${f%/features}
			echo "# virtio $(basename "$(readlink "$dev/driver")") features $(cut -c1-8 "$f") (bits 0-7)"
		done
		echo "# page_reporting reported_kib since boot: $(reporting_kib); uptime $(cut -d' ' -f1 /proc/uptime) s"
	} >"$out"
	dd if=/dev/zero of="$d/f" bs=1M count=1024 conv=fsync status=none
	pagecache_wait "$d/f" 5 >>"$out"
	cat "$out"
	exit 0
fi

# ------------------------------------------------------------------ sparse
sparse_bench() {
	: "${SPARSE_MB:=4096}" "${SPARSE_ROUNDS:=3}"
	: "${RAW:=$here/results/nbd-bench-sparse-$(date -u +%Y%m%d-%H%M%S).txt}"
	adm=$BUILD_DIR/replicator/tandemadm
	sp=$(mktemp -d "${SCRATCH:-/var/tmp}/nbd-bench.XXXXXX")
	sp_tandemd=
	sp_nbdkit=
	sp_ctl() { "$adm" -c "$sp/t.conf" --node alice --run-dir "$sp/run" "$@"; }
	raw() { echo "$*" >>"$RAW"; }
	sp_cleanup() {
		[ -z "$sp_tandemd" ] || { sp_ctl down r0 >/dev/null 2>&1; kill "$sp_tandemd"; wait "$sp_tandemd"; }
		[ -z "$sp_nbdkit" ] || { kill "$sp_nbdkit"; wait "$sp_nbdkit"; }
		rm -rf "$sp"
	}
	trap 'sp_cleanup' EXIT
	trap 'exit 1' INT TERM
	mkdir -p "$sp/run" "$(dirname "$RAW")"
	: >"$RAW"
	truncate -s "${SPARSE_MB}M" "$sp/t.img"
	cat >"$sp/t.conf" <<-CONF
	resource r0 {
		net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
		on alice { device minor 0; disk $sp/t.img; meta-disk internal; address 127.0.0.1:7789; }
		on bob { device minor 0; disk /dev/null; meta-disk internal; address 127.0.0.2:7789; }
	}
	CONF
	sp_ctl create-md --force r0 >/dev/null
	"$BUILD_DIR/replicator/tandemd" -c "$sp/t.conf" --node alice --run-dir "$sp/run" -f \
		>"$sp/tandemd.log" 2>&1 &
	sp_tandemd=$!
	until [ -S "$sp/run/tandemd.sock" ]; do sleep 0.05; done
	sp_ctl up r0 >/dev/null
	sp_ctl primary --force r0 >/dev/null
	until [ -S "$sp/run/r0.nbd" ]; do sleep 0.05; done
	size=$(($(sp_ctl status --json r0 | jq '.resources[0].volumes[0].size_sect') * 512))
	truncate -s "$size" "$sp/k.img"
	# the same 1 MiB of data every 128 MiB in both, written through tandemd
	python3 - "$sp/k.img" "$size" <<-'PY' >"$sp/data.bin"
	import os, sys
	size = int(sys.argv[2])
	fd = os.open(sys.argv[1], os.O_WRONLY)
	for off in range(0, size - (1 << 20) + 1, 128 << 20):
	    b = os.urandom(1 << 20)
	    os.pwrite(fd, b, off)
	    sys.stdout.buffer.write(b)
	os.close(fd)
	PY
	nbdcopy --allocated "$sp/k.img" "nbd+unix:///r0?socket=$sp/run/r0.nbd" 2>/dev/null ||
		nbdcopy "$sp/k.img" "nbd+unix:///r0?socket=$sp/run/r0.nbd"
	cmp -n "$size" "$sp/k.img" "$sp/t.img" >/dev/null || { echo "nbd-bench: data differ" >&2; exit 1; }
	nbdkit -f --exit-with-parent -U "$sp/k.sock" file file="$sp/k.img" >"$sp/nbdkit.log" 2>&1 &
	sp_nbdkit=$!
	until [ -S "$sp/k.sock" ]; do sleep 0.05; done
	raw "# date $(date -u '+%Y-%m-%d %H:%M:%S UTC'); kernel $(uname -r); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
	src=$(sed -n 's/^abs_top_srcdir = //p' "$BUILD_DIR/Makefile")
	raw "# $(nbdcopy --version | head -1), $(nbdkit --version), tandemd from $BUILD_DIR (source $src at $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?'))"
	raw "# sparse export of $size bytes, $(du -B1 --apparent-size "$sp/data.bin" | cut -f1) bytes of data (1 MiB every 128 MiB); scratch $(df -T "$sp" | awk 'NR == 2 { print $2 }')"
	for r in $(seq 0 "$SPARSE_ROUNDS"); do
		order="tandemd:null tandemd:file nbdkit:null nbdkit:file"
		[ "$r" -lt "$SPARSE_ROUNDS" ] || order="tandemd:noext nbdkit:noext"
		for tw in $(printf '%s\n' $order | shuf); do
			t=${tw%%:*}
			w=${tw#*:}
			if [ "$t" = tandemd ]; then
				uri="nbd+unix:///r0?socket=$sp/run/r0.nbd"; pid=$sp_tandemd
			else
				uri="nbd+unix:///?socket=$sp/k.sock"; pid=$sp_nbdkit
			fi
			rm -f "$sp/out.img"
			dst=null:
			flags=
			[ "$w" = null ] || [ "$w" = noext ] || dst=$sp/out.img
			[ "$w" != noext ] || flags=--no-extents
			sync
			for f in "$sp/t.img" "$sp/k.img"; do dd if="$f" iflag=nocache count=0 status=none; done
			rc0=$(awk '/^rchar/ { print $2 }' "/proc/$pid/io")
			t0=$(date +%s%N)
			# shellcheck disable=SC2086
			nbdcopy $flags "$uri" "$dst"
			t1=$(date +%s%N)
			rc1=$(awk '/^rchar/ { print $2 }' "/proc/$pid/io")
			alloc=0
			[ "$dst" = null: ] || alloc=$(($(stat -c %b "$dst") * 512))
			raw "sparse round=$((r + 1)) target=$t dst=$w ms=$(((t1 - t0) / 1000000)) read=$((rc1 - rc0)) alloc=$alloc"
		done
	done
	awk '
	/^# / { print "    " substr($0, 3); next }
	/^sparse / {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		k = f["target"] " " f["dst"]
		ms[k] = ms[k] " " f["ms"]; rd[k] = f["read"]; al[k] = f["alloc"]; keys[k] = 1
	}
	function med(list,    v, n, i, j, t) {
		n = split(list, v, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	END {
		print ""
		print "| target | destination | seconds, median (runs) | MiB read by the server (last run) | copy allocated, MiB |"
		print "|---|---|---|---|---|"
		n = split("tandemd null,nbdkit null,tandemd file,nbdkit file,tandemd noext,nbdkit noext", ord, ",")
		for (i = 1; i <= n; i++) {
			k = ord[i]
			if (!(k in keys)) continue
			split(k, p, " ")
			printf "| %s | %s | %.2f (%s) | %.1f | %s |\n", p[1],
				p[2] == "null" ? "null:" : p[2] == "file" ? "sparse file" : "null:, --no-extents",
				med(ms[k]) / 1000, substr(ms[k], 2), rd[k] / 1048576,
				p[2] == "file" ? sprintf("%.1f", al[k] / 1048576) : "—"
		}
	}' "$RAW"
}

if [ "${1:-}" = sparse ]; then
	if [ -z "${BUILD_DIR:-}" ]; then
		BUILD_DIR=/work/main/build
		[ -x "$BUILD_DIR/replicator/tandemd" ] || BUILD_DIR=/tmp/b-nbdperf
	fi
	for t in nbdcopy nbdkit jq python3; do
		command -v "$t" >/dev/null 2>&1 || { echo "nbd-bench: needs $t" >&2; exit 1; }
	done
	sparse_bench
	exit 0
fi

# ------------------------------------------------------------------ setup
if [ -z "${BUILD_DIR:-}" ]; then
	BUILD_DIR=/work/main/build
	[ -x "$BUILD_DIR/replicator/tandemd" ] || BUILD_DIR=/tmp/b-nbdperf
fi
: "${SCRATCH:=/var/tmp}" "${SIZE_MB:=4096}" "${REGION_MB:=3072}" "${ROUNDS:=5}" "${SECS:=2}"
: "${WARM_SECS:=1}" "${TARGETS:=raw nbdkit nbdkit_none tandemd}"
: "${WORKLOADS:=seq1m_qd1 seq1m_qd8 rand4k_j1 rand4k_j2 rand4k_j4 rand4k_j8 commit4k_qd1}"
: "${AL:=1}" "${AL_ROUNDS:=3}" "${AL_WORKLOADS:=seq1m_qd1 rand4k_wide commit4k_qd1}" "${PROFILE:=1}"
: "${ALT_ROUNDS:=3}" "${ALT_WORKLOADS:=seq1m_qd8 rand4k_j1 commit4k_qd1}"
: "${RAW:=$here/results/nbd-bench-$(date -u +%Y%m%d-%H%M%S).txt}"

adm=$BUILD_DIR/replicator/tandemadm
for b in "$BUILD_DIR" ${ALT_BUILD_DIR:+"$ALT_BUILD_DIR"}; do
	if [ ! -x "$b/replicator/tandemadm" ] || [ ! -x "$b/replicator/tandemd" ]; then
		echo "nbd-bench: build $b first (configure && make)" >&2
		exit 1
	fi
done
for t in fio nbdkit jq /usr/bin/time; do
	command -v "$t" >/dev/null 2>&1 || { echo "nbd-bench: needs $t" >&2; exit 1; }
done

tmp=$(mktemp -d "$SCRATCH/nbd-bench.XXXXXX")
data=$tmp/data
run=$tmp/run
tandemd_pid=
nbdkit_pid=
nbdkit_none_pid=

log() { echo "nbd-bench: $(date -u +%T) $*" >&2; }
raw() { echo "$*" >>"$RAW"; }
ctl() { "$adm" -c "$tmp/t.conf" --node alice --run-dir "$run" "$@"; }

stop_tandemd() {
	[ -n "$tandemd_pid" ] || return 0
	ctl down r0 >/dev/null 2>&1 || log "down r0 failed"
	kill -TERM "$tandemd_pid" 2>/dev/null || true
	wait "$tandemd_pid" 2>/dev/null || true
	tandemd_pid=
}

cleanup() {
	stop_tandemd
	for p in $nbdkit_pid $nbdkit_none_pid; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir -p "$(dirname "$RAW")" "$run"
: >"$RAW"
start=$(date +%s)

wait_sock() {
	i=0
	until [ -S "$1" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || { log "no socket $1"; exit 1; }
		sleep 0.05
	done
}

# write_conf AL_EXTENTS
write_conf() {
	cat >"$tmp/t.conf" <<-CONF
	resource r0 {
		disk { al-extents $1; }
		net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
		on alice { device minor 0; disk $data; meta-disk internal; address 127.0.0.1:7789; }
		on bob { device minor 0; disk /dev/null; meta-disk internal; address 127.0.0.2:7789; }
	}
	CONF
}

# start_tandemd BUILD AL_EXTENTS: daemon, up, primary --force (BUILD's
# tandemd and tandemadm)
start_tandemd() {
	adm=$1/replicator/tandemadm
	write_conf "$2"
	rm -f "$run/tandemd.sock"
	"$1/replicator/tandemd" -c "$tmp/t.conf" --node alice --run-dir "$run" -f \
		>>"$tmp/tandemd.log" 2>&1 &
	tandemd_pid=$!
	wait_sock "$run/tandemd.sock"
	ctl up r0 >/dev/null
	ctl primary --force r0 >/dev/null
	wait_sock "$run/r0.nbd"
}

# nbdkit in the foreground as our child (--exit-with-parent: it goes when we do)
start_nbdkits() {
	nbdkit -f --exit-with-parent -U "$tmp/nbdkit.sock" file file="$data" \
		>>"$tmp/nbdkit.log" 2>&1 &
	nbdkit_pid=$!
	nbdkit -f --exit-with-parent -U "$tmp/nbdkit_none.sock" file file="$data" cache=none \
		>>"$tmp/nbdkit.log" 2>&1 &
	nbdkit_none_pid=$!
	wait_sock "$tmp/nbdkit.sock"
	wait_sock "$tmp/nbdkit_none.sock"
}

machine() {
	raw "# date $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	raw "# kernel $(uname -r); $(nproc) CPUs: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	raw "# memory $(free -g | awk '/^Mem:/ { print $2 " GiB" }'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	raw "# scratch $(df -T "$tmp" | awk 'NR == 2 { print $1 " " $2 }')"
	for q in /sys/block/*/queue/scheduler; do
		case $q in */loop*|*/ram*) continue ;; esac
		raw "# scheduler $q: $(cat "$q"); write cache: $(cat "${q%/scheduler}/write_cache")"
	done
	raw "# fio $(fio --version), $(nbdkit --version), tandemd from $BUILD_DIR ($(cd "$here" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$here" && git diff --quiet HEAD -- ../../replicator 2>/dev/null || echo ', replicator/ modified'))"
	raw "# backing file $SIZE_MB MiB, test region $REGION_MB MiB; export size $(ctl status --json r0 | jq '.resources[0].volumes[0].size_sect * 512') bytes"
	raw "# tandemd log: $(grep -o 'attached.*' "$tmp/tandemd.log" | tail -1)"
	raw "# virtio-balloon features $(cut -c1-8 /sys/bus/virtio/drivers/virtio_balloon/virtio*/features 2>/dev/null | head -1) (bit 5: free page reporting); page_reporting reported_kib since boot $(reporting_kib)"
	raw "# rounds $ROUNDS, $SECS s per run, warm-up $WARM_SECS s per run"
	raw "# targets $TARGETS"
	raw "# workloads $WORKLOADS"
}

# ---------------------------------------------------------------- measuring
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $9; exit }' /proc/stat; }
pcpu() {
	if [ -n "$1" ]; then
		sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
	else
		echo 0
	fi
}
al_bm() { ctl status --json r0 | jq -r '.resources[0].volumes[0].counters | "\(.al) \(.bm)"'; }

# fio_args TARGET WORKLOAD ROUND
fio_args() {
	case $1 in
	raw)
		case $2 in
		seq1m_qd8) eng="--ioengine=libaio" ;;
		*) eng="--ioengine=psync" ;;
		esac
		echo "--filename=$data --direct=1 $eng"
		;;
	nbdkit | nbdkit_none) echo "--ioengine=nbd --uri=nbd+unix:///?socket=$tmp/$1.sock" ;;
	tandemd*) echo "--ioengine=nbd --uri=nbd+unix:///r0?socket=$run/r0.nbd" ;;
	esac
	case $2 in
	seq1m_qd1) echo "--rw=write --bs=1M --size=${REGION_MB}M --iodepth=1" ;;
	seq1m_qd8) echo "--rw=write --bs=1M --size=${REGION_MB}M --iodepth=8" ;;
	rand4k_j*) echo "--rw=randwrite --bs=4k --size=128M --offset_increment=128M --iodepth=1" \
		"--numjobs=${2#rand4k_j} --randseed=$3" ;;
	commit4k_qd1) echo "--rw=randwrite --bs=4k --size=1G --iodepth=1 --fsync=1 --randseed=$3" ;;
	rand4k_wide) echo "--rw=randwrite --bs=4k --size=${REGION_MB}M --iodepth=1 --randseed=$3" ;;
	*) log "unknown workload $2"; exit 1 ;;
	esac
}

srv_pid() {
	case $1 in
	nbdkit) echo "$nbdkit_pid" ;;
	nbdkit_none) echo "$nbdkit_none_pid" ;;
	tandemd*) echo "$tandemd_pid" ;;
	*) echo "" ;;
	esac
}

# settle: every run starts from the same state: nothing dirty, and none of
# the backing file in the page cache. Otherwise a buffered target overwrites
# cached pages or allocates new ones depending on which target ran before
# it (O_DIRECT and cache=none leave none; 1.5x in a test of rand4k_j1).
settle() {
	sync
	dd if="$data" iflag=nocache count=0 status=none
}

# one SET ROUND SECS TARGET WORKLOAD: one fio run, one raw line
one() {
	set_=$1 r=$2 secs=$3 t=$4 wl=$5
	settle
	cached=$(fincore -n -o PAGES "$data" 2>/dev/null || echo '?')
	pid=$(srv_pid "$t")
	case $t in tandemd*) c0=$(al_bm) ;; *) c0="0 0" ;; esac
	p0=$(pcpu "$pid")
	b0=$(busy)
	# shellcheck disable=SC2046
	/usr/bin/time -f '%U %S' -o "$tmp/time" fio --name=w --group_reporting --output-format=json \
		--output="$tmp/fio.json" --runtime="$secs" --time_based $(fio_args "$t" "$wl" "$r") \
		>>"$tmp/fio.log" 2>&1 || { log "fio failed: $t $wl"; tail -5 "$tmp/fio.log" >&2; exit 1; }
	b1=$(busy)
	p1=$(pcpu "$pid")
	case $t in tandemd*) c1=$(al_bm) ;; *) c1="0 0" ;; esac
	sync
	b2=$(busy)
	m=$(jq -r '.jobs[0] | [.write.io_bytes, .write.bw_bytes, .write.iops,
		(.write.clat_ns.percentile["50.000000"] // 0), (.write.clat_ns.percentile["99.000000"] // 0),
		(.sync.lat_ns.percentile["50.000000"] // 0), (.sync.lat_ns.percentile["99.000000"] // 0),
		.write.runtime] | @tsv' "$tmp/fio.json")
	echo "$m $b0 $b1 $b2 $p0 $p1 $c0 $c1 $(cat "$tmp/time") $cached" | awk -v pre="run set=$set_ round=$r target=$t wl=$wl" '{
		printf "%s bytes=%s mbs=%.1f iops=%.0f wp50=%.1f wp99=%.1f fp50=%.1f fp99=%.1f ms=%s",
			pre, $1, $2 / 1e6, $3, $4 / 1000, $5 / 1000, $6 / 1000, $7 / 1000, $8
		printf " sys=%d steal=%d syssync=%d srv=%d al=%d bm=%d fio=%.2f cached_pages=%s\n",
			$11 - $9, $12 - $10, $13 - $9, $16 - $15, $19 - $17, $20 - $18, $21 + $22, $23
	}' >>"$RAW"
}

# idle LABEL: busy CPU of the machine over 2 s with nothing of ours running
# (other tenants, other jobs on the box: the floor under the sys numbers)
idle() {
	b0=$(busy)
	sleep 2
	b1=$(busy)
	echo "$b0 $b1" | awk -v l="$1" '{ printf "# background %s: %.2f CPUs busy, %.2f stolen (2 s idle)\n", l, ($3 - $1) / 200, ($4 - $2) / 200 }' >>"$RAW"
}

shuffle() { awk -v seed="$1" 'BEGIN { srand(seed) } { print rand() "\t" $0 }' | sort -n | cut -f2-; }

cells() { for t in $1; do for w in $2; do echo "$t $w"; done; done; }

# rounds SET FIRST LAST SECS TARGETS WORKLOADS. The order file is read on fd
# 3 in this shell (no pipeline: the AL set restarts tandemd in the loop).
# In the AL set the targets take turns as blocks (one restart each), the
# workloads are shuffled within a block.
rounds() {
	r=$2
	while [ "$r" -le "$3" ]; do
		log "$1 round $r of $3"
		if [ "$1" != main ]; then
			for t in $(echo "$5" | tr ' ' '\n' | shuffle "$((r + 100))"); do
				cells "$t" "$6" | shuffle "$((r + 200))"
			done >"$tmp/order"
		else
			cells "$5" "$6" | shuffle "$r" >"$tmp/order"
		fi
		while read -r t w <&3; do
			[ "$1" = main ] || switch_variant "$t"
			one "$1" "$r" "$4" "$t" "$w"
		done 3<"$tmp/order"
		r=$((r + 1))
	done
}

# The sets al and alt restart tandemd when the next cell needs another
# variant: tandemd (BUILD_DIR, al-extents 1237), tandemd_al67 (al-extents
# 67), tandemd_alt (ALT_BUILD_DIR). A restarted daemon starts with an empty
# activity log: with 1237 extents the region is written once more first,
# as at the start (with 67 the log never reaches a steady hot set anyway).
cur_variant="$BUILD_DIR 1237"
switch_variant() {
	case $1 in
	tandemd_al67) want="$BUILD_DIR 67" ;;
	tandemd_alt) want="$ALT_BUILD_DIR 1237" ;;
	*) want="$BUILD_DIR 1237" ;;
	esac
	[ "$want" != "$cur_variant" ] || return 0
	log "restarting tandemd: $want"
	stop_tandemd
	# shellcheck disable=SC2086
	start_tandemd $want
	cur_variant=$want
	[ "${want#* }" != 1237 ] || prefill
}

prefill() {
	fio --name=prefill --ioengine=nbd --uri="nbd+unix:///r0?socket=$run/r0.nbd" --rw=write \
		--bs=1M --size="${REGION_MB}M" --iodepth=8 --output="$tmp/prefill.json" \
		--output-format=json >>"$tmp/fio.log" 2>&1
}

# ---------------------------------------------------------------- profiles
# prof_strace TARGET WORKLOAD: syscalls of the server per NBD request
prof_strace() {
	t=$1 wl=$2 pid=$(srv_pid "$1")
	settle
	strace -f -c -o "$tmp/strace" -p "$pid" 2>/dev/null &
	sp=$!
	sleep 0.5
	# shellcheck disable=SC2046
	fio --name=w --group_reporting --output-format=json --output="$tmp/fio.json" \
		--runtime=2 --time_based $(fio_args "$t" "$wl" 99) >>"$tmp/fio.log" 2>&1
	kill -INT "$sp"
	wait "$sp" 2>/dev/null || true
	n=$(jq '.jobs[0].write.total_ios + (.jobs[0].sync.total_ios // 0)' "$tmp/fio.json")
	awk -v pre="prof strace target=$t wl=$wl requests=$n" -v n="$n" '
		$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $NF != "total" { c[$NF] = $4 }
		END {
			line = pre
			split("read recvfrom sendto write pwrite64 pwritev2 fdatasync sync_file_range fadvise64 futex io_uring_enter", k, " ")
			for (i = 1; i in k; i++)
				if (k[i] in c)
					line = line sprintf(" %s/req=%.2f", k[i], c[k[i]] / n)
			print line
		}' "$tmp/strace" >>"$RAW"
	{ echo "=== strace -c -f -p (server) target=$t wl=$wl"; cat "$tmp/strace"; } >>"${RAW%.txt}.profiles.txt"
}

# prof_fdatasync TARGET: the fdatasync system calls of the server during
# commit4k_qd1 (strace -T; durations inflated by the tracing): how many per
# FLUSH and how long. tandemd answers a FLUSH with an fdatasync of the data
# (through the I/O engine since the io_uring data path: not a system call
# then), the bitmap writeback, and bdev_flush of the metadata device: with
# internal metadata the same descriptor again.
prof_fdatasync() {
	t=$1 pid=$(srv_pid "$1")
	settle
	strace -f -T -e trace=fdatasync -o "$tmp/strace.T" -p "$pid" 2>/dev/null &
	sp=$!
	sleep 0.5
	# shellcheck disable=SC2046
	fio --name=w --group_reporting --output-format=json --output="$tmp/fio.json" \
		--runtime=2 --time_based $(fio_args "$t" commit4k_qd1 99) >>"$tmp/fio.log" 2>&1
	kill -INT "$sp"
	wait "$sp" 2>/dev/null || true
	flushes=$(jq '.jobs[0].sync.total_ios' "$tmp/fio.json")
	awk 'match($0, /<[0-9.]+>$/) { print substr($0, RSTART + 1, RLENGTH - 2) * 1e6 }' "$tmp/strace.T" |
		sort -n | awk -v pre="prof fdatasync target=$t wl=commit4k_qd1 flushes=$flushes" -v f="$flushes" '
		{ v[NR] = $1 } END {
			printf "%s fdatasync_calls=%d per_flush=%.2f p50_us=%.0f p90_us=%.0f (strace -T)\n", pre, NR,
				NR / f, NR ? v[int((NR + 1) / 2)] : 0, NR ? v[int(NR * 0.9) + 1] : 0 }' >>"$RAW"
}

# prof_stat TARGET WORKLOAD: per NBD request, the server's context switches,
# CPU time (task-clock), io_uring submissions and io_uring requests punted
# to io-wq worker threads (perf stat, software events and tracepoints).
prof_stat() {
	t=$1 wl=$2 pid=$(srv_pid "$1")
	command -v perf >/dev/null 2>&1 || return 0
	settle
	perf stat -x, -o "$tmp/pstat" -p "$pid" -e context-switches,task-clock \
		-e io_uring:io_uring_submit_req,io_uring:io_uring_queue_async_work >/dev/null 2>&1 &
	sp=$!
	sleep 0.3
	# shellcheck disable=SC2046
	fio --name=w --group_reporting --output-format=json --output="$tmp/fio.json" \
		--runtime=2 --time_based $(fio_args "$t" "$wl" 99) >>"$tmp/fio.log" 2>&1
	kill -INT "$sp"
	wait "$sp" 2>/dev/null || true
	n=$(jq '.jobs[0].write.total_ios + (.jobs[0].sync.total_ios // 0)' "$tmp/fio.json")
	iops=$(jq '.jobs[0].write.iops | floor' "$tmp/fio.json")
	awk -F, -v pre="prof perfstat target=$t wl=$wl requests=$n write_iops=$iops" -v n="$n" '
		$3 == "context-switches" { l = l sprintf(" cs/req=%.2f", $1 / n) }
		$3 == "task-clock" { l = l sprintf(" cpu_us/req=%.1f", $1 * 1000 / n) }
		$3 ~ /submit_req/ { l = l sprintf(" uring_sqes/req=%.2f", $1 / n) }
		$3 ~ /queue_async_work/ { l = l sprintf(" iowq_punts/req=%.2f", $1 / n) }
		END { print pre l }' "$tmp/pstat" >>"$RAW"
}

# prof_pagecache: what a buffered write costs on this machine when the page
# cache holds the pages (clean) and when it does not: 1 GiB of dd bs=1M
# over the start of the region, first after settle, then again after sync.
prof_pagecache() {
	settle
	a=$(dd if=/dev/zero of="$data" bs=1M count=1024 conv=notrunc 2>&1 | sed -n 's/.*, //p' | tail -1)
	sync
	b=$(dd if=/dev/zero of="$data" bs=1M count=1024 conv=notrunc 2>&1 | sed -n 's/.*, //p' | tail -1)
	sync
	raw "prof pagecache dd bs=1M 1 GiB buffered: not cached $a; cached (clean) $b"
}

# prof_perf WORKLOAD: where tandemd spends its CPU (software clock samples)
prof_perf() {
	command -v perf >/dev/null 2>&1 || return 0
	settle
	perf record -q -e cpu-clock -F 2000 -o "$tmp/perf.data" -p "$tandemd_pid" \
		>/dev/null 2>&1 &
	pp=$!
	sleep 0.3
	# shellcheck disable=SC2046
	fio --name=w --group_reporting --output-format=json --output="$tmp/fio.json" \
		--runtime=2 --time_based $(fio_args tandemd "$1" 99) >>"$tmp/fio.log" 2>&1
	kill -INT "$pp"
	wait "$pp" 2>/dev/null || true
	out=$tmp/perf.txt
	perf report -i "$tmp/perf.data" --no-children --sort sym --stdio 2>/dev/null |
		grep -v '^$' | head -60 >"$out" || true
	{ echo "=== perf record -e cpu-clock -p (tandemd) wl=$1"; cat "$out"; } >>"${RAW%.txt}.profiles.txt"
	awk -v pre="prof perf target=tandemd wl=$1" '
		/^ +[0-9.]+%/ && n < 6 { sub(/^ +/, ""); gsub(/ +/, " "); line = line "; " $1 " " $NF; n++ }
		END { print pre " top:" substr(line, 2) }' "$out" >>"$RAW"
}

# ------------------------------------------------------------------ main
log "writing the $SIZE_MB MiB backing file"
dd if=/dev/zero of="$data" bs=1M count="$SIZE_MB" conv=fsync status=none
write_conf 1237
"$adm" -c "$tmp/t.conf" --node alice create-md --force r0 >/dev/null 2>&1 ||
	{ log "create-md failed"; exit 1; }
start_tandemd "$BUILD_DIR" 1237
start_nbdkits
machine
size=$(ctl status --json r0 | jq '.resources[0].volumes[0].size_sect * 512')
[ "$size" -ge $((REGION_MB * 1048576)) ] || { log "REGION_MB is larger than the export"; exit 1; }

idle before
log "prefill through tandemd"
prefill
raw "# prefill: al=$(al_bm | cut -d' ' -f1) AL transactions, bm=$(al_bm | cut -d' ' -f2) bitmap pages"
rounds main 0 0 "$WARM_SECS" "$TARGETS" "$WORKLOADS"
rounds main 1 "$ROUNDS" "$SECS" "$TARGETS" "$WORKLOADS"

if [ "$PROFILE" = 1 ] && command -v strace >/dev/null 2>&1; then
	log "profiles"
	for w in seq1m_qd8 rand4k_j1 commit4k_qd1; do
		prof_strace tandemd "$w"
		prof_strace nbdkit "$w"
	done
	prof_strace nbdkit_none commit4k_qd1
	prof_fdatasync tandemd
	prof_fdatasync nbdkit
	for w in rand4k_j1 commit4k_qd1; do
		prof_stat tandemd "$w"
		prof_stat nbdkit "$w"
	done
	prof_pagecache
	pagecache_wait "$data" 5 >>"$RAW"
	for w in seq1m_qd8 rand4k_j1; do
		prof_perf "$w"
	done
fi

if [ "$AL" = 1 ]; then
	raw "# al-workloads $AL_WORKLOADS"
	rounds al 1 "$AL_ROUNDS" "$SECS" "tandemd tandemd_al67" "$AL_WORKLOADS"
fi

if [ -n "${ALT_BUILD_DIR:-}" ]; then
	raw "# alt-build $ALT_BUILD_DIR${ALT_LABEL:+ ($ALT_LABEL)}"
	raw "# alt-workloads $ALT_WORKLOADS"
	rounds alt 1 "$ALT_ROUNDS" "$SECS" "tandemd tandemd_alt" "$ALT_WORKLOADS"
	if [ "$PROFILE" = 1 ]; then
		for t in tandemd_alt tandemd; do
			switch_variant "$t"
			for w in rand4k_j1 commit4k_qd1; do
				prof_stat "$t" "$w"
			done
			command -v strace >/dev/null 2>&1 && prof_fdatasync "$t"
		done
	fi
fi

idle after
raw "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
raw "# elapsed $(($(date +%s) - start)) s"
report "$RAW" | tee "${RAW%.txt}.md"
log "raw results: $RAW, tables: ${RAW%.txt}.md"

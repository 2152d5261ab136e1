#!/bin/sh
# run-al-bench.sh: what the activity log costs a Primary's writes
# (doc/perf-al.md). Builds al-bench against an existing build, makes an
# 8 GiB data file with internal metadata and a separate external metadata
# file (tandemadm create-md), runs the matrix in shuffled rounds with the
# no-AL anchor in every round, then the bookkeeping under callgrind, and
# prints Markdown tables. Not part of make check.
#
# Environment (defaults in brackets):
#   BUILD_DIR  configured and built tree [/work/main/build, else /tmp/b]
#   SCRATCH    where the data file goes, on the disk under test [/var/tmp]
#   SIZE_MB    data file size [8192]      ROUNDS  timed rounds [6]
#   SECS       seconds per run [0.8]      EXTENTS al-extents ["257 1237 6433"]
#   WORKLOADS  ["seq rand rand-b32"]; seq-b32 also works
#   SIDE       1 = also the durability side experiment [1]
#   CG         1 = also callgrind [1]
#   RAW        file for the raw lines [tests/perf/results/al-bench-DATE.txt]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
if [ -z "${BUILD_DIR:-}" ]; then
	BUILD_DIR=/work/main/build
	[ -f "$BUILD_DIR/replicator/lib/libtandem.a" ] || BUILD_DIR=/tmp/b
fi
: "${SCRATCH:=/var/tmp}" "${SIZE_MB:=8192}" "${ROUNDS:=6}" "${SECS:=0.8}"
: "${EXTENTS:=257 1237 6433}" "${WORKLOADS:=seq rand rand-b32}" "${SIDE:=1}" "${CG:=1}"
: "${RAW:=$here/results/al-bench-$(date -u +%Y%m%d-%H%M%S).txt}"
export LC_ALL=C

lib=$BUILD_DIR/replicator/lib/libtandem.a
adm=$BUILD_DIR/replicator/tandemadm
bench=$BUILD_DIR/tests/perf/al-bench
if [ ! -f "$lib" ] || [ ! -x "$adm" ]; then
	echo "run-al-bench: build $BUILD_DIR first (configure && make)" >&2
	exit 1
fi
make -s -f "$here/Makefile" BUILD_DIR="$BUILD_DIR" SRC_DIR="$src" O="$BUILD_DIR/tests/perf" >&2

tmp=$(mktemp -d "$SCRATCH/al-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
mkdir -p "$(dirname "$RAW")"
: >"$RAW"
start=$(date +%s)

log() { echo "run-al-bench: $*" >&2; }
raw() { echo "$*" >>"$RAW"; }

machine() {
	raw "# date $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	raw "# kernel $(uname -r); $(nproc) CPUs: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	raw "# memory $(free -g | awk '/^Mem:/ { print $2 " GiB" }')"
	raw "# scratch $(df -T "$tmp" | awk 'NR == 2 { print $1 " " $2 }')"
	for q in /sys/block/*/queue/scheduler; do
		case $q in */loop*|*/ram*) continue ;; esac
		raw "# scheduler $q: $(cat "$q"); write cache: $(cat "${q%/scheduler}/write_cache")"
	done
	raw "# rounds $ROUNDS, $SECS s per run; data file $SIZE_MB MiB"
}

# Written zeros, not fallocate: unwritten extents would make the first
# pass pay for extent conversion (ref/nbd-perf.md, pitfall 4).
make_files() {
	log "writing the $SIZE_MB MiB data file"
	dd if=/dev/zero of="$tmp/data" bs=1M count="$SIZE_MB" conv=fsync status=none
	dd if=/dev/zero of="$tmp/meta" bs=1M count=16 conv=fsync status=none
	cat >"$tmp/t.conf" <<-CONF
	resource rint {
		net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
		on alice { device minor 0; disk $tmp/data; meta-disk internal; address 127.0.0.1:7789; }
		on bob { device minor 0; disk /dev/null; meta-disk internal; address 127.0.0.2:7789; }
	}
	resource rext {
		net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
		on alice { device minor 1; disk $tmp/data; meta-disk $tmp/meta; address 127.0.0.1:7790; }
		on bob { device minor 1; disk /dev/null; meta-disk internal; address 127.0.0.2:7790; }
	}
	CONF
	for r in rint rext; do
		"$adm" -c "$tmp/t.conf" --node alice create-md --force "$r" >/dev/null 2>&1 ||
			{ log "create-md $r failed"; exit 1; }
	done
}

# cells WORKLOAD...: one line per run of a round: WORKLOAD META AL-EXTENTS
cells() {
	for wl in "$@"; do
		echo "$wl none 0"
		for e in $EXTENTS; do
			echo "$wl internal $e"
			echo "$wl $tmp/meta $e"
		done
	done
}

shuffle() { awk -v seed="$1" 'BEGIN { srand(seed) } { print rand() "\t" $0 }' | sort -n | cut -f2-; }

# rounds SET FIRST LAST SECS OPTS CELL-LINES (on stdin)
rounds() {
	set_=$1 first=$2 last=$3 secs=$4 opts=$5
	list=$(cat)
	r=$first
	while [ "$r" -le "$last" ]; do
		log "$set_ round $r of $last"
		echo "$list" | shuffle "$r" | while read -r wl meta ext o; do
			sync
			line=$("$bench" run "$tmp/data" "$meta" "$wl" "$ext" "$secs" "$r" "${o:-$opts}") ||
				{ log "failed: $wl $meta $ext $o"; exit 1; }
			raw "$line set=$set_ round=$r"
		done
		r=$((r + 1))
	done
}

# The side experiment: the same cell with the data through the page cache
# and/or the transaction written with O_DIRECT + RWF_DSYNC.
side_cells() {
	echo "seq none 0 -"
	echo "seq internal 1237 -"
	echo "seq internal 1237 al-dsync"
	echo "seq none 0 buffered"
	echo "seq internal 1237 buffered"
	echo "seq $tmp/meta 1237 buffered"
	echo "seq internal 1237 buffered,al-dsync"
}

# What a flush costs after some data (see al-bench.c, flush).
flush_cost() {
	sync
	"$bench" flush "$tmp/data" | while read -r line; do raw "$line when=$1"; done
}

ir_of() { awk -v fn="$2" '$0 ~ fn { gsub(",", "", $1); print $1; exit }' "$1"; }

callgrind_all() {
	for e in $EXTENTS; do
		for sc in hot:200000 cold:5000 cold-b32:20000; do
			s=${sc%%:*} n=${sc#*:} out=$tmp/cg.$s.$e
			log "callgrind $s $e"
			valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$out" \
				"$bench" cpu "$s" "$e" "$n" >"$out.stdout" 2>/dev/null
			callgrind_annotate --inclusive=yes --threshold=100 "$out" >"$out.txt"
			raw "$(cat "$out.stdout") under=callgrind"
			native=$("$bench" cpu "$s" "$e" "$n")
			raw "$native under=native"
			raw "cg scenario=$s al=$e writes=$n ir_total=$(ir_of "$out.txt" 'PROGRAM TOTALS')" \
			    "native_ns=$(echo "$native" | sed -n 's/.*ns_per_write=\([0-9.]*\).*/\1/p')" \
			    "ir_begin=$(ir_of "$out.txt" ':al_begin_io ')" \
			    "ir_commit=$(ir_of "$out.txt" ':al_commit ')" \
			    "ir_complete=$(ir_of "$out.txt" ':al_complete_io ')"
		done
	done
	# callgrind is deterministic: a second run must give the same Ir
	valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$tmp/cg.again" \
		"$bench" cpu cold-b32 1237 20000 >/dev/null 2>&1
	callgrind_annotate "$tmp/cg.again" >"$tmp/cg.again.txt"
	raw "# callgrind repeat cold-b32 1237: $(ir_of "$tmp/cg.again.txt" 'PROGRAM TOTALS') Ir"
}

machine
make_files
flush_cost before
# shellcheck disable=SC2086
cells $WORKLOADS | rounds main 0 0 0.5 -
# shellcheck disable=SC2086
cells $WORKLOADS | rounds main 1 "$ROUNDS" "$SECS" -
flush_cost after
[ "$SIDE" = 1 ] && side_cells | rounds side 1 3 "$SECS" -
[ "$CG" = 1 ] && callgrind_all
raw "# elapsed $(($(date +%s) - start)) s"
awk -f "$here/al-report.awk" "$RAW" | tee "${RAW%.txt}.md"
log "raw results: $RAW, tables: ${RAW%.txt}.md"

#!/bin/sh
# make fuzz: run fuzz-conf for FUZZ_SECONDS over a copy of the seed
# corpus (in the build tree: the source tree may be read-only), with the
# dictionary. Fails on any crash, sanitizer report, leak or timeout, and
# prints a short summary. An input that blocks in a system call is cut
# short by libFuzzer's timer (EINTR) instead of timing out: any input
# slower than 5 s (a "slow unit") fails the run too.
#
# usage: fuzz.sh SRCDIR SECONDS [LIBFUZZER-FLAGS...]
# FUZZ_TARGET=conf (default), nbd, wire, bmx, arbmsg, al, md, mddump, sbsave,
# ctl or setup
# picks ./fuzz-NAME, its seeds corpus/NAME/ and its dictionary NAME.dict where
# there is one. Run from the build directory holding the target. Writes:
#   fuzz-NAME.corpus/     the working corpus (seeds + inputs found; kept
#                         between runs, removed by make clean)
#   fuzz-artifacts/       crash-*, leak-*, timeout-*, slow-unit-* reproducers
#   fuzz-NAME.log         libFuzzer's output
set -u

if [ $# -lt 2 ]; then
	echo "usage: $0 SRCDIR SECONDS [LIBFUZZER-FLAGS...]" >&2
	exit 2
fi
srcdir=$1
seconds=$2
shift 2

name=${FUZZ_TARGET:-conf}
target=fuzz-$name
case $name in
conf) max_len=8192 ;;
nbd) max_len=20000 ;;
wire) max_len=70000 ;;
bmx) max_len=8192 ;;
arbmsg) max_len=5000 ;; # the longest valid message is 4096 bytes
al) max_len=70000 ;;    # 3 + a ring of 16 blocks of 4096 bytes
md) max_len=70000 ;;    # 131 + 16 AL blocks + a bitmap
mddump) max_len=16384 ;;
sbsave) max_len=8192 ;;
ctl) max_len=8192 ;;
setup) max_len=4096 ;; # 1 + a P_HELLO, a challenge, a response and more
*) echo "$0: unknown FUZZ_TARGET '$name'" >&2; exit 2 ;;
esac
corpus=$target.corpus
artifacts=fuzz-artifacts
log=$target.log
mkdir -p "$corpus" "$artifacts"
cp "$srcdir"/corpus/$name/* "$corpus"/
chmod u+w "$corpus"/*
seeds=$(find "$srcdir/corpus/$name" -type f | wc -l)

echo "$target: fuzzing for $seconds s from $seeds seeds (log: $log)"
dict=
[ -f "$srcdir/$name.dict" ] && dict=-dict=$srcdir/$name.dict
# shellcheck disable=SC2086 # $dict is empty or one word
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} ./$target \
	-max_len=$max_len -timeout=10 -report_slow_units=5 -rss_limit_mb=2048 -print_final_stats=1 \
	$dict -max_total_time="$seconds" \
	-artifact_prefix="$artifacts/" "$@" "$corpus" >"$log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q 'Test unit written to .*slow-unit-' "$log"; then
	echo "$target: an input took more than 5 s (a hang in a system call?)" >>"$log"
	rc=1
fi

# The last status line: "#N DONE cov: C ft: F corp: N/SIZE ..."
status=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
cov=$(echo "$status" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
ft=$(echo "$status" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
corp=$(echo "$status" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
echo "$target: ${runs:-?} runs (${speed:-?}/s), coverage ${cov:-?} edges, ${ft:-?} features, corpus ${corp:-?} inputs, peak RSS ${rss:-?} MB"

if [ $rc -ne 0 ]; then
	echo "$target: FAIL (exit $rc):"
	grep -E '^(SUMMARY|==[0-9]+== ?ERROR|fuzz-[a-z]*: |Slowest unit|.*runtime error:)' "$log" | head -n 10 | sed 's/^/    /'
	sed -n 's/.*Test unit written to \(.*\)/    reproducer: \1/p' "$log"
	echo "    reproduce with: ./$target FILE (in $(pwd)); full log: $log"
	exit 1
fi
echo "$target: PASS: no crash, leak or timeout"
exit 0

#!/bin/sh
# make check: run fuzz-NAME once over every seed of corpus/NAME (no
# fuzzing); any crash, sanitizer report, leak or timeout fails. Skipped
# (exit 77) without a clang that builds libFuzzer targets.
# usage: replay-target.sh NAME (nbd, wire, bmx, arbmsg, al, md, mddump, sbsave,
# ctl, setup)
set -u
name=$1
srcdir=${srcdir:-.}
CLANG=${CLANG:-clang}
if [ "$CLANG" = no ] || ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "SKIP: clang not found: fuzz targets need clang's libFuzzer"
	exit 77
fi
make "fuzz-$name" >"replay-$name.build.log" 2>&1 || {
	cat "replay-$name.build.log"
	echo "SKIP: cannot build fuzz-$name with $CLANG (libclang-rt missing?)"
	exit 77
}
mkdir -p fuzz-artifacts
set -- "$srcdir/corpus/$name"/*
echo "replaying $# seeds of $srcdir/corpus/$name"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "./fuzz-$name" -error_exitcode=1 -timeout_exitcode=1 \
	-timeout=10 -artifact_prefix=fuzz-artifacts/ "$@" || {
	echo "FAIL: fuzz-$name on the seed corpus (reproduce: ./fuzz-$name FILE)"
	exit 1
}
echo "PASS: $# seeds replayed"

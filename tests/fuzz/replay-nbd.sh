#!/bin/sh
# make check: run fuzz-nbd once over every seed of corpus/nbd (no
# fuzzing); any crash, sanitizer report, leak or timeout fails. Skipped
# (exit 77) without a clang that builds libFuzzer targets.
set -u
srcdir=${srcdir:-.}
CLANG=${CLANG:-clang}
if [ "$CLANG" = no ] || ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "SKIP: clang not found: fuzz targets need clang's libFuzzer"
	exit 77
fi
make fuzz-nbd >replay-nbd.build.log 2>&1 || {
	cat replay-nbd.build.log
	echo "SKIP: cannot build fuzz-nbd with $CLANG (libclang-rt missing?)"
	exit 77
}
mkdir -p fuzz-artifacts
set -- "$srcdir"/corpus/nbd/*
echo "replaying $# seeds of $srcdir/corpus/nbd"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} ./fuzz-nbd -error_exitcode=1 -timeout_exitcode=1 \
	-timeout=10 -artifact_prefix=fuzz-artifacts/ "$@" || {
	echo "FAIL: fuzz-nbd on the seed corpus (reproduce: ./fuzz-nbd FILE)"
	exit 1
}
echo "PASS: $# seeds replayed"

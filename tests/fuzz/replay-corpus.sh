#!/bin/sh
# make check: build fuzz-conf with clang and run it once over every file
# of the seed corpus (no fuzzing). Any crash, sanitizer report or leak
# fails; without a clang able to build libFuzzer targets the test is
# skipped (exit 77).
# Environment (set by Makefile.am): srcdir, top_srcdir, top_builddir,
# CLANG, PKG_CONFIG.
set -u

srcdir=${srcdir:-.}
top_srcdir=${top_srcdir:-$srcdir/../..}
top_builddir=${top_builddir:-../..}
CLANG=${CLANG:-clang}
export CLANG

if [ "$CLANG" = no ] || ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "SKIP: clang not found: fuzz targets need clang's libFuzzer (install clang, re-run configure)"
	exit 77
fi
probe=replay-corpus.probe
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >$probe.c
if ! "$CLANG" -fsanitize=fuzzer,address,undefined -o $probe $probe.c >$probe.log 2>&1; then
	cat $probe.log
	rm -f $probe $probe.c $probe.log
	echo "SKIP: $CLANG cannot build libFuzzer targets with ASan and UBSan (libclang-rt missing?)"
	exit 77
fi
rm -f $probe $probe.c $probe.log

sh "$srcdir/build.sh" "$top_srcdir" "$top_builddir" fuzz-conf || exit 99

# Each file is one run; leaks are checked when the process exits.
mkdir -p fuzz-artifacts
set -- "$srcdir"/corpus/conf/*
echo "replaying $# seeds of $srcdir/corpus/conf"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} ./fuzz-conf -error_exitcode=1 -timeout_exitcode=1 \
	-timeout=10 -artifact_prefix=fuzz-artifacts/ "$@"
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL: fuzz-conf exited with $rc on the seed corpus (reproduce: ./fuzz-conf FILE)"
	exit 1
fi
echo "PASS: $# seeds replayed without crash, leak or timeout"
exit 0

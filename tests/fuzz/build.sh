#!/bin/sh
# Build the libFuzzer target of the configuration parser with clang,
# independently of the compiler configure chose.
#
# usage: build.sh TOP_SRCDIR TOP_BUILDDIR OUTPUT
#   TOP_SRCDIR    the source tree (replicator/lib, tests/fuzz)
#   TOP_BUILDDIR  the configured build tree (its config.h)
#   OUTPUT        the fuzzer binary to write
# Environment: CLANG (default clang), PKG_CONFIG (default pkg-config),
# FUZZ_CFLAGS (extra flags, e.g. -O2).
set -eu

if [ $# -ne 3 ]; then
	echo "usage: $0 TOP_SRCDIR TOP_BUILDDIR OUTPUT" >&2
	exit 2
fi
top_srcdir=$1
top_builddir=$2
out=$3
clang=${CLANG:-clang}
pkg_config=${PKG_CONFIG:-pkg-config}
lib=$top_srcdir/replicator/lib

if [ ! -f "$top_builddir/config.h" ]; then
	echo "$0: no config.h in $top_builddir: run configure first" >&2
	exit 1
fi
json_flags=$($pkg_config --cflags --libs json-c)

# The parser's sources: everything in replicator/lib but log.c (libqb).
# shellcheck disable=SC2086 # json_flags and FUZZ_CFLAGS are word lists
"$clang" -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Wall -Wno-unused-parameter \
	-I"$lib" -I"$top_builddir" ${FUZZ_CFLAGS:-} \
	-o "$out.tmp" \
	"$top_srcdir/tests/fuzz/fuzz-conf.c" \
	"$lib/arena.c" \
	"$lib/diag.c" \
	"$lib/conf.c" \
	"$lib/conf-opt.c" \
	"$lib/conf-lex.c" \
	"$lib/conf-glob.c" \
	"$lib/conf-parse.c" \
	"$lib/conf-parse-vol.c" \
	"$lib/conf-check.c" \
	"$lib/peercred.c" \
	"$lib/conf-dump.c" \
	$json_flags
mv -f "$out.tmp" "$out"

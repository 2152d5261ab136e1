#!/bin/sh
# build.sh DIR: an optimised build of this checkout for the benchmarks
# (configure's default -O2, no sanitizers, no -Werror) in DIR, e.g.
#   tests/perf/build.sh /tmp/b2 && BUILD_DIR=/tmp/b2 tests/perf/repl-bench.sh
# Rebuilds what changed when DIR is already configured.
set -eu
[ $# -eq 1 ] || { echo "usage: tests/perf/build.sh DIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
# shellcheck disable=SC3013 # -nt: dash and bash have it
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	autoreconf -fi
fi
mkdir -p "$1"
cd "$1"
[ -f Makefile ] || "$top/configure" -q
make -s -j"$(nproc 2>/dev/null || echo 2)"
echo "built $(pwd) from $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')"

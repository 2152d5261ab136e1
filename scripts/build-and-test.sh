#!/bin/sh
# Build tandem from this checkout and run every test: make check (unit,
# golden corpus, drbdadm comparison, integration tests, man pages), a short
# fuzz run under ASan/UBSan, the unit and replication tests under
# ThreadSanitizer, make check-cluster (corosync + Pacemaker
# clusters in namespaces), the demo, and make distcheck (with the
# integration subset that checks the tarball). Ends with one line:
#   tests: N passed, N failed, N skipped
# Environment: BUILD_DIR (default ./build), FUZZ_SECONDS (default 60).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
jobs=$(nproc 2>/dev/null || echo 2)
rc=0

cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	autoreconf -fi
fi
mkdir -p "$build"
cd "$build"
"$top/configure" -q --enable-werror --enable-sanitizers
make -s -j"$jobs"

echo "== make check"
make -j"$jobs" check || rc=$?

if [ "$rc" -eq 0 ]; then
	echo "== fuzz (${FUZZ_SECONDS:-60} s)"
	make -s fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}" || rc=$?
fi
if [ "$rc" -eq 0 ]; then
	# ThreadSanitizer, in a build of its own (it excludes ASan): the unit
	# tests and the replication tests; a race report fails the test
	echo "== ThreadSanitizer: unit and replication tests (in $build/tsan-build)"
	# every replication test: each path of a write, resync, verify,
	# barriers, fencing, split brain, handlers, disk and link failures
	# (all of them take twice as long; CI stays under 45 minutes)
	tsan_tests=$(cd "$top/tests/integration" && echo test-repl-*.sh)
	mkdir -p tsan-build
	(cd tsan-build && "$top/configure" -q --enable-werror --enable-tsan &&
		make -s -j"$jobs" &&
		make -s -j"$jobs" -C tests/unit check &&
		make -s -j"$jobs" -C tests/integration check TESTS="$tsan_tests") || rc=$?
fi
if [ "$rc" -eq 0 ]; then
	# real corosync + Pacemaker clusters in namespaces; a skip is a failure
	echo "== make check-cluster (output in $build/cluster.log)"
	TCLUSTER_REQUIRE=1 make check-cluster >"$build/cluster.log" 2>&1 || rc=$?
	grep -E '^(PASS|FAIL|SKIP):' "$build/cluster.log" || true
	[ "$rc" -eq 0 ] || { tail -n 80 "$build/cluster.log"; echo "check-cluster failed (exit $rc)"; }
fi
if [ "$rc" -eq 0 ]; then
	# the README's other command must keep working too
	echo "== demo (scripts/demo.sh, output in $build/demo.log)"
	BUILD_DIR="$build/demo-build" "$top/scripts/demo.sh" >"$build/demo.log" 2>&1 ||
		{ rc=$?; tail -n 30 "$build/demo.log"; echo "demo failed (exit $rc)"; }
fi
if [ "$rc" -eq 0 ]; then
	echo "== make distcheck"
	# -j: its make check runs the tests two at a time, as make check above;
	# of the integration tests, those that use every helper file the
	# tarball must carry (tests/integration/Makefile.am): the whole suite
	# passed above on this tree, and CI has 45 minutes
	make -s -j"$jobs" distcheck \
		DISTCHECK_CONFIGURE_FLAGS="--enable-werror --enable-integration-subset" || rc=$?
fi

# Print the logs of failed tests, then the summary line.
for log in $(find . -name '*.trs' -path '*/tests/*' ! -path './tandem-*' | sort); do
	if grep -q '^:test-result: FAIL\|^:test-result: ERROR' "$log"; then
		echo "---- ${log%.trs}.log"
		cat "${log%.trs}.log"
	fi
done
set -- $(find . -name '*.trs' -path '*/tests/*' ! -path './tandem-*' -exec cat {} + |
	awk '/^:test-result: PASS/ {p++} /^:test-result: XFAIL/ {p++}
	     /^:test-result: (FAIL|ERROR|XPASS)/ {f++} /^:test-result: SKIP/ {s++}
	     END {print p+0, f+0, s+0}')
if [ -f cluster.log ]; then # the cluster tests count too
	set -- $(($1 + $(grep -c '^PASS:' cluster.log))) $(($2 + $(grep -c '^FAIL:' cluster.log))) \
		$(($3 + $(grep -c '^SKIP:' cluster.log)))
fi
[ "$2" -eq 0 ] || [ "$rc" -ne 0 ] || rc=1
[ "$1" -gt 0 ] || [ "$rc" -ne 0 ] || { echo "no test ran" >&2; rc=1; }
echo "tests: $1 passed, $2 failed, $3 skipped"
exit "$rc"

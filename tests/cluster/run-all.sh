#!/bin/sh
# Runs every cluster test (test-*.sh here, in name order, one at a time: each
# builds its own cluster) and prints one PASS/FAIL/SKIP line per test and the
# time taken.  Exit 0 if none failed.  A skipped test is printed with its
# reason; TCLUSTER_REQUIRE=1 (for CI) turns a skip into a failure, so that
# a machine that cannot run clusters never passes silently.
#
# Environment: TANDEM_DESTDIR (make install DESTDIR tree, for test-bringup),
# TCLUSTER_LOGS (keep every test's node logs and its output there, in
# TCLUSTER_LOGS/TEST/), TCLUSTER_TESTS (a space-separated subset of test
# names to run).
here=$(cd "$(dirname "$0")" && pwd)
tests=${TCLUSTER_TESTS:-$(cd "$here" && ls test-*.sh)}
failed=0
skipped=0
t_all=$(date +%s)
out=$(mktemp /tmp/tcluster-run.XXXXXX) || exit 1
trap 'rm -f "$out"' EXIT
trap 'exit 130' INT TERM HUP

for t in $tests; do
	t0=$(date +%s)
	sh "$here/$t" >"$out" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	# the test's whole output, with its timings, next to its logs
	if [ -n "${TCLUSTER_LOGS:-}" ] && mkdir -p "$TCLUSTER_LOGS/$t"; then
		cp "$out" "$TCLUSTER_LOGS/$t/output"
	fi
	case $rc in
	0)
		echo "PASS: $t (${dt} s, $(tail -n 1 "$out"))" ;;
	77)
		skipped=$((skipped + 1))
		echo "SKIP: $t: $(grep '^SKIP:' "$out" | tail -n 1)"
		if [ -n "${TCLUSTER_REQUIRE:-}" ]; then
			failed=$((failed + 1))
			echo "FAIL: $t skipped, but TCLUSTER_REQUIRE is set"
		fi ;;
	*)
		failed=$((failed + 1))
		cat "$out"
		echo "FAIL: $t (exit $rc, ${dt} s)" ;;
	esac
done
echo "cluster tests: $(echo "$tests" | wc -w) run, $failed failed," \
	"$skipped skipped, $(($(date +%s) - t_all)) s"
[ "$failed" -eq 0 ]

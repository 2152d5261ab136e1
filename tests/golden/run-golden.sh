#!/bin/sh
# run-golden.sh: golden tests of tandemadm's configuration layer (TAP).
#
# corpus/valid/X.conf    must load: `tandemadm -c X.conf --node NODE dump`
#                        prints X.dump on stdout and X.warn on stderr (may be
#                        empty) and exits 0; the dump of that dump is the same
#                        (comment lines aside); `dump --json` is valid JSON.
# corpus/invalid/X.conf  must be refused: nothing on stdout, X.err on stderr,
#                        exit code 10.
#
# NODE comes from the first line of each config, `# node: NAME`. tandemadm
# runs from the case's directory, so positions in messages are the relative
# paths the expected files hold. Included files live in subdirectories
# (X.d/) and do not end in .conf.
#
# Environment:
#   TANDEMADM  the binary (default: ../../replicator/tandemadm from the
#              directory this runs in, which is tests/golden of the build tree)
#   srcdir     the directory of this script in the source tree (automake sets
#              it; default: the directory of $0)
#   REGEN=1    rewrite the expected files from what tandemadm prints now.
#              Read every changed file (git diff) before committing it: a
#              golden file that enshrines a bug is worse than none.
#
# Exit status: 0 when every test passed, 1 otherwise, 99 on a setup error.

LC_ALL=C
export LC_ALL
unset TANDEM_HOSTNAME TANDEM_CONFIG

: "${srcdir:=$(dirname "$0")}"
: "${TANDEMADM:=../../replicator/tandemadm}"

bail() {
	echo "Bail out! $*"
	exit 99
}

case $TANDEMADM in
/*) ;;
*) TANDEMADM=$(cd "$(dirname "$TANDEMADM")" 2>/dev/null && pwd)/$(basename "$TANDEMADM") ;;
esac
[ -x "$TANDEMADM" ] || bail "tandemadm not found at '$TANDEMADM' (set TANDEMADM)"
corpus=$(cd "$srcdir/corpus" 2>/dev/null && pwd) || bail "no corpus under srcdir '$srcdir'"

# python3 checks the JSON; resolve the interpreter once (a pyenv shim
# costs half a second a call).
python=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || python=
if [ -n "$python" ] && [ -x "$python" ]; then
	have_python=yes
else
	have_python=no
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/run-golden.XXXXXX") || bail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

n=0
failed=0

# result OK NAME [DIAGNOSTICS-FILE]
result() {
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		[ -n "$3" ] && [ -s "$3" ] && sed 's/^/# /' "$3"
	fi
	return 0
}

node_of() {
	sed -n '1s/^# node: *\([^ ]*\).*$/\1/p' "$1"
}

# same EXPECTED ACTUAL LABEL: append a diff to $tmp/diag if they differ.
same() {
	if [ ! -f "$1" ]; then
		echo "missing expected file $(basename "$1")" >>"$tmp/diag"
		return 1
	fi
	if ! cmp -s "$1" "$2"; then
		echo "$3 differs (--- expected, +++ actual):" >>"$tmp/diag"
		diff -u "$1" "$2" | sed '1,2d' >>"$tmp/diag"
		return 1
	fi
	return 0
}

# regen SRC DST: rewrite an expected file in REGEN mode.
regen() {
	if ! cmp -s "$1" "$2" 2>/dev/null; then
		cp "$1" "$2" || bail "cannot write $2"
		echo "# REGEN: rewrote $(basename "$2")"
	fi
}

cases_valid=$(cd "$corpus/valid" && for f in ./*.conf; do echo "${f#./}"; done | sort)
cases_invalid=$(cd "$corpus/invalid" && for f in ./*.conf; do echo "${f#./}"; done | sort)
echo "1..$(($(echo "$cases_valid" | wc -w) * 3 + $(echo "$cases_invalid" | wc -w)))"

for conf in $cases_valid; do
	x=${conf%.conf}
	c=valid/$x
	node=$(node_of "$corpus/valid/$conf")
	[ -n "$node" ] || bail "$c: first line is not '# node: NAME'"

	# 1. dump: stdout, stderr and exit code
	(cd "$corpus/valid" && "$TANDEMADM" -c "$conf" --node "$node" dump) \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ -n "$REGEN" ]; then
		[ $rc -eq 0 ] || echo "# REGEN: $c: exit code $rc, expected 0; check it"
		regen "$tmp/out" "$corpus/valid/$x.dump"
		regen "$tmp/err" "$corpus/valid/$x.warn"
	fi
	: >"$tmp/diag"
	ok=ok
	if [ $rc -ne 0 ]; then
		echo "exit code $rc, expected 0" >>"$tmp/diag"
		ok="not ok"
	fi
	same "$corpus/valid/$x.dump" "$tmp/out" stdout || ok="not ok"
	same "$corpus/valid/$x.warn" "$tmp/err" stderr || ok="not ok"
	result "$ok" "$c: dump" "$tmp/diag"
	dump_rc=$rc

	# 2. the dump of the dump is the same, comment lines aside
	: >"$tmp/diag"
	ok=ok
	if [ $dump_rc -ne 0 ]; then
		echo "the dump failed; nothing to load again" >>"$tmp/diag"
		ok="not ok"
	else
		cp "$tmp/out" "$tmp/redump.conf"
		(cd "$tmp" && "$TANDEMADM" -c redump.conf --node "$node" dump) \
			>"$tmp/out2" 2>"$tmp/err2"
		rc=$?
		if [ $rc -ne 0 ]; then
			{
				echo "dump of the dump: exit code $rc, expected 0"
				cat "$tmp/err2"
			} >>"$tmp/diag"
			ok="not ok"
		else
			grep -v '^#' "$tmp/out" >"$tmp/a"
			grep -v '^#' "$tmp/out2" >"$tmp/b"
			same "$tmp/a" "$tmp/b" "dump of the dump" || ok="not ok"
		fi
	fi
	result "$ok" "$c: dump is idempotent" "$tmp/diag"

	# 3. dump --json is valid JSON
	: >"$tmp/diag"
	(cd "$corpus/valid" && "$TANDEMADM" -c "$conf" --node "$node" dump --json) \
		>"$tmp/json" 2>"$tmp/err"
	rc=$?
	if [ $have_python = no ]; then
		n=$((n + 1))
		echo "ok $n - $c: dump --json is valid JSON # SKIP python3 not found"
	elif [ $rc -eq 0 ] && "$python" -m json.tool "$tmp/json" >/dev/null 2>"$tmp/diag"; then
		result ok "$c: dump --json is valid JSON"
	else
		[ $rc -eq 0 ] || { echo "exit code $rc"; cat "$tmp/err"; } >>"$tmp/diag"
		result "not ok" "$c: dump --json is valid JSON" "$tmp/diag"
	fi
done

for conf in $cases_invalid; do
	x=${conf%.conf}
	c=invalid/$x
	node=$(node_of "$corpus/invalid/$conf")
	[ -n "$node" ] || bail "$c: first line is not '# node: NAME'"
	(cd "$corpus/invalid" && "$TANDEMADM" -c "$conf" --node "$node" dump) \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ -n "$REGEN" ]; then
		[ $rc -eq 10 ] || echo "# REGEN: $c: exit code $rc, expected 10; check it"
		regen "$tmp/err" "$corpus/invalid/$x.err"
	fi
	: >"$tmp/diag"
	ok=ok
	if [ $rc -ne 10 ]; then
		echo "exit code $rc, expected 10" >>"$tmp/diag"
		ok="not ok"
	fi
	if [ -s "$tmp/out" ]; then
		echo "stdout is not empty:" >>"$tmp/diag"
		head -n 20 "$tmp/out" >>"$tmp/diag"
		ok="not ok"
	fi
	same "$corpus/invalid/$x.err" "$tmp/err" stderr || ok="not ok"
	result "$ok" "$c: refused with the expected errors" "$tmp/diag"
done

[ $failed -eq 0 ] || echo "# $failed of $n tests failed"
[ $failed -eq 0 ]

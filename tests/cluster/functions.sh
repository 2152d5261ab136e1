# shellcheck shell=sh
# Shared helpers of the cluster tests (sourced). Each test builds its own
# cluster with tcluster, exits 0 (pass), 1 (fail) or 77 (skip, with the
# reason printed), and tears everything down on exit, whatever happens.
# TCLUSTER_LOGS=DIR keeps the nodes' logs there (for CI artefacts).
set -u

here=$(cd "$(dirname "$0")" && pwd)
: "${TCLUSTER:=$here/tcluster}"
export LC_ALL=C TZ=UTC
nfail=0
npass=0

skip() { echo "SKIP: $*"; exit 77; }

# Refuse before making anything: why=... is a complete sentence.
why=$("$TCLUSTER" check) || skip "$why"

tmp=$(mktemp -d "/tmp/tcluster-test.$$.XXXXXX")
TC_DIR=$tmp/cluster
export TC_DIR

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	if [ -f "$TC_DIR/cluster.env" ]; then
		if [ -n "${TCLUSTER_LOGS:-}" ]; then
			"$TCLUSTER" logs "$TCLUSTER_LOGS/${0##*/}" ||
				echo "could not save logs to $TCLUSTER_LOGS" >&2
		elif [ "$nfail" -gt 0 ]; then
			tail -n 30 "$TC_DIR"/nodes/*/init.log "$TC_DIR/pdu.log" \
				"$TC_DIR/shared/fence.log" >&2 2>/dev/null
		fi
		"$TCLUSTER" down || rc=1
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

tc() { "$TCLUSTER" "$@"; }

pass() { npass=$((npass + 1)); echo "ok $npass - $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL: $*" >&2; }
die() { fail "$*"; exit 1; }

# check DESCRIPTION CMD...: one assertion
check() {
	d=$1
	shift
	if "$@"; then pass "$d"; else fail "$d"; fi
}

not() { ! "$@" >/dev/null 2>&1; }

# finish: the exit status of the test
finish() {
	echo "$npass passed, $nfail failed"
	[ "$nfail" -eq 0 ]
}

# crm_mon's XML in NODE's view
mon_xml() { tc exec "$1" crm_mon -1 -r --output-as=xml 2>/dev/null; }

# node_online VIEWER NODE: crm_mon XML in VIEWER's view has NODE online
node_online() {
	mon_xml "$1" | grep -q "<node name=\"$2\" id=\"[0-9]*\" online=\"true\""
}

# members NODE: corosync's membership in NODE's view, as "n1 n2"
members() {
	tc exec "$1" corosync-quorumtool -l 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ { print $3 }' | sort | tr '\n' ' ' |
		sed 's/ $//'
}

# retry SECONDS CMD...: until CMD succeeds, at most SECONDS
retry() {
	r_end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$r_end" ] || return 1
		sleep 0.2
	done
}

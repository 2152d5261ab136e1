# Shared helpers of the integration tests (sourced). Each test is a small
# script that exits 0 (pass), 1 (fail) or 77 (skip, with the reason
# printed). Scratch files go to a private directory removed on exit.
set -eu

: "${TANDEMADM:=$(cd "$(dirname "$0")/../.." && pwd)/replicator/tandemadm}"
export LC_ALL=C TZ=UTC
tmp=$(mktemp -d /tmp/tandem-it.XXXXXX)
cleanup_hooks=""

cleanup() {
	rc=$?
	report_skipped_parts
	for h in $cleanup_hooks; do $h || true; done
	# whatever a test checked, a daemon that broke its state table or that a
	# sanitizer caught fails it (tandemd logs to $tmp/tandemd*.log)
	for f in "$tmp"/tandemd*.log; do
		[ -f "$f" ] || continue
		bad=$(grep -m 1 -e 'BUG: state change' -e 'ERROR: AddressSanitizer' \
			-e 'runtime error: ' -e 'WARNING: ThreadSanitizer' "$f" || true)
		[ -z "$bad" ] && continue
		echo "FAIL: ${f##*/}: $bad" >&2
		# the report itself, so a CI log that keeps only this test's output
		# still shows where the fault is
		awk '/ERROR: AddressSanitizer|runtime error: |WARNING: ThreadSanitizer/ {p = 1}
			p && n++ < 80 {print "  " $0} /^SUMMARY: / && p {exit}' "$f" >&2
		[ "$rc" -ne 0 ] || rc=1
	done
	# new_loop runs in $(...) and cannot record what it attached: detach every loop
	# device whose backing file is under $tmp
	losetup -n -l -O NAME,BACK-FILE 2>/dev/null | while read -r l f; do
		case $f in "$tmp"/*) losetup -d "$l" 2>/dev/null || true ;; esac
	done
	[ -n "${KEEP_TMP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
	trap - EXIT
	exit "$rc"
}
trap cleanup EXIT INT TERM

# Skips. A test whose point cannot be checked here exits 77 through
# skip "reason" (automake counts it as SKIP). A sub-check that cannot run
# while the rest of the test does is not passed in silence: skip_part
# "reason" prints "SKIP: reason" in the test's log (automake counts per
# file, so the test still shows PASS), and the test's last line lists
# every part it skipped. Never "not checked:" and a pass.
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
skipped_parts=""
skip_part() {
	echo "SKIP: $*"
	skipped_parts="$skipped_parts${skipped_parts:+; }$*"
}
report_skipped_parts() {
	[ -z "$skipped_parts" ] || echo "SKIP: parts of this test were not checked: $skipped_parts"
}

# Waits. A test never sleeps to let something happen: it waits for the
# state or event that shows it happened, with a generous bound (the
# machine may be loaded) and a message that names what did not happen.
# To check that something does NOT happen, wait for a later event that
# could only come after it; where there is none, observe for a bounded
# window and say in a comment where the window starts and why it is long
# enough.

# wait_until SECONDS WHAT CMD...: run CMD every 0.1 s until it succeeds;
# fail with "WHAT" after SECONDS
wait_until() {
	wu_secs=$1
	wu_end=$(($(date +%s) + $1))
	wu_what=$2
	shift 2
	until "$@"; do
		[ "$(date +%s)" -le "$wu_end" ] || fail "timed out after $wu_secs s: $wu_what"
		sleep 0.1
	done
}

# wait_grep FILE PATTERN [SECONDS]: until FILE has a line matching PATTERN
# (grep -E); shows the end of FILE if it does not come
wait_grep() {
	wg_end=$(($(date +%s) + ${3:-30}))
	until grep -Eq -- "$2" "$1" 2>/dev/null; do
		if [ "$(date +%s)" -gt "$wg_end" ]; then
			echo "--- end of $1"
			tail -n 30 "$1" 2>/dev/null || true
			fail "no '$2' in ${1##*/} after ${3:-30} s"
		fi
		sleep 0.1
	done
}
requires() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }
requires_root() { [ "$(id -u)" -eq 0 ] || skip "needs root (loop devices)"; }

# new_image FILE SIZE: a sparse image
new_image() { rm -f "$1"; truncate -s "$2" "$1"; }

# new_loop FILE: attach a loop device, print its name
new_loop() {
	losetup -f --show "$1" || skip "cannot attach a loop device"
}

# Replication ports of this run: tests run in parallel, each with its own.
port=$(( 20000 + ($$ % 10000) * 2 ))
port2=$((port + 1))

# write_conf FILE DISK META: a one-volume resource r0 for host alice
# (IO_ENGINE set: the resource's io-engine, tandem.conf(5))
write_conf() {
	cat >"$1" <<CONF
resource r0 {
	${IO_ENGINE:+disk { io-engine $IO_ENGINE; \}}
	net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
	on alice { device minor 0; disk $2; meta-disk $3; address 127.0.0.1:$port; }
	on bob { device minor 0; disk /dev/null; meta-disk internal; address 127.0.0.2:$port; }
}
CONF
}

adm() { "$TANDEMADM" -c "$tmp/t.conf" --node alice "$@"; }

# dump-md without the header (4 lines) and the flags line, which drbdmeta
# 9.22 prints as 0 for v08 (doc/ondisk-format.pod, COMPATIBILITY NOTES)
strip_dump() { sed -e '1,4d' -e '/^    flags 0x/d' "$1"; }

: "${TANDEMD:=$(dirname "$TANDEMADM")/tandemd}"
rundir=$tmp/run

# start_tandemd: tandemd in the foreground for host alice, logging to
# $tmp/tandemd.log; stopped (SIGTERM) on exit
start_tandemd() {
	rm -f "$rundir/tandemd.sock" # a killed daemon leaves it behind
	"$TANDEMD" -c "$tmp/t.conf" --node alice --run-dir "$rundir" -f >"$tmp/tandemd.log" 2>&1 &
	tandemd_pid=$!
	cleanup_hooks="$cleanup_hooks stop_tandemd"
	i=0
	until [ -S "$rundir/tandemd.sock" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || { cat "$tmp/tandemd.log"; fail "tandemd did not start"; }
		kill -0 "$tandemd_pid" 2>/dev/null || { cat "$tmp/tandemd.log"; fail "tandemd exited"; }
		sleep 0.05
	done
}

stop_tandemd() {
	[ -n "${tandemd_pid:-}" ] || return 0
	kill -TERM "$tandemd_pid" 2>/dev/null || true
	wait "$tandemd_pid" 2>/dev/null || true
	tandemd_pid=
}

ctl() { "$TANDEMADM" -c "$tmp/t.conf" --node alice --run-dir "$rundir" "$@"; }
nbd_uri() { echo "nbd+unix:///${1:-r0}?socket=$rundir/${1:-r0}.nbd"; }

# ctl_field NAME [RES]: a field of the resource or of its volume 0 (and its
# counters) in status --json, as repl-functions.sh's field does
ctl_field() {
	ctl status --json "${2:-r0}" | python3 -c '
import json, sys
r = json.load(sys.stdin)["resources"][0]
v = r["volumes"][0]
k = sys.argv[1]
print(r[k] if k in r else v.get(k, v.get("counters", {}).get(k, "")))' "$1"
}
ctl_field_is() { [ "$(ctl_field "$1")" = "$2" ]; }
nbdsh_() { PATH=/usr/bin:$PATH nbdsh "$@"; }

# Shared helpers of the integration tests (sourced). Each test is a small
# script that exits 0 (pass), 1 (fail) or 77 (skip, with the reason
# printed). Scratch files go to a private directory removed on exit.
set -eu

: "${TANDEMADM:=$(cd "$(dirname "$0")/../.." && pwd)/replicator/tandemadm}"
export LC_ALL=C TZ=UTC
tmp=$(mktemp -d /tmp/tandem-it.XXXXXX)
loops=""
cleanup_hooks=""

cleanup() {
	for h in $cleanup_hooks; do $h || true; done
	for l in $loops; do losetup -d "$l" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
requires() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }
requires_root() { [ "$(id -u)" -eq 0 ] || skip "needs root (loop devices)"; }

# new_image FILE SIZE: a sparse image
new_image() { rm -f "$1"; truncate -s "$2" "$1"; }

# new_loop FILE: attach a loop device, print its name
new_loop() {
	l=$(losetup -f --show "$1") || skip "cannot attach a loop device"
	loops="$loops $l"
	echo "$l"
}

# write_conf FILE DISK META: a one-volume resource r0 for host alice
write_conf() {
	cat >"$1" <<CONF
resource r0 {
	on alice { device minor 0; disk $2; meta-disk $3; address 127.0.0.1:7789; }
	on bob { device minor 0; disk /dev/null; meta-disk internal; address 127.0.0.2:7789; }
}
CONF
}

adm() { "$TANDEMADM" -c "$tmp/t.conf" --node alice "$@"; }

# dump-md without the header (4 lines) and the flags line, which drbdmeta
# 9.22 prints as 0 for v08 (doc/ondisk-format.pod, COMPATIBILITY NOTES)
strip_dump() { sed -e '1,4d' -e '/^    flags 0x/d' "$1"; }

#!/bin/sh
# Install every build and test dependency of tandem on Debian 12 (bookworm).
# Idempotent and non-interactive: packages already present are skipped, and
# service start-up by package scripts is suppressed while installing (the
# tests start corosync and pacemakerd themselves, in namespaces).
# With --perf it also installs what the benchmarks in tests/perf need
# (not run by CI; tests/perf/README).
set -eu

BUILD_PKGS="build-essential autoconf automake libtool pkg-config
	libqb-dev libcpg-dev libquorum-dev libvotequorum-dev libcmap-dev
	libcfg-dev libcorosync-common-dev pacemaker-dev libxml2-dev libssl-dev openssl
	liburing-dev libcmocka-dev libjson-c-dev clang libclang-rt-14-dev"
TEST_PKGS="corosync pacemaker pacemaker-cli-utils resource-agents
	libnbd-bin python3-libnbd nbdkit qemu-utils fio drbd-utils iproute2 fuse3
	e2fsprogs util-linux procps psmisc perl shellcheck
	crmsh pcs fence-agents python3 libxml2-utils iputils-ping
	corosync-qnetd corosync-qdevice systemd"
# tests/perf: jq, strace, perf, valgrind, /usr/bin/time; qemu-storage-daemon
# for repl-bench's quorum anchor; gnuplot for its chart
PERF_PKGS="jq strace linux-perf valgrind time qemu-system-common gnuplot-nox"
[ "${1:-}" = --perf ] || PERF_PKGS=

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: must run as root (it calls apt-get)" >&2
	exit 1
fi

missing=""
for p in $BUILD_PKGS $TEST_PKGS $PERF_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps.sh: all dependencies present"
	exit 0
fi

echo "install-deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
made_policy=no
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	made_policy=yes
fi
trap '[ "$made_policy" = yes ] && rm -f "$policy"' EXIT
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing

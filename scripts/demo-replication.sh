#!/bin/sh
# tandem demo: build, then show what tandem makes of a two-node DRBD-style
# configuration, as each node sees it, and how it reports mistakes; then two
# tandemd nodes in network namespaces replicate a volume: the initial sync
# with its progress, writes through NBD, a disconnect and a resync of only
# what changed, and the two disks compared.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build-demo}
cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	autoreconf -fi >/dev/null
fi
mkdir -p "$build"
(cd "$build" && "$top/configure" -q && make -s -j"$(nproc 2>/dev/null || echo 2)")
adm="$build/replicator/tandemadm"
conf="$top/examples/tandem.conf"
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "The example config ($conf) in canonical DRBD 8.4 form, as node alice sees it"
"$adm" -c "$conf" --node alice dump

say "Resources and their devices on each node"
for node in alice bob; do
	printf '%s: resources: %s\n' "$node" "$("$adm" -c "$conf" --node "$node" sh-resources)"
	for r in $("$adm" -c "$conf" --node "$node" sh-resources); do
		printf '  %s: disk %s, meta-data %s [%s]\n' "$r" \
			"$("$adm" -c "$conf" --node "$node" sh-ll-dev "$r" | tr '\n' ' ')" \
			"$("$adm" -c "$conf" --node "$node" sh-md-dev "$r" | tr '\n' ' ')" \
			"$("$adm" -c "$conf" --node "$node" sh-md-idx "$r" | tr '\n' ' ')"
	done
done

say "tandemd checks the config for node bob"
"$build/replicator/tandemd" -c "$conf" --node bob -t

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/drbd-2006.conf" <<'CONF'
# A DRBD 0.7/8.0-era config, as pasted from an old mailing-list post.
global { minor-count 64; dialog-refresh 5; }
resource r0 {
  protocol C;
  incon-degr-cmd "echo '!DRBD! pri on incon-degr' | wall ; sleep 60 ; halt -f";
  startup { degr-wfc-timeout 120; }
  disk { on-io-error detach; }
  net { on-disconnect reconnect; }
  syncer { rate 10M; group 1; al-extents 257; }
  on alice { device /dev/drbd0; disk /dev/hde5; address 10.0.0.1:7788; meta-disk internal; }
  on bob   { device /dev/drbd0; disk /dev/hde5; address 10.0.0.2:7788; meta-disk internal; }
}
CONF
say "An old DRBD 0.7/8.0 config loads, with advice on how to modernise it"
"$adm" -c "$tmp/drbd-2006.conf" --node alice dump r0

cat >"$tmp/broken.conf" <<'CONF'
resource r0 {
  net { protocol A; after-sb-0pri discard-everything; timeout 900; }
  disk { fencing resource-and-stonith; }
  on alice { device /dev/drbd0; disk /dev/sdb1; address 10.0.0.1:7789; meta-disk internal; }
  on bob   { device /dev/drbd0; disk /dev/sdb1; address 10.0.0.2:7789 meta-disk internal; }
}
CONF
say "A broken config: every error is reported, with file:line:col and the fix (exit 10)"
set +e
"$adm" -c "$tmp/broken.conf" --node alice dump
echo "exit code: $?"
set -e
say "Metadata in DRBD 8.4's format, on a 1 GiB sparse file (drbdmeta reads it too)"
truncate -s 1G "$tmp/disk.img"
cat >"$tmp/md.conf" <<CONF
resource data {
  net { cram-hmac-alg sha256; shared-secret "demo-secret"; }
  on alice { device minor 0; disk $tmp/disk.img; meta-disk internal; address 10.0.0.1:7789; }
  on bob   { device minor 0; disk $tmp/disk.img; meta-disk internal; address 10.0.0.2:7789; }
}
CONF
"$adm" -c "$tmp/md.conf" --node alice create-md data
"$adm" -c "$tmp/md.conf" --node alice show-gi data
"$adm" -c "$tmp/md.conf" --node alice check-md data
set +e
"$adm" -c "$tmp/md.conf" --node alice create-md data
echo "exit code: $? (existing metadata is never overwritten without --force)"
set -e

say "Two nodes replicate: alice and bob in two network namespaces, joined by a veth pair"
td="$build/replicator/tandemd"
if [ "$(id -u)" -ne 0 ] || ! ip netns add "tdemo-a-$$" 2>/dev/null; then
	echo "(skipped: the two-node part needs root and network namespaces)"
else
	nsa=tdemo-a-$$ nsb=tdemo-b-$$
	ip netns add "$nsb"
	demo_down() {
		for p in ${pida:-} ${pidb:-}; do kill "$p" 2>/dev/null || true; done
		wait 2>/dev/null || true
		ip netns del "$nsa" 2>/dev/null || true
		ip netns del "$nsb" 2>/dev/null || true
		rm -rf "$tmp"
	}
	trap demo_down EXIT
	ip link add "tda$$" type veth peer name "tdb$$"
	ip link set "tda$$" netns "$nsa"
	ip link set "tdb$$" netns "$nsb"
	ip -n "$nsa" addr add 10.250.0.1/24 dev "tda$$"
	ip -n "$nsb" addr add 10.250.0.2/24 dev "tdb$$"
	for n in "$nsa" "$nsb"; do ip -n "$n" link set lo up; done
	ip -n "$nsa" link set "tda$$" up
	ip -n "$nsb" link set "tdb$$" up
	truncate -s 256M "$tmp/alice.img" "$tmp/bob.img"
	cat >"$tmp/repl.conf" <<CONF
resource data {
  net { protocol C; cram-hmac-alg sha256; shared-secret "demo-secret"; }
  disk { resync-rate 60M; c-plan-ahead 0; }
  on alice { device minor 0; disk $tmp/alice.img; meta-disk internal; address 10.250.0.1:7789; }
  on bob   { device minor 0; disk $tmp/bob.img; meta-disk internal; address 10.250.0.2:7789; }
}
CONF
	a() { "$adm" -c "$tmp/repl.conf" --node alice --run-dir "$tmp/run-a" "$@"; }
	b() { "$adm" -c "$tmp/repl.conf" --node bob --run-dir "$tmp/run-b" "$@"; }
	a create-md data >/dev/null
	b create-md data >/dev/null
	ip netns exec "$nsa" "$td" -c "$tmp/repl.conf" --node alice --run-dir "$tmp/run-a" -f \
		2>"$tmp/alice.log" &
	pida=$!
	ip netns exec "$nsb" "$td" -c "$tmp/repl.conf" --node bob --run-dir "$tmp/run-b" -f \
		2>"$tmp/bob.log" &
	pidb=$!
	while [ ! -S "$tmp/run-a/tandemd.sock" ] || [ ! -S "$tmp/run-b/tandemd.sock" ]; do
		sleep 0.1
	done
	a up data
	b up data
	a wait-connect --timeout 30 data
	echo "$ tandemadm primary --force data   (on alice: the first promotion; bob gets a full sync)"
	a primary --force data
	sleep 1.5
	a status data
	b wait-sync --timeout 120 data
	a status data
	uri="nbd+unix:///data?socket=$tmp/run-a/data.nbd"
	if command -v nbdcopy >/dev/null; then
		head -c 32M /dev/urandom >"$tmp/payload"
		nbdcopy "$tmp/payload" "$uri"
		echo "wrote 32 MiB on alice through NBD (protocol C: each write on both disks)"
		echo "$ tandemadm disconnect data   (on bob), then 8 MiB more on alice"
		b disconnect data
		head -c 8M /dev/urandom | nbdcopy - "nbd+unix:///data?socket=$tmp/run-a/data.nbd"
		a status --verbose data
		echo "$ tandemadm connect data   (on bob): only what changed is resynced"
		b connect data
		b wait-sync --timeout 60 data
		grep 'resync as' "$tmp/alice.log" | tail -n 1
		a secondary data
		a down data
		b down data
		size=$((256 * 1024 * 1024 - 1024 * 1024))
		cmp -n "$size" "$tmp/alice.img" "$tmp/bob.img" &&
			echo "alice's and bob's disks are identical (cmp of the data areas)"
	fi
	kill "$pida" "$pidb"
	wait "$pida" "$pidb" 2>/dev/null || true
	pida= pidb=
	echo "--- alice's log (state transitions):"
	grep -E 'connection\(|disk\(|role\(|resync' "$tmp/alice.log" | sed 's/^.*tandemd: //'
fi

say "Done. See doc/ and 'man -l $build/doc/tandemadm.8'."

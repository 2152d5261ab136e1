#!/bin/sh
# tandem demo: build, then show what tandem makes of a two-node DRBD-style
# configuration, as each node sees it, and how it reports mistakes.
# (It grows into a live failover demo as the data path lands.)
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

say "tandemd serves the volume over NBD as a (StandAlone) Primary"
td="$build/replicator/tandemd"
run="$tmp/run"
"$td" -c "$tmp/md.conf" --node alice --run-dir "$run" -f 2>"$tmp/tandemd.log" &
tdpid=$!
trap 'kill $tdpid 2>/dev/null || true; rm -rf "$tmp"' EXIT
while [ ! -S "$run/tandemd.sock" ]; do sleep 0.1; done
ctl() { "$adm" -c "$tmp/md.conf" --node alice --run-dir "$run" "$@"; }
ctl up data
ctl primary data || echo "(refused: the new disk is Inconsistent; first promotion needs --force)"
ctl primary --force data
if command -v nbdcopy >/dev/null; then
	head -c 32M /dev/urandom >"$tmp/payload"
	nbdcopy "$tmp/payload" "nbd+unix:///data?socket=$run/data.nbd"
	nbdcopy "nbd+unix:///data?socket=$run/data.nbd" - | head -c 32M | cmp - "$tmp/payload" &&
		echo "wrote 32 MiB through NBD with nbdcopy and read them back: identical"
fi
ctl status --verbose
ctl secondary data
ctl down data
kill $tdpid; wait $tdpid 2>/dev/null || true
echo "--- tandemd's log:"
cat "$tmp/tandemd.log"

say "Done. See doc/ and 'man -l $build/doc/tandemadm.8'."

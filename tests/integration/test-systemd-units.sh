#!/bin/sh
# The systemd units: systemd-analyze verify accepts both without a word,
# their sandboxes keep the exposure that systemd-analyze security
# --offline reports below 4.0 (tandemd(8) and tandem-arbiterd(8), SYSTEMD
# UNIT), and the directories they make writable are the ones the daemons
# use by default. Nothing is started: this needs no running systemd.
# The units name /usr/sbin's programs, which verify requires to exist: it
# reads copies that name the built ones, and finds the built man pages for
# Documentation= through MANPATH.
. "$(dirname "$0")/functions.sh"
requires systemd-analyze
systemd-analyze --help 2>/dev/null | grep -q -- '--offline' ||
	skip "systemd-analyze $(systemd-analyze --version | sed -n '1s/^systemd //p') has no --offline (systemd 250 or later)"

units=$(cd "$(dirname "$0")/../../systemd" && pwd)
top=$(cd "$(dirname "$TANDEMD")/.." && pwd)
arbiterd=$top/fencing/tandem-arbiterd
[ -x "$TANDEMD" ] || fail "$TANDEMD is not built"
[ -x "$arbiterd" ] || fail "$arbiterd is not built"

mkdir "$tmp/u"
sed "s|/usr/sbin/tandemd|$TANDEMD|g" "$units/tandemd.service" >"$tmp/u/tandemd.service"
sed "s|/usr/sbin/tandem-arbiterd|$arbiterd|g" "$units/tandem-arbiterd.service" \
	>"$tmp/u/tandem-arbiterd.service"
grep -q "ExecStart=$TANDEMD -f" "$tmp/u/tandemd.service" || fail "tandemd.service: no ExecStart=/usr/sbin/tandemd -f"
grep -q "ExecStart=$arbiterd\$" "$tmp/u/tandem-arbiterd.service" ||
	fail "tandem-arbiterd.service: no ExecStart=/usr/sbin/tandem-arbiterd"

# verify: errors fail it; warnings (an unknown key, a value it cannot
# parse: "ignoring") do not change its exit code, so any line that names
# one of the units fails the test too. --recursive-errors=no: the host's
# other units (corosync.service may not even be installed) are not ours.
man=--man=yes
if command -v man >/dev/null 2>&1 && [ -f "$top/doc/tandemd.8" ] && [ -f "$arbiterd.8" ]; then
	mkdir -p "$tmp/man/man5" "$tmp/man/man8"
	ln -s "$top/doc/tandemd.8" "$arbiterd.8" "$tmp/man/man8/"
	ln -s "$top/doc/tandem.conf.5" "$tmp/man/man5/"
	MANPATH=$tmp/man
	export MANPATH
else
	man=--man=no
	skip_part "Documentation= pages: man or the built pages are missing"
fi
verify() { # UNIT...: 0 if systemd-analyze verify has nothing to say about them
	set +e
	systemd-analyze verify "$man" --recursive-errors=no "$@" >"$tmp/verify.out" 2>&1
	vrc=$?
	set -e
	! grep -e 'tandemd\.service' -e 'tandem-arbiterd\.service' "$tmp/verify.out" >&2 && [ $vrc -eq 0 ]
}
# the check sees a warning at all (here: an unknown key, rc stays 0)
mkdir "$tmp/bad"
awk '{ print } /^\[Service\]$/ { print "NoSuchDirective=yes" }' "$tmp/u/tandemd.service" \
	>"$tmp/bad/tandemd.service"
verify "$tmp/bad/tandemd.service" 2>/dev/null && fail "verify said nothing about an unknown key: the check sees no warnings"
for u in tandemd tandem-arbiterd; do
	verify "$tmp/u/$u.service" || { cat "$tmp/verify.out"; fail "systemd-analyze verify: $u.service"; }
	echo "ok: systemd-analyze verify: $u.service"
done

# security: the overall exposure, e.g. "-> Overall exposure level for
# tandemd.service: 2.5 OK :-)" (LC_ALL=C: ASCII; "+" marks a passed check)
for u in tandemd tandem-arbiterd; do
	systemd-analyze security --offline=true "$tmp/u/$u.service" >"$tmp/sec.out" 2>&1 ||
		{ cat "$tmp/sec.out"; fail "systemd-analyze security --offline=true $u.service failed"; }
	x=$(sed -n "s/.*Overall exposure level for $u\.service: \([0-9][0-9.]*\) .*/\1/p" "$tmp/sec.out")
	[ -n "$x" ] || { cat "$tmp/sec.out"; fail "$u.service: no overall exposure level in the output"; }
	awk -v x="$x" 'BEGIN { exit !(x < 4.0) }' ||
		{ grep -v '^+' "$tmp/sec.out"; fail "$u.service: exposure $x, not below 4.0"; }
	echo "ok: $u.service: exposure $x (below 4.0)"
done

# the writable directories are the daemons' defaults (their --help says them)
dflt() { "$1" --help | sed -n "s/.*--$2 DIR .*(default \(.*\))\$/\1/p"; }
rd=$(dflt "$TANDEMD" run-dir)
sd=$(dflt "$TANDEMD" state-dir)
ad=$(dflt "$arbiterd" run-dir)
[ "$rd $sd $ad" = "/run/tandem /var/lib/tandem /run/tandem" ] ||
	fail "default directories changed (run '$rd', state '$sd', arbiter '$ad'): update the units and this test"
want() { # UNIT KEY VALUE: the unit sets KEY= to VALUE
	[ "$(sed -n "s/^$2=//p" "$units/$1.service")" = "$3" ] || fail "$1.service: $2= is not '$3'"
}
want tandemd RuntimeDirectory tandem
want tandemd StateDirectory tandem
want tandemd ReadWritePaths "$rd $sd"
want tandem-arbiterd RuntimeDirectory tandem
want tandem-arbiterd ReadWritePaths "$ad"
# both units share /run/tandem: neither may remove it when it stops
for u in tandemd tandem-arbiterd; do
	want $u RuntimeDirectoryMode 0700
	want $u RuntimeDirectoryPreserve yes
done
echo "ok: writable: $rd $sd (tandemd), $ad (tandem-arbiterd), kept on stop"

#!/bin/sh
# Who may use an NBD export (doc/nbd-frontend.md, "Local clients"): root
# always; with options { nbd-allow-group G; } a client whose gid is G, or
# whose user is a member of G in the group database; anyone else is
# closed before the handshake and logged with its pid and uid. The socket
# is root:G 0660 with the option, root 0600 without; a group that does
# not exist is an error at load with its position.
. "$(dirname "$0")/functions.sh"
requires_root
requires setpriv
[ -x /usr/bin/nbdinfo ] || skip "nbdinfo is not installed"

# G: a group with a member in /etc/group whose own group is another one
# (that member is let in by the database); else nogroup (gid only)
member= group=
for line in $(getent group | awk -F: '$4 != "" { print $1 ":" $4 }'); do
	g=${line%%:*} u=${line#*:} u=${u%%,*}
	gid=$(getent group "$g" | cut -d: -f3)
	ugid=$(getent passwd "$u" | cut -d: -f4) || continue
	[ -n "$ugid" ] && [ "$ugid" != "$gid" ] && [ "$(id -u "$u")" != 0 ] || continue
	group=$g member=$u
	break
done
[ -n "$group" ] || group=nogroup
getent group "$group" >/dev/null || skip "no group to test with (nogroup is missing)"
getent passwd nobody >/dev/null || skip "there is no user nobody"
gid=$(getent group "$group" | cut -d: -f3)
nobody_gid=$(id -g nobody)
[ "$nobody_gid" != "$gid" ] || skip "nobody's own group is $group"

new_image "$tmp/d.img" 64M
write_conf "$tmp/t.conf" "$tmp/d.img" internal
# a group that does not exist: refused at load, with its position
printf 'common { options { nbd-allow-group tandem-no-such-group; } }\n' >"$tmp/bad.conf"
cat "$tmp/t.conf" >>"$tmp/bad.conf"
"$TANDEMADM" -c "$tmp/bad.conf" --node alice dump >/dev/null 2>"$tmp/bad.err" &&
	fail "a missing nbd-allow-group was accepted"
grep -q "bad.conf:1:.*no group 'tandem-no-such-group'" "$tmp/bad.err" ||
	{ cat "$tmp/bad.err"; fail "no positioned error for a missing group"; }

sed "s/^resource r0 {/resource r0 {\n\toptions { nbd-allow-group $group; }/" "$tmp/t.conf" >"$tmp/g.conf"
mv "$tmp/g.conf" "$tmp/t.conf"
adm create-md --force r0 >/dev/null
# the clients below must reach the socket: the run directory searchable
chmod 0711 "$tmp"
mkdir -m 0711 "$rundir"
start_tandemd
ctl up r0 && ctl primary --force r0 || fail "up/primary"
sock=$rundir/r0.nbd
[ "$(stat -c '%a %U %g' "$sock")" = "660 root $gid" ] ||
	fail "socket is $(stat -c '%a %U %g' "$sock"), not 660 root $gid"

# as_user SETPRIV-ARGS...: nbdinfo --size as another user; its output
as_user() { setpriv "$@" -- /usr/bin/nbdinfo --size "$(nbd_uri)" 2>&1; }
size=$(/usr/bin/nbdinfo --size "$(nbd_uri)") && [ "$size" -gt 0 ] || fail "root is not served"
echo "ok: root is served"

out=$(as_user --reuid=nobody --regid=$nobody_gid --groups=$gid) &&
	fail "nobody, with $group only in its process's groups, was served: $out"
wait_grep "$tmp/tandemd.log" "NBD connection from pid [0-9]+ \(uid $(id -u nobody), gid $nobody_gid\) refused: neither root nor a member of nbd-allow-group"
echo "ok: a user not in $group (in the database) is refused and logged"

out=$(as_user --reuid=nobody --regid=$gid --clear-groups) && [ "$out" = $size ] ||
	fail "a client with gid $group is not served: $out"
echo "ok: a client whose gid is $group is served"

if [ -n "$member" ]; then
	out=$(as_user --reuid="$member" --regid=$nobody_gid --init-groups) && [ "$out" = $size ] ||
		fail "$member, a member of $group, is not served: $out"
	echo "ok: $member, a member of $group in the group database, is served"
else
	skip_part "no group with a member whose own group differs: supplementary membership"
fi

# without the option: root only, mode 0600, from the next promotion
sed -i "/nbd-allow-group/d" "$tmp/t.conf"
ctl secondary r0 && ctl adjust r0 && ctl primary r0 || fail "secondary/adjust/primary"
[ "$(stat -c '%a %U' "$sock")" = "600 root" ] || fail "socket is $(stat -c '%a %U' "$sock")"
out=$(as_user --reuid=nobody --regid=$gid --clear-groups) && fail "served without the option: $out"
[ "$(/usr/bin/nbdinfo --size "$(nbd_uri)")" = $size ] || fail "root is not served"
echo "ok: without nbd-allow-group the socket is root's, 0600, and others are refused"
ctl down --force r0

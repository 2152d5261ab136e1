#!/bin/sh
# TLS between the two nodes (doc/wire-protocol.md §5.6, doc/security.md §5).
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdcopy
command -v openssl >/dev/null 2>&1 || skip "openssl (the tool) is not installed"

sh "$(dirname "$0")/tls-certs.sh" "$tmp/pki" alice bob mallory other/bob
# one configuration per node: the same paths hold each node's own files
tls_conf() { # tls_conf FILE NODE-CERT-PREFIX
	write_repl_conf "$1" "protocol C; tls yes; tls-ca $tmp/pki/ca.pem; tls-certificate $tmp/pki/$2.pem; tls-key $tmp/pki/$2.key;"
}
new_image "$tmp/a.img" 64M
new_image "$tmp/b.img" 64M
tls_conf "$tmp/a.conf" alice
tls_conf "$tmp/b.conf" bob
conf_of=$tmp/a.conf on a create-md --force r0 >/dev/null
conf_of=$tmp/b.conf on b create-md --force r0 >/dev/null
start_node a "$tmp/a.conf"
start_node b "$tmp/b.conf"
conf_of=$tmp/a.conf on a up r0
conf_of=$tmp/b.conf on b up r0
wait_for a connection Connected
wait_for b connection Connected
grep 'connected to' "$tmp/tandemd-a.log" "$tmp/tandemd-b.log"
conf_of=$tmp/a.conf on a primary --force r0
wait_for b disk UpToDate
head -c 16M /dev/urandom >"$tmp/src"
nbdcopy "$tmp/src" "$(nbd_uri_of a)"
same_data "after 16 MiB of writes over TLS"
echo "ok: TLS connection, full sync and 16 MiB of writes"

#!/bin/sh
# tls-certs.sh DIR NAME...: a test CA in DIR (ca.pem, ca.key) and, for each
# NAME, NAME.pem and NAME.key: a certificate the CA signed for host NAME
# (subjectAltName DNS:NAME, usable as TLS server and client, as a tandem
# node's must be; doc/security.md §5). A NAME of the form OTHER/NAME
# signs NAME with a second CA, DIR/OTHER-ca.pem, made on first use; its
# files are OTHER-NAME.pem and OTHER-NAME.key. Used by the unit and
# integration tests; an operator can read it as a recipe.
set -eu
dir=$1
shift
mkca() { # mkca PREFIX CN
	[ -f "$dir/$1ca.pem" ] && return 0
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
		-subj "/CN=$2" -keyout "$dir/$1ca.key" -out "$dir/$1ca.pem" 2>/dev/null
}
mkdir -p "$dir"
mkca "" "tandem test CA"
for n in "$@"; do
	case $n in
	*/*) pfx=${n%%/*}-; n=${n#*/}; mkca "$pfx" "tandem test CA $pfx" ;;
	*) pfx= ;;
	esac
	printf '%s\n' "subjectAltName=DNS:$n" "basicConstraints=CA:FALSE" \
		"keyUsage=digitalSignature" "extendedKeyUsage=serverAuth,clientAuth" >"$dir/$pfx$n.ext"
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$n" \
		-keyout "$dir/$pfx$n.key" -out "$dir/$pfx$n.csr" 2>/dev/null
	openssl x509 -req -days 3650 -in "$dir/$pfx$n.csr" -CA "$dir/${pfx}ca.pem" \
		-CAkey "$dir/${pfx}ca.key" -CAcreateserial -extfile "$dir/$pfx$n.ext" \
		-out "$dir/$pfx$n.pem" 2>/dev/null
	chmod 600 "$dir/$pfx$n.key"
	rm -f "$dir/$pfx$n.csr" "$dir/$pfx$n.ext"
done

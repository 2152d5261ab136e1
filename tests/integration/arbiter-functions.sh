# shellcheck shell=sh
# A fake tandem-arbiterd for the tests of its clients (sourced after
# functions.sh): fake-arbiter.py listens on DIR/arbiter.sock and answers
# what $tmp/scenario.json says; the requests it got are in $tmp/arb.log.
# It is a stand-in for one module's tests, not the arbiter.
requires python3
fake_arbiter_py=$(cd "$(dirname "$0")" && pwd)/fake-arbiter.py

# scenario JSON: the answers from now on; the request log starts empty
scenario() {
	printf '%s\n' "$1" >"$tmp/scenario.json"
	: >"$tmp/arb.log"
}

# start_fake DIR: the fake on DIR/arbiter.sock; stopped on exit
start_fake() {
	mkdir -p "$1"
	[ -f "$tmp/scenario.json" ] || scenario '{}'
	python3 "$fake_arbiter_py" "$1/arbiter.sock" "$tmp/scenario.json" "$tmp/arb.log" \
		2>"$tmp/fake-arbiter.err" &
	fake_pid=$!
	fake_sock=$1/arbiter.sock
	wait_until 20 "the fake arbiter listens on $fake_sock" test -S "$fake_sock"
}

stop_fake() {
	[ -n "${fake_pid:-}" ] || return 0
	kill -TERM "$fake_pid" 2>/dev/null || true
	wait "$fake_pid" 2>/dev/null || true
	fake_pid=
	rm -f "$fake_sock"
}
cleanup_hooks="$cleanup_hooks stop_fake"

# asked CMD: how many CMD requests the fake got since the last scenario
asked() {
	python3 -c 'import json,sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get("cmd") == sys.argv[2]))' \
		"$tmp/arb.log" "$1"
}

# request_field CMD FIELD: FIELD of the last CMD request ("" if none)
request_field() {
	python3 -c 'import json,sys
v = ""
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("cmd") == sys.argv[2]:
        v = r.get(sys.argv[3], "")
print(v)' "$tmp/arb.log" "$1" "$2"
}

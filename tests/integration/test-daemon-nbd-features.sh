#!/bin/sh
# The NBD front end's negotiated features (doc/nbd-frontend.md) against
# libnbd 1.14's real clients on a StandAlone Primary: structured replies
# (nbdinfo, nbdsh: one data chunk per READ, DF, errors as error chunks
# with a message, the connection still usable after them).
. "$(dirname "$0")/functions.sh"
requires nbdinfo
requires nbdcopy
[ -x /usr/bin/nbdsh ] || skip "nbdsh is not installed (python3-libnbd)"

new_image "$tmp/d.img" 256M
write_conf "$tmp/t.conf" "$tmp/d.img" internal
adm create-md --force r0 >/dev/null
start_tandemd
ctl up r0 || fail "up"
ctl primary --force r0 || fail "primary --force"
[ "$(ctl role r0)" = "Primary/Unknown" ] || fail "role: $(ctl role r0)"
uri=$(nbd_uri)

# ---------------------------------------------------------------- structured replies
nbdinfo --can structured-reply "$uri" || fail "nbdinfo: no structured replies"
nbdinfo --json "$uri" >"$tmp/info" || fail "nbdinfo --json"
grep -q '"structured": true' "$tmp/info" || { cat "$tmp/info"; fail "nbdinfo: structured"; }
grep -q '"can_df": true' "$tmp/info" || { cat "$tmp/info"; fail "nbdinfo: can_df"; }
echo "ok: nbdinfo: structured replies, can_df"

# Reads come as one OFFSET_DATA chunk at the request's offset; an error is
# an error chunk whose message names the request and why (libnbd logs it
# in its debug output); the connection serves on after it. Strict mode off:
# libnbd would refuse the bad requests itself.
nbdsh_ -u "$uri" -c '
import errno, os
msgs = []
h.set_debug(True)
h.set_debug_callback(lambda ctx, msg: msgs.append(msg))
h.set_strict_mode(0)
assert h.get_structured_replies_negotiated()
size = h.get_size()
buf = os.urandom(65536)
h.pwrite(buf, 1048576)
chunks = []
def chunk(data, offset, status, err):
    chunks.append((bytes(data), offset, status))
    return 0
got = h.pread_structured(65536, 1048576, chunk)
assert got == buf, "pread_structured data"
assert len(chunks) == 1, "chunks: %d" % len(chunks)
assert chunks[0][0] == buf and chunks[0][1] == 1048576, "chunk offset %d" % chunks[0][1]
assert chunks[0][2] == nbd.READ_DATA, "chunk type %d" % chunks[0][2]
assert h.pread(4096, 1048576 + 4096, nbd.CMD_FLAG_DF) == buf[4096:8192], "DF read"
def refused(what, f, want):
    del msgs[:]
    try:
        f()
    except nbd.Error as e:
        # e.errno is the name (EINVAL), e.errnum the number
        if e.errnum != want:
            raise SystemExit("%s: errno %s (%s), want %d" % (what, e.errno, e.errnum, want))
    else:
        raise SystemExit("%s was accepted" % what)
    said = [m for m in msgs if "server message" in m]
    if not said:
        raise SystemExit("%s: no error message from the server in %s" % (what, msgs))
    print("%s: %s" % (what, said[0]))
    return said[0]
m = refused("read past the end", lambda: h.pread(4096, size), errno.EINVAL)
assert "NBD_CMD_READ offset %d length 4096 refused: offset + length is beyond" % size in m, m
m = refused("read of 0 bytes", lambda: h.pread(0, 0), errno.EINVAL)
assert "length is 0" in m, m
m = refused("write past the end", lambda: h.pwrite(b"x" * 512, size - 256), errno.ENOSPC)
assert "NBD_CMD_WRITE" in m and "beyond" in m, m
m = refused("read with REQ_ONE", lambda: h.pread(512, 0, nbd.CMD_FLAG_REQ_ONE), errno.EINVAL)
assert "not valid for this command" in m, m
assert h.pread(65536, 1048576) == buf, "read after the errors"
h.shutdown()
' >"$tmp/sr.out" 2>&1 || { cat "$tmp/sr.out"; fail "nbdsh: structured reads and errors"; }
cat "$tmp/sr.out"
echo "ok: nbdsh: a READ is one data chunk (DF too); errors are chunks with the request and reason"

# a client without structured replies still gets simple replies
URI=$uri nbdsh_ -c '
import os
h.set_request_structured_replies(False)
h.connect_uri(os.environ["URI"])
assert not h.get_structured_replies_negotiated()
assert not h.can_df()
buf = os.urandom(4096)
h.pwrite(buf, 8192)
assert h.pread(4096, 8192) == buf
h.shutdown()
' || fail "nbdsh: simple replies"
echo "ok: nbdsh: simple replies when not negotiated"

grep -q 'NBD request NBD_CMD_READ offset .* refused: offset + length is beyond' \
	"$tmp/tandemd.log" || fail "the refused read is not in the daemon's log"
ctl down r0 || fail "down"
echo "ok: down"

#!/usr/bin/env python3
"""wire-impostor: an attacker on tandem's replication port, for
test-repl-security.sh.

It speaks the setup phase of doc/wire-protocol.md (§3 framing, §5.1 the
P_HELLO exchange, §5.4 authentication version 2, §7.2 P_HELLO, §7.3
P_AUTH_CHALLENGE and P_AUTH_RESPONSE) on its own, from that page and not
from the C code, so that it checks the daemon against the document. Only
the Python standard library is used.

Every mode prints what it saw as "key=value" lines on stdout (local=IP:PORT
is the address the daemon sees and logs) and exits 0 when it could run its
attack, whatever the daemon answered: the test decides what the answer must
be. It exits 2 when it could not run (a connect failed, the daemon's
packets did not decode, ...), with the reason on stderr.

Modes (HOST:PORT is the daemon's replication address):
  hello HOST:PORT          a valid P_HELLO, then read until closed
  wrong-response HOST:PORT P_HELLO, P_AUTH_CHALLENGE, a made-up response
  auth HOST:PORT           with --secret: authenticate the data and the meta
                           socket as the initiator (the positive control of
                           the encodings), then hang up
  reflect HOST:PORT HOST:PORT  two attempts on two resources (--res, --res2)
                           whose challenges are swapped, waiting for the
                           daemon to answer one so that it can be relayed
                           into the other
  capture LISTEN:PORT      be the acceptor the daemon connects to, record the
                           daemon's P_AUTH_RESPONSE (the initiator's proof)
                           in --out, then hang up
  relay HOST:PORT          as initiator, present a captured response (--in)
                           on a new attempt with the captured conn_id (into
                           another resource: a relay; into the same one: a
                           replay)
  meta-relay HOST:PORT     a data socket with the captured conn_id left
                           unproved, then a meta socket of that conn_id that
                           presents the captured data-socket response
  stall HOST:PORT          the 16 header bytes of a P_HELLO, then silence
  garbage HOST:PORT        random bytes instead of a P_HELLO
  burst HOST:PORT          --count connections as fast as the daemon closes
                           them, for at most --seconds
  flood HOST:PORT          a new connection every --interval s, for at most
                           --seconds (or --count), each as far as one gets
                           without the secret (a P_HELLO and a challenge),
                           then silent and kept open; prints flooding=yes
                           once --full of them are open
"""
import argparse
import hashlib
import hmac
import json
import os
import select
import socket
import struct
import sys
import time

# §3 framing
MAGIC = 0x544E444D  # "TNDM"
HDR = struct.Struct(">IHHII")  # magic, type, volume, length, flags
VOL_NONE = 0xFFFF
HF_IGNORABLE = 1 << 0
# §7.1 types
P_HELLO, P_AUTH_CHALLENGE, P_AUTH_RESPONSE = 1, 2, 3
TYPE_NAMES = {P_HELLO: "P_HELLO", P_AUTH_CHALLENGE: "P_AUTH_CHALLENGE",
              P_AUTH_RESPONSE: "P_AUTH_RESPONSE"}
# §7.2 P_HELLO
HELLO_LEN = 280
HELLO_AUTH, HELLO_DUPLICATE, HELLO_AUTH_V2 = 1 << 0, 1 << 1, 1 << 2
STREAM_DATA, STREAM_META = 1, 2
# features of §4 a version 1 node may announce (any bits are legal)
FEATURES = 0x1FF
# §7.3
CHALLENGE_PKT_LEN = 128
CHALLENGE_LEN = 64
# §5.4 M(sender)
TAG = b"tandem-auth-v2"
ROLE_INITIATOR, ROLE_ACCEPTOR = 1, 2

HASHES = {"md5": hashlib.md5, "sha1": hashlib.sha1, "sha224": hashlib.sha224,
          "sha256": hashlib.sha256, "sha384": hashlib.sha384, "sha512": hashlib.sha512}


class Failed(Exception):
    """The attack could not be carried out (not: the daemon refused it)."""


class Closed(Exception):
    """The daemon closed the socket (EOF or reset)."""


def out(key, value):
    if isinstance(value, bool):
        value = "yes" if value else "no"
    print("%s=%s" % (key, value), flush=True)


def strfield(s, n):
    b = s.encode("ascii")
    if not 0 < len(b) <= n:
        raise Failed("bad name %r" % s)
    return b + b"\0" * (n - len(b))


def unstr(b):
    return b.split(b"\0", 1)[0].decode("ascii", "replace")


def header(ptype, length, volume=VOL_NONE, flags=0):
    return HDR.pack(MAGIC, ptype, volume, length, flags)


def hello(stream, conn_id, node, res, auth=True, flags=0):
    """P_HELLO (§7.2) with header."""
    if auth:
        flags |= HELLO_AUTH | HELLO_AUTH_V2
    body = struct.pack(">HHBBHQQ", 1, 1, stream, flags, 0, FEATURES, conn_id)
    body += strfield(node, 128) + strfield(res, 128)
    assert len(body) == HELLO_LEN
    return header(P_HELLO, len(body)) + body


def challenge_pkt(alg, chal):
    body = strfield(alg, 64) + chal
    assert len(body) == CHALLENGE_PKT_LEN
    return header(P_AUTH_CHALLENGE, len(body)) + body


def response_pkt(resp):
    return header(P_AUTH_RESPONSE, len(resp)) + resp


def lp(name):
    b = name.encode("ascii")
    return bytes([len(b)]) + b


def auth_msg(purpose, role, conn_id, res, initiator, acceptor, got, sent):
    """M(sender) of §5.4: got is the challenge the sender received, sent the
    one it sent."""
    return (TAG + bytes([purpose, role]) + struct.pack(">Q", conn_id) + lp(res) +
            lp(initiator) + lp(acceptor) + got + sent)


def new_challenge():
    c = os.urandom(CHALLENGE_LEN)
    while not any(c):
        c = os.urandom(CHALLENGE_LEN)
    return c


class Conn:
    """One socket, packets in and out, everything received remembered."""

    def __init__(self, sock):
        self.s = sock
        self.buf = b""
        self.types = []  # every packet type received, in order
        self.nbytes = 0

    @property
    def local(self):
        h, p = self.s.getsockname()[:2]
        return "%s:%d" % (h, p)

    def send(self, data):
        try:
            self.s.sendall(data)
        except OSError as e:
            raise Closed("send: %s" % e)

    def _fill(self, n, deadline):
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("no data in time")
            self.s.settimeout(left)
            try:
                b = self.s.recv(65536)
            except ConnectionResetError:
                raise Closed("reset")
            if not b:
                raise Closed("eof")
            self.nbytes += len(b)
            self.buf += b

    def packet(self, timeout):
        """(type, volume, flags, payload); Closed, socket.timeout, Failed."""
        deadline = time.monotonic() + timeout
        self._fill(HDR.size, deadline)
        magic, ptype, vol, length, flags = HDR.unpack(self.buf[:HDR.size])
        if magic != MAGIC or flags & ~HF_IGNORABLE:
            raise Failed("the daemon sent a bad header: %s" % self.buf[:16].hex())
        if length > 4096:
            raise Failed("the daemon sent a header with length %d" % length)
        self._fill(HDR.size + length, deadline)
        payload = self.buf[HDR.size:HDR.size + length]
        self.buf = self.buf[HDR.size + length:]
        self.types.append(ptype)
        return ptype, vol, flags, payload

    def expect(self, want, timeout):
        ptype, vol, _, payload = self.packet(timeout)
        if ptype != want:
            raise Failed("expected %s, got type %d" % (TYPE_NAMES[want], ptype))
        if vol != VOL_NONE:
            raise Failed("%s with volume %d" % (TYPE_NAMES[want], vol))
        return payload

    def drain(self, timeout):
        """Read packets until the daemon closes: 'eof', 'reset' or 'open'
        (still open after timeout). Bytes that are no packet end it too."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.packet(max(0.0, deadline - time.monotonic()))
            except Closed as e:
                return str(e)
            except socket.timeout:
                return "open"

    def got(self, ptype):
        return ptype in self.types

    def close(self):
        self.s.close()


def addr(text):
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError("expected IP:PORT, got %r" % text)
    return host, int(port)


def connect(a, target):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if a.bind:
        s.bind((a.bind, 0))
    s.settimeout(a.timeout)
    try:
        s.connect(target)
    except OSError as e:
        s.close()
        raise Failed("connect to %s:%d: %s" % (target[0], target[1], e))
    return Conn(s)


def parse_hello(payload):
    pmin, pmax, stream, flags, rsv, feat, conn_id = struct.unpack(">HHBBHQQ", payload[:24])
    return {"proto_min": pmin, "proto_max": pmax, "stream": stream, "flags": flags,
            "reserved": rsv, "features": feat, "conn_id": conn_id,
            "node": unstr(payload[24:152]), "res": unstr(payload[152:280])}


def check_daemon_hello(h, stream, conn_id, a, res):
    """The daemon's P_HELLO must be what §5.1 step 2 says; otherwise our
    encoding (or the daemon) is off and the attack proves nothing."""
    if h["flags"] & HELLO_DUPLICATE:
        raise Failed("the daemon answered with WIRE_HELLO_DUPLICATE")
    want = {"stream": stream, "conn_id": conn_id, "node": a.peer_node, "res": res,
            "flags": HELLO_AUTH | HELLO_AUTH_V2, "reserved": 0}
    for k, v in want.items():
        if h[k] != v:
            raise Failed("the daemon's P_HELLO has %s=%r, expected %r" % (k, h[k], v))
    if not 1 <= h["proto_min"] <= 1 <= h["proto_max"]:
        raise Failed("the daemon speaks versions %d..%d" % (h["proto_min"], h["proto_max"]))


def parse_challenge(a, payload):
    if len(payload) != CHALLENGE_PKT_LEN:
        raise Failed("P_AUTH_CHALLENGE of %d bytes" % len(payload))
    alg = unstr(payload[:64])
    if alg != a.alg:
        raise Failed("the daemon uses cram-hmac-alg %s" % alg)
    return payload[64:]


def initiate(a, target, res, conn_id, stream=STREAM_DATA):
    """Connect as initiator: our P_HELLO, the daemon's P_HELLO and
    P_AUTH_CHALLENGE. (conn, daemon's challenge)."""
    c = connect(a, target)
    out("local" if stream == STREAM_DATA else "local_meta", c.local)
    c.send(hello(stream, conn_id, a.node, res))
    h = parse_hello(c.expect(P_HELLO, a.timeout))
    check_daemon_hello(h, stream, conn_id, a, res)
    chal = parse_challenge(a, c.expect(P_AUTH_CHALLENGE, a.timeout))
    return c, chal


def mac(a, msg):
    return hmac.new(a.secret.encode(), msg, HASHES[a.alg]).digest()


def resp_len(a):
    return HASHES[a.alg]().digest_size


def random_conn_id():
    return struct.unpack(">Q", os.urandom(8))[0] or 1


# ------------------------------------------------------------------ modes

def m_hello(a):
    """A valid P_HELLO: a node from a foreign address is closed before it
    is read, so it never answers with its own P_HELLO."""
    c = connect(a, a.target)
    out("local", c.local)
    try:
        c.send(hello(STREAM_DATA, random_conn_id(), a.node, a.res))
        how = c.drain(a.timeout)
    except Closed as e:
        how = str(e)
    except Failed:
        how = "bytes"
    out("closed", how)
    out("received_bytes", c.nbytes)
    out("got_hello", c.got(P_HELLO))


def m_wrong_response(a):
    c, chal = initiate(a, a.target, a.res, random_conn_id())
    mine = new_challenge()
    c.send(challenge_pkt(a.alg, mine))
    c.send(response_pkt(os.urandom(resp_len(a))))  # we know no secret
    out("closed", c.drain(a.timeout))
    out("got_response", c.got(P_AUTH_RESPONSE))


def prove(a, c, purpose, conn_id, res, theirs):
    """Initiator side of §5.4 version 2 with the secret; True if the
    daemon's answer verifies."""
    mine = new_challenge()
    c.send(challenge_pkt(a.alg, mine))
    # before our proof the acceptor sends nothing (§5.4 step 4)
    early = select.select([c.s], [], [], 0.3)[0]
    if early:
        out("early_bytes_%d" % purpose, True)
    c.send(response_pkt(mac(a, auth_msg(purpose, ROLE_INITIATOR, conn_id, res, a.node,
                                        a.peer_node, theirs, mine))))
    r = c.expect(P_AUTH_RESPONSE, a.timeout)
    want = mac(a, auth_msg(purpose, ROLE_ACCEPTOR, conn_id, res, a.node, a.peer_node,
                           mine, theirs))
    return hmac.compare_digest(r, want)


def m_auth(a):
    if not a.secret:
        raise Failed("auth needs --secret")
    conn_id = random_conn_id()
    d, chal = initiate(a, a.target, a.res, conn_id)
    out("data_ok", prove(a, d, STREAM_DATA, conn_id, a.res, chal))
    m, chal = initiate(a, a.target, a.res, conn_id, STREAM_META)
    out("meta_ok", prove(a, m, STREAM_META, conn_id, a.res, chal))
    m.close()
    d.close()


def m_reflect(a):
    """Two attempts, on --res at the first address and on --res2 at the
    second: each gets the other's challenge as ours, so that an answer to
    either (as DRBD's version 1 gives at once) would be the proof the other
    expects. Version 2's acceptor answers nothing before our proof."""
    ca, chal_a = initiate(a, a.target, a.res, random_conn_id())
    out("local_a", ca.local)
    cb, chal_b = initiate(a, a.target2, a.res2, random_conn_id())
    out("local_b", cb.local)
    ca.send(challenge_pkt(a.alg, chal_b))
    cb.send(challenge_pkt(a.alg, chal_a))
    # wait for an answer on either, shorter than the daemon's 4 x
    # ping-timeout for our response, so that a relay could still come in time
    deadline = time.monotonic() + a.wait
    got = {}
    while len(got) < 2 and time.monotonic() < deadline:
        r = select.select([ca.s, cb.s], [], [], deadline - time.monotonic())[0]
        for c, name in ((ca, "a"), (cb, "b")):
            if c.s in r and name not in got:
                try:
                    ptype, _, _, payload = c.packet(a.timeout)
                except (Closed, socket.timeout):
                    got[name] = None
                    continue
                if ptype == P_AUTH_RESPONSE:
                    got[name] = payload
    for c, name, other in ((ca, "a", "b"), (cb, "b", "a")):
        relayed = got.get(other)
        try:
            c.send(response_pkt(relayed if relayed else os.urandom(resp_len(a))))
        except Closed:
            pass
        out("relayed_into_%s" % name, bool(relayed))
    out("closed_a", ca.drain(a.timeout))
    out("closed_b", cb.drain(a.timeout))
    out("got_response_a", ca.got(P_AUTH_RESPONSE))
    out("got_response_b", cb.got(P_AUTH_RESPONSE))


def m_capture(a):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        ls.bind(a.target)
        ls.listen(4)
    except OSError as e:
        raise Failed("listen on %s:%d: %s" % (a.target[0], a.target[1], e))
    out("listening", True)
    ls.settimeout(a.timeout)
    try:
        s, peer = ls.accept()
    except socket.timeout:
        raise Failed("nobody connected in %s s" % a.timeout)
    ls.close()
    c = Conn(s)
    out("from", "%s:%d" % peer[:2])
    h = parse_hello(c.expect(P_HELLO, a.timeout))
    if h["stream"] != STREAM_DATA or not h["conn_id"]:
        raise Failed("the daemon's first P_HELLO: %r" % h)
    conn_id = h["conn_id"]
    check_daemon_hello(h, STREAM_DATA, conn_id, a, h["res"])
    c.send(hello(STREAM_DATA, conn_id, a.node, h["res"]))
    theirs = parse_challenge(a, c.expect(P_AUTH_CHALLENGE, a.timeout))
    mine = new_challenge()
    c.send(challenge_pkt(a.alg, mine))
    resp = c.expect(P_AUTH_RESPONSE, a.timeout)
    rec = {"conn_id": conn_id, "res": h["res"], "initiator": h["node"],
           "their_challenge": theirs.hex(), "our_challenge": mine.hex(), "response": resp.hex()}
    with open(a.out, "w") as f:
        json.dump(rec, f)
    out("captured", True)
    out("res", h["res"])
    if a.check_secret:
        # not part of the attack: shows that what was captured is the
        # daemon's genuine proof for this socket, so that its refusal
        # elsewhere is the binding at work and not garbage being refused
        want = hmac.new(a.check_secret.encode(),
                        auth_msg(STREAM_DATA, ROLE_INITIATOR, conn_id, h["res"], h["node"],
                                 a.node, mine, theirs), HASHES[a.alg]).digest()
        out("capture_valid", hmac.compare_digest(want, resp))
    c.close()  # we cannot answer: the daemon must not go on


def load_capture(a):
    with open(a.infile) as f:
        rec = json.load(f)
    return (rec["conn_id"], bytes.fromhex(rec["their_challenge"]),
            bytes.fromhex(rec["response"]))


def m_relay(a):
    """Present the captured response on a new attempt with the captured
    conn_id. Our challenge is the daemon's challenge of the capture, which
    puts it where the captured M had it (the challenge the sender sent)."""
    conn_id, their_old, resp = load_capture(a)
    c, chal = initiate(a, a.target, a.res, conn_id)
    c.send(challenge_pkt(a.alg, their_old))
    c.send(response_pkt(resp))
    out("closed", c.drain(a.timeout))
    out("got_response", c.got(P_AUTH_RESPONSE))


def m_meta_relay(a):
    """A data socket of the captured conn_id that we cannot prove, kept
    open; then a meta socket of that conn_id that offers the captured data
    socket's response. The daemon pairs a meta socket only with an
    authenticated data socket (§5.1 step 5), so it must never start (or
    answer) authentication on it."""
    conn_id, their_old, resp = load_capture(a)
    d, chal = initiate(a, a.target, a.res, conn_id)
    d.send(challenge_pkt(a.alg, new_challenge()))
    m = connect(a, a.target)
    out("local_meta", m.local)
    try:
        m.send(hello(STREAM_META, conn_id, a.node, a.res))
        t_end = time.monotonic() + a.timeout
        while True:
            ptype, _, _, payload = m.packet(max(0.0, t_end - time.monotonic()))
            if ptype == P_HELLO:
                h = parse_hello(payload)
                out("meta_hello_duplicate", bool(h["flags"] & HELLO_DUPLICATE))
            elif ptype == P_AUTH_CHALLENGE:
                m.send(challenge_pkt(a.alg, their_old))
                m.send(response_pkt(resp))
    except Closed as e:
        out("meta_closed", str(e))
    except socket.timeout:
        out("meta_closed", "open")
    out("meta_got_challenge", m.got(P_AUTH_CHALLENGE))
    out("meta_got_response", m.got(P_AUTH_RESPONSE))
    out("closed", d.drain(a.timeout))
    out("got_response", d.got(P_AUTH_RESPONSE))


def m_stall(a):
    c = connect(a, a.target)
    out("local", c.local)
    c.send(header(P_HELLO, HELLO_LEN))  # ... and the 280 bytes never come
    t0 = time.monotonic()
    out("stalled", True)
    how = c.drain(a.timeout)
    out("closed", how)
    out("closed_after", "%.2f" % (time.monotonic() - t0))


def m_garbage(a):
    c = connect(a, a.target)
    out("local", c.local)
    data = os.urandom(a.nbytes)
    if data[:4] == struct.pack(">I", MAGIC):
        data = b"X" + data[1:]
    try:
        c.send(data)
        how = c.drain(a.timeout)
    except Closed as e:
        how = str(e)
    except Failed:
        how = "bytes"
    out("closed", how)
    out("got_hello", c.got(P_HELLO))


def m_burst(a):
    t0 = time.monotonic()
    n = 0
    while n < a.count and time.monotonic() - t0 < a.seconds:
        c = connect(a, a.target)
        c.s.settimeout(a.timeout)
        try:
            while c.s.recv(4096):  # the daemon closes it: it dealt with it
                pass
        except OSError:
            pass
        c.close()
        n += 1
    out("connections", n)
    out("elapsed", "%.2f" % (time.monotonic() - t0))


def m_flood(a):
    conns = []
    t0 = time.monotonic()
    while len(conns) < a.count and time.monotonic() - t0 < a.seconds:
        try:
            c = connect(a, a.target)
            c.send(hello(STREAM_DATA, random_conn_id(), a.node, a.res))
            c.send(challenge_pkt(a.alg, new_challenge()))
        except (Failed, Closed, OSError):
            pass  # the daemon's backlog was full, or it closed one at once
        else:
            conns.append(c)
        if len(conns) == a.full:
            out("flooding", True)
        time.sleep(a.interval)  # the attack's pace, not a synchronisation
    closed = 0
    for c in conns:
        c.s.setblocking(False)
        try:
            while True:
                if not c.s.recv(65536):
                    closed += 1
                    break
        except BlockingIOError:
            pass  # still open
        except OSError:
            closed += 1
        c.close()
    out("opened", len(conns))
    out("closed_by_daemon", closed)


MODES = {"hello": m_hello, "wrong-response": m_wrong_response, "auth": m_auth,
         "reflect": m_reflect, "capture": m_capture, "relay": m_relay,
         "meta-relay": m_meta_relay, "stall": m_stall, "garbage": m_garbage,
         "burst": m_burst, "flood": m_flood}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=sorted(MODES))
    p.add_argument("target", type=addr, help="IP:PORT (capture: where to listen)")
    p.add_argument("target2", type=addr, nargs="?", help="reflect: the second resource")
    p.add_argument("--bind", help="source address of our connections")
    p.add_argument("--node", default="bob", help="the node name we claim")
    p.add_argument("--peer-node", default="alice", help="the daemon's node name")
    p.add_argument("--res", default="r0")
    p.add_argument("--res2", default="r1")
    p.add_argument("--alg", default="sha256", choices=sorted(HASHES))
    p.add_argument("--secret", default="", help="auth: the shared secret")
    p.add_argument("--check-secret", default="",
                   help="capture: verify the captured response (not used by the attack)")
    p.add_argument("--out", help="capture: file to record the exchange in")
    p.add_argument("--in", dest="infile", help="relay, meta-relay: a capture file")
    p.add_argument("--timeout", type=float, default=15.0,
                   help="seconds to wait for the daemon at each step")
    p.add_argument("--wait", type=float, default=1.0,
                   help="reflect: seconds to wait for an answer to relay")
    p.add_argument("--bytes", dest="nbytes", type=int, default=512)
    p.add_argument("--count", type=int, default=200)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--interval", type=float, default=0.02, help="flood: seconds between connections")
    p.add_argument("--full", type=int, default=16, help="flood: open connections for flooding=yes")
    a = p.parse_args()
    if a.mode == "reflect" and not a.target2:
        p.error("reflect needs two addresses")
    if a.mode == "capture" and not a.out or a.mode in ("relay", "meta-relay") and not a.infile:
        p.error("capture needs --out, relay and meta-relay --in")
    try:
        MODES[a.mode](a)
    except (Failed, Closed, socket.timeout) as e:
        print("wire-impostor %s: %s" % (a.mode, e or type(e).__name__), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A stand-in for tandem-arbiterd's local socket (doc/arbiter.md section 7),
to test its clients (tandemadm arbiter, tandem-fence-peer, wait-connect)
without corosync. It is not the arbiter: it answers what a scenario says.

    fake-arbiter.py SOCKET SCENARIO LOG

SCENARIO is a JSON file, read again for every request so that a test can
change it between runs: {"CMD": ANSWER, ...}. ANSWER is the object sent
back ("ok" defaults to true), or a list of them answered in turn (the
last one repeats). Two keys are the fake's own and are not sent:
"_delay_ms" waits that long before answering, "_close" closes the
connection without an answer. A command the scenario lacks gets
{"ok": false, "exit": 20, "error": "fake: no answer for CMD"}.

Every request is appended to LOG as one JSON line, so that a test can
check what a client sent (a "fenced" after a constraint, the fields of
fence-peer). It stops on SIGTERM.
"""
import json
import os
import signal
import socket
import socketserver
import sys
import threading
import time

sock_path, scenario_path, log_path = sys.argv[1:4]
turns = {}
lock = threading.Lock()


def answer_for(req):
    cmd = req.get("cmd", "")
    try:
        with open(scenario_path) as f:
            scenario = json.load(f)
    except (OSError, ValueError) as e:
        return {"ok": False, "exit": 20, "error": "fake: scenario: %s" % e}
    ans = scenario.get(cmd)
    if ans is None:
        return {"ok": False, "exit": 20, "error": "fake: no answer for %s" % cmd}
    if isinstance(ans, list):
        with lock:
            i = turns.get(cmd, 0)
            turns[cmd] = i + 1
        ans = ans[min(i, len(ans) - 1)]
    return dict(ans)


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            try:
                req = json.loads(line)
            except ValueError:
                req = {"cmd": "?", "bad": line.decode(errors="replace")}
            with lock:
                with open(log_path, "a") as f:
                    f.write(json.dumps(req, sort_keys=True) + "\n")
            ans = answer_for(req)
            delay = ans.pop("_delay_ms", 0)
            close = ans.pop("_close", False)
            if delay:
                time.sleep(delay / 1000.0)
            if close:
                return
            ans.setdefault("ok", True)
            try:
                self.wfile.write((json.dumps(ans) + "\n").encode())
                self.wfile.flush()
            except OSError:
                return


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main():
    try:
        os.unlink(sock_path)
    except FileNotFoundError:
        pass
    srv = Server(sock_path, Handler)
    os.chmod(sock_path, 0o600)

    def stop(signum, frame):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    srv.serve_forever(poll_interval=0.1)
    srv.server_close()
    try:
        os.unlink(sock_path)
    except FileNotFoundError:
        pass


main()

/*
 * arb-sock: tandem-arbiterd's local socket, RUNDIR/arbiter.sock
 * (doc/arbiter.md §7): newline-delimited JSON as tandemd's control socket,
 * root only (SO_PEERCRED). Each request line goes to the handler with the
 * id of its client; the answer may come at once or later (fence-peer
 * waits for the peer's arbiter), through arb_sock_reply(). A client that
 * left meanwhile is simply not answered.
 */
#ifndef TANDEM_ARB_SOCK_H
#define TANDEM_ARB_SOCK_H

#include <stdint.h>

#include <json-c/json.h>
#include <qb/qbloop.h>

#define ARB_SOCK_REQ_MAX (64 * 1024) /* a request line, its newline included */
#define ARB_SOCK_CLIENTS_MAX 64

struct arb_sock;

/* req is the handler's to keep or put. */
typedef void arb_sock_request_fn(void *ctx, uint64_t client, json_object *req);

/* Listen on run_dir/arbiter.sock (a stale socket file is replaced, a live
 * one is -EADDRINUSE: another arbiter runs). */
int arb_sock_new(qb_loop_t *loop, const char *run_dir, arb_sock_request_fn *fn, void *ctx,
		 struct arb_sock **out);
void arb_sock_free(struct arb_sock *s);

/* Send ans (taken) to client as one line. -ENOENT: the client left. */
int arb_sock_reply(struct arb_sock *s, uint64_t client, json_object *ans);
/* {"ok": false, "exit": code, "error": msg[, "hint": hint]} */
int arb_sock_error(struct arb_sock *s, uint64_t client, int code, const char *msg,
		   const char *hint);

#endif

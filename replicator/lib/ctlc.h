/*
 * ctlc: the client side of tandemd's control socket, RUN_DIR/tandemd.sock
 * (doc/control-protocol.md), for tandemadm, the OCF agent, the fence
 * handlers and the arbiter. Newline-delimited JSON read and written with
 * json-c: one request, one response; after an "events" request, one
 * event per ctlc_recv() until the daemon closes.
 *
 * Every wait has a deadline: an absolute time in milliseconds of
 * CLOCK_MONOTONIC (ctlc_deadline() makes one from a timeout), or
 * CTLC_FOREVER. A deadline bounds the waiting only: what is ready when it
 * has passed is still sent or returned.
 *
 * Functions return 0 or a negative errno:
 *   -ENOENT, -ECONNREFUSED  no daemon (no socket, or nobody listens on it);
 *                           ctlc_no_daemon() says so
 *   -ETIMEDOUT              the deadline passed
 *   -ECONNRESET             the daemon closed the connection before a
 *                           whole line (an answer cut off included)
 *   -EPROTO                 a line that is not one JSON object (the line
 *                           is consumed: the next line can be read)
 *   -EMSGSIZE               a line, sent or received, longer than
 *                           CTLC_LINE_MAX with its newline
 *   -ENAMETOOLONG           RUN_DIR/tandemd.sock is too long for a socket
 *   -ENOMEM, or the socket's errno (-EPIPE, -EACCES, ...)
 */
#ifndef TANDEM_CTLC_H
#define TANDEM_CTLC_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#define CTLC_SOCK_NAME "tandemd.sock"
#define CTLC_ARBITER_SOCK_NAME "arbiter.sock" /* tandem-arbiterd (doc/arbiter.md §7) */
#define CTLC_VERSION 1
/* The longest line either way, its newline included: the status of many
 * resources is one long line, and tandemd holds at most 4 MiB unread for
 * a client (doc/control-protocol.md). */
#define CTLC_LINE_MAX (4 * 1024 * 1024)
#define CTLC_FOREVER INT64_C(-1)

struct ctlc;

/* The deadline timeout_ms from now; CTLC_FOREVER if timeout_ms < 0. */
int64_t ctlc_deadline(int64_t timeout_ms);

/* Connect to RUN_DIR/tandemd.sock, waiting until the deadline while its
 * backlog is full. */
int ctlc_open(const char *run_dir, int64_t deadline, struct ctlc **out);
/* The same for another socket of RUN_DIR speaking this protocol, such as
 * tandem-arbiterd's arbiter.sock (CTLC_ARBITER_SOCK_NAME). */
int ctlc_open_sock(const char *run_dir, const char *name, int64_t deadline, struct ctlc **out);
void ctlc_close(struct ctlc *c);
/* The connection's socket, for a caller's poll loop (the event stream):
 * when it is readable, ctlc_recv() with the deadline ctlc_deadline(0)
 * returns the lines that arrived, then -ETIMEDOUT. */
int ctlc_fd(const struct ctlc *c);

/* Send req as one line; "v" is set to CTLC_VERSION when req lacks it. */
int ctlc_send(struct ctlc *c, json_object *req, int64_t deadline);
/* Receive the next line as a JSON object in *out (the caller puts it). */
int ctlc_recv(struct ctlc *c, int64_t deadline, json_object **out);
/* ctlc_send() and then ctlc_recv(). */
int ctlc_call(struct ctlc *c, json_object *req, int64_t deadline, json_object **out);
/* ctlc_open(), ctlc_call() and ctlc_close(): a request on a connection
 * of its own. */
int ctlc_request(const char *run_dir, json_object *req, int64_t deadline, json_object **out);
int ctlc_request_sock(const char *run_dir, const char *name, json_object *req, int64_t deadline,
		      json_object **out);

/* Whether rc means that no daemon listens (-ENOENT, -ECONNREFUSED). */
bool ctlc_no_daemon(int rc);
/* rc in words, for "cannot ask tandemd: ..." ("not running", "no answer
 * in time", ...; strerror() for the others). */
const char *ctlc_strerror(int rc);

#endif

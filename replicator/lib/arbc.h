/*
 * arbc: the client side of tandem-arbiterd's local socket,
 * RUN_DIR/arbiter.sock (doc/arbiter.md §7), for tandemadm, the OCF agent
 * and tandem-fence-peer. A request is one ctlc.h call on a connection of
 * its own; the answers are read here, by pure functions, into what the
 * clients decide on, so that every client reads them alike and the unit
 * test (tests/unit/test-arbc.c) checks them row by row.
 *
 * Every client falls back to what it does without an arbiter when the
 * socket is missing, or the arbiter does not answer within
 * ARBC_TIMEOUT_MS (fence-peer: within the deadline it gives), or answers
 * something this version does not know (doc/arbiter.md §8). Each decision
 * below then says "fallback" and why, in words for one log line.
 */
#ifndef TANDEM_ARBC_H
#define TANDEM_ARBC_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest wait for an answer but fence-peer's (doc/arbiter.md §7). */
#define ARBC_TIMEOUT_MS 5000
/* fence-peer: what the handler keeps of its --timeout for what follows
 * the answer (the constraint, the fenced message), and the least it
 * gives the arbiter. */
#define ARBC_FENCE_MARGIN_MS 3000
#define ARBC_FENCE_MIN_MS 1000
/* ... and how much longer than the deadline it gives the arbiter the
 * client waits for the answer (the arbiter answers at the deadline). */
#define ARBC_FENCE_SLACK_MS 2000

/* {"cmd": cmd, "res": res} (res may be NULL); NULL if out of memory. */
json_object *arbc_request(const char *cmd, const char *res);
/* One request on RUN_DIR/arbiter.sock, waiting at most timeout_ms for
 * the connection and the answer (*out, the caller puts it). 0 or a
 * negative errno as ctlc.h's; ctlc_no_daemon(rc): the arbiter is not
 * running. */
int arbc_call(const char *run_dir, json_object *req, int64_t timeout_ms, json_object **out);

/* ---------------------------------------------------------------- fence-peer */

enum arbc_fence_act {
	ARBC_FENCE_FALLBACK,   /* the CIB path, as without an arbiter */
	ARBC_FENCE_EXIT,       /* exit with `exit`; no constraint */
	ARBC_FENCE_CONSTRAINT, /* place the constraint, send fenced "constraint", exit 4 */
	ARBC_FENCE_STONITH,    /* the constraint, then the fencer; 7 confirmed, else 5 */
};

struct arbc_fence {
	enum arbc_fence_act act;
	int exit;	      /* the exit code of EXIT, CONSTRAINT (4), STONITH (7) */
	char why[512];	      /* the arbiter's why, or why the handler falls back */
	char peer[128];	      /* the peer's `on HOST` name, "" if not given */
	unsigned int peer_id; /* its corosync node id, 0 if not given */
};

/*
 * What tandem-fence-peer does with the answer to fence-peer (the table
 * of doc/arbiter.md §7): rc is arbc_call()'s, answer its answer (NULL if
 * rc < 0). An action with an exit code the table does not give it, an
 * unknown action, or a refusal ({"ok": false}) is a fallback: the
 * handler then does exactly what it did before.
 */
void arbc_fence_decide(int rc, json_object *answer, struct arbc_fence *out);
const char *arbc_fence_act_name(enum arbc_fence_act a);
/* The timeout_ms the handler asks the arbiter for: what is left of its
 * --timeout (timeout_s, elapsed_ms since it started) less
 * ARBC_FENCE_MARGIN_MS, at least ARBC_FENCE_MIN_MS. */
int64_t arbc_fence_timeout_ms(unsigned int timeout_s, int64_t elapsed_ms);
/* The seconds the fencer gets to confirm (stonith_api_kick()): what is
 * left of --timeout, at least 1. */
int arbc_stonith_timeout_s(unsigned int timeout_s, int64_t elapsed_ms);

/* ---------------------------------------------------------------- wfc */

/*
 * The startup timeout class from the answer to wfc, in tandemd's words
 * (`wfc_class` of its status: "default", "degraded", "peer-outdated"),
 * or NULL when the arbiter cannot decide (no answer, {"class": null},
 * an unknown class): the caller then uses tandemd's metadata flags. why
 * says which, for the log.
 */
const char *arbc_wfc_class(int rc, json_object *answer, char *why, size_t len);

/* ---------------------------------------------------------------- may-promote */

enum arbc_promote {
	ARBC_PROMOTE_ALLOW,   /* {"allow": true} */
	ARBC_PROMOTE_REFUSE,  /* {"allow": false, "why": ...}: retry, then fail */
	ARBC_PROMOTE_NO_VETO, /* no usable answer: no veto, as without an arbiter */
};

/* The answer to may-promote; why has the arbiter's reason (REFUSE) or
 * why there is no veto (NO_VETO). */
enum arbc_promote arbc_may_promote(int rc, json_object *answer, char *why, size_t len);

#endif

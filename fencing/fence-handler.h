/*
 * fence-handler: what tandem-fence-peer and tandem-unfence-peer share:
 * options (command line over environment over defaults), the per-resource
 * lock, this node's view of the resource (tandemd first, the handler
 * environment second) and the log lines tandemd picks up from stdout.
 */
#ifndef TANDEM_FENCE_HANDLER_H
#define TANDEM_FENCE_HANDLER_H

#include <stdbool.h>

#include "fence-ctl.h"
#include "fence-policy.h"

struct fence_handler_opts {
	const char *prog;
	const char *res;      /* --resource, DRBD_RESOURCE */
	const char *clone_id; /* --id, TANDEM_FENCE_CLONE: else found in the CIB */
	const char *role;     /* --role: else from the CIB's schema */
	const char *run_dir;  /* --run-dir, TANDEM_RUN_DIR, /run/tandem */
	char me[FENCE_POLICY_NAME_MAX];   /* --node, TANDEM_FENCE_NODE, uname -n */
	char peer[FENCE_POLICY_NAME_MAX]; /* --peer, DRBD_PEERS, DRBD_PEER */
	unsigned int timeout;             /* s: for the peer to become definite */
	unsigned int dc_timeout;          /* s: for a DC (and the CIB) to answer */
	unsigned int hickup;              /* s: for the replication link to recover */
	unsigned int lock_timeout;        /* s */
	bool unreachable_is_outdated;
	bool quiet;
	bool list;  /* --list: tandemadm fence-constraints (no resource needed) */
	bool clear; /* --clear: the same, removing the stale ones */
};

/* Parse options and environment. Returns -1 to go on, or the exit code
 * (0 after --help/--version, 1 on a usage error, with a message). */
int fence_handler_parse(struct fence_handler_opts *o, int argc, char **argv);
/* Take the lock of the resource (RUN_DIR/fence-RES.lock), waiting up to
 * lock_timeout; the descriptor, or -1 (a warning is printed: going on
 * without it is still safe, the CIB arbitrates). */
int fence_handler_lock(const struct fence_handler_opts *o);
/* This node's state of the resource: from tandemd if it answers, else
 * from the handler environment. Returns the source ("tandemd",
 * "environment") or NULL if neither knows (st->disk is then NONE). */
const char *fence_handler_local(const struct fence_handler_opts *o, struct fence_ctl_res *st);
/* "PROG: RES: message" on stdout (tandemd logs it). */
void fence_handler_say(const struct fence_handler_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Seconds since the first call (the handler's start). */
long long fence_handler_elapsed(void);
/* The same in milliseconds. */
long long fence_handler_elapsed_ms(void);
/* Name of a fence_disk, for messages. */
const char *fence_handler_disk_name(enum fence_disk d);

#endif

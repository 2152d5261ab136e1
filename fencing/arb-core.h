/*
 * arb-core: tandem-arbiterd itself (doc/arbiter.md). It ties corosync
 * (arb-corosync), the local tandemd (arb-local) and the local socket
 * (arb-sock) to the table of facts (arb-table) and the decision tables
 * (arb-policy): it publishes this node's facts, answers the peers'
 * OUTDATE_REQ, and answers the handlers and the agent.
 *
 * A decision takes effect when its message is delivered, never when it
 * is sent (§1): the arbiter's own messages come back through CPG like
 * everyone else's, and only then change the table.
 */
#ifndef TANDEM_ARB_CORE_H
#define TANDEM_ARB_CORE_H

#include <stdbool.h>

#include <qb/qbloop.h>

struct arb_core;

/* Connect to corosync, listen on run_dir/arbiter.sock, follow tandemd.
 * -ENOTCONN: corosync is not running; -EADDRINUSE: another arbiter. */
int arb_core_new(qb_loop_t *loop, const char *run_dir, struct arb_core **out);
/* Leave the group cleanly (the others see LEAVE, not PROCDOWN). */
void arb_core_free(struct arb_core *a);
/* corosync went away (the loop was stopped): exit non-zero. */
bool arb_core_failed(const struct arb_core *a);

#endif

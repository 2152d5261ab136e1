/*
 * arb-corosync: tandem-arbiterd's connection to corosync (doc/arbiter.md
 * §1): the CPG group `tandem-arbiter` (libcpg), the partition's quorum
 * (libquorum; libvotequorum for the flags), and the nodelist and token
 * timeout (libcmap). Everything corosync delivers comes back through the
 * ops, from the caller's libqb loop; nothing here decides anything.
 *
 * Multicasts are AGREED. corosync 3 has no flow control but
 * CS_ERR_TRY_AGAIN: a message it refuses waits here, in order, and is
 * sent again from a timer, so the loop never blocks on corosync.
 *
 * Functions return 0 or a negative errno; corosync's cs_error_t is
 * mapped (qb_to_cs_error's inverse: -EAGAIN, -ENOTCONN, -EEXIST, ...) and
 * logged with corosync's own name for it.
 */
#ifndef TANDEM_ARB_COROSYNC_H
#define TANDEM_ARB_COROSYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <qb/qbloop.h>

#include "arb-table.h"

#define ARB_COROSYNC_GROUP "tandem-arbiter"

struct arb_corosync;

struct arb_corosync_ops {
	/* a message of the group, the arbiter's own included, in agreed order */
	void (*deliver)(void *ctx, uint32_t nodeid, uint32_t pid, const void *msg, size_t len);
	/* the group's process membership changed (CPG confchg) */
	void (*group)(void *ctx, const struct arb_member *members, size_t n,
		      const struct arb_member *left, size_t n_left);
	/* the ring's node membership changed (CPG totem confchg) */
	void (*ring)(void *ctx, uint64_t ring_seq, const uint32_t *nodes, size_t n);
	/* the partition's quorum (libquorum) and the ring it is for, on every
	 * membership change and once at start */
	void (*quorum)(void *ctx, bool quorate, uint64_t ring_seq);
	/* corosync went away: the arbiter cannot go on (it exits; systemd
	 * restarts it after corosync) */
	void (*lost)(void *ctx, const char *why);
};

/* Connect to corosync (CPG, quorum, votequorum, cmap), add their fds to
 * loop, and join the group. -ENOTCONN: corosync is not running. */
int arb_corosync_new(qb_loop_t *loop, const struct arb_corosync_ops *ops, void *ctx,
		     struct arb_corosync **out);
void arb_corosync_free(struct arb_corosync *c);

uint32_t arb_corosync_nodeid(const struct arb_corosync *c);
/* totem.token as corosync runs it (runtime.config.totem.token, else
 * totem.token, else 1000), in ms. */
uint32_t arb_corosync_token_ms(struct arb_corosync *c);

/* Call fn for every node of cmap's nodelist: its id and its name
 * (nodelist.node.N.name, else ring0_addr, as Pacemaker reads it). */
int arb_corosync_nodelist(struct arb_corosync *c,
			  void (*fn)(void *arg, uint32_t nodeid, const char *name), void *arg);

/* votequorum's view, for `tandemadm arbiter`: "two_node", "qdevice",
 * "wait_for_all" flags, votes and expected votes; -ENOTCONN without it. */
struct arb_corosync_votes {
	bool two_node, qdevice, wait_for_all;
	uint32_t node_votes, total_votes, expected_votes, quorum;
};
int arb_corosync_votes(struct arb_corosync *c, struct arb_corosync_votes *out);

/* Multicast len bytes to the group (AGREED). Queued when corosync says
 * TRY_AGAIN; -ENOMEM when the queue is full (64 messages). */
int arb_corosync_mcast(struct arb_corosync *c, const void *msg, size_t len);

#endif

/*
 * arb-local: tandem-arbiterd's side of the local tandemd (doc/arbiter.md
 * §2, §8). It follows tandemd's event stream on RUNDIR/tandemd.sock and,
 * on every event (and every 2 s, for what changes without one), reads
 * `status` and turns each resource into its fact record. A record whose
 * facts changed goes to ops->facts; a resource that is no longer there to
 * ops->gone. When tandemd is not running, or stops, every known resource
 * is reported with up = 0 and the follower reconnects every 250 ms.
 *
 * It also carries the arbiter's few requests to tandemd: `outdate` for a
 * peer's OUTDATE_REQ, and the partition's quorum.
 *
 * Calls to tandemd are synchronous with a short deadline (2 s): tandemd
 * answers its control socket from its main loop, and the arbiter has
 * nothing better to do meanwhile than to wait for the facts it serves.
 */
#ifndef TANDEM_ARB_LOCAL_H
#define TANDEM_ARB_LOCAL_H

#include <stdbool.h>
#include <stdint.h>

#include <qb/qbloop.h>

#include "arbmsg.h"

struct arb_local;

/* What tandemd says about one resource: its fact record but for
 * since_ring, which the arbiter fills (it knows the ring), and tandemd's
 * primary_since in wall-clock seconds. */
struct arb_local_res {
	struct arbmsg_facts f;
	uint32_t primary_since_s; /* 0 while Secondary */
};

struct arb_local_ops {
	void (*facts)(void *ctx, const struct arb_local_res *r);
	void (*gone)(void *ctx, const char *res);
};

int arb_local_new(qb_loop_t *loop, const char *run_dir, const struct arb_local_ops *ops, void *ctx,
		  struct arb_local **out);
void arb_local_free(struct arb_local *l);

/* Whether the event stream is connected. */
bool arb_local_connected(const struct arb_local *l);
/* The last facts of res, -ENOENT if tandemd does not have it. */
int arb_local_get(const struct arb_local *l, const char *res, struct arb_local_res *out);
/* Call fn for every resource tandemd has. */
void arb_local_each(const struct arb_local *l, void (*fn)(void *arg, const struct arb_local_res *r),
		    void *arg);
/* Read status now and report what changed (after a local request). */
void arb_local_refresh(struct arb_local *l);

/*
 * `outdate RES` through tandemd, then the disk state after it in *disk.
 * 0 done; -EPERM tandemd refused (it is Primary, or connected); -ENOTCONN
 * tandemd is not reachable; another negative errno otherwise. why (len
 * bytes) gets tandemd's error line.
 */
int arb_local_outdate(struct arb_local *l, const char *res, uint8_t *disk, char *why, size_t len);
/* Tell tandemd the partition's quorum (`quorum`); -ENOTSUP from a tandemd
 * that does not know the request. */
int arb_local_quorum(struct arb_local *l, bool quorate);

#endif

/*
 * arb-core-int: what the files of tandem-arbiterd's core share: the
 * state of struct arb_core, and the helpers of arb-core.c that
 * arb-fence.c (fence-peer, §6.1) and arb-sb.c (split-brain verdicts,
 * §6.3) use. Private to those three files.
 */
#ifndef TANDEM_ARB_CORE_INT_H
#define TANDEM_ARB_CORE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>
#include <qb/qbloop.h>

#include "arb-core.h"
#include "arb-corosync.h"
#include "arb-local.h"
#include "arb-policy.h"
#include "arb-sock.h"
#include "arb-table.h"
#include "arbmsg.h"

#define ARB_PENDING_MAX 32
#define ARB_SINCE_MAX 256

/* A fence-peer request of a local handler, waiting for the peer's arbiter. */
struct arb_fence_req {
	bool used;
	uint64_t client;
	uint64_t req; /* OUTDATE_REQ's id */
	char res[ARBMSG_NAME_MAX + 1];
	char peer[ARBMSG_NAME_MAX + 1];
	uint32_t peer_id;
	enum arb_policy_ask ask;
	int answer;
	int64_t deadline; /* CLOCK_MONOTONIC ms */
};

/* A peer's OUTDATE_REQ that this node works on: tandemd refuses `outdate`
 * while it still sees the connection, which the peer lost first. */
struct arb_outdate_job {
	bool used;
	uint32_t requester;
	uint64_t req;
	char res[ARBMSG_NAME_MAX + 1];
	int64_t until, next;
};

/* primary_since's ring: the ring this arbiter was in when it first saw
 * the resource Primary since tandemd's primary_since (§2). */
struct arb_since {
	char res[ARBMSG_NAME_MAX + 1];
	uint32_t s;
	uint64_t ring;
};

/* Whether a local resource was last seen Connected with both disks
 * UpToDate: unfencing runs when it becomes so (§6.1). */
struct arb_insync {
	char res[ARBMSG_NAME_MAX + 1];
	bool in_sync;
};

/* A local tandemd's sb-verdict request (§6.3), until a verdict for its
 * pair of current UUIDs is delivered or its deadline passes. */
struct arb_sb_ask {
	bool used;
	bool decided; /* this arbiter multicast the verdict for it */
	uint64_t client;
	char res[ARBMSG_NAME_MAX + 1];
	uint64_t current, peer_current;
	enum sbpolicy asb[3];		     /* its tandemd's after-sb-0pri, 1pri, 2pri */
	char discard_node[ARBMSG_NAME_MAX + 1]; /* discard-node-NAME's NAME */
	int64_t deadline;
};

/* A delivered SB_VERDICT: the first one for a pair of UUIDs stands. */
struct arb_sb_verdict {
	bool used;
	uint32_t decider;
	uint64_t incarnation;
	struct arbmsg_sb_verdict v;
};

#define ARB_VERDICTS_MAX 16
#define ARB_NODES_MAX 32

/* When a node left the ring, as this arbiter saw it (wall clock): a
 * fencing that Pacemaker's fencer records after it counts (§6.4). */
struct arb_left {
	uint32_t id;
	int64_t at_s;
};

struct arb_core {
	qb_loop_t *loop;
	struct arb_corosync *cs;
	struct arb_local *local;
	struct arb_sock *sock;
	struct arb_table *t;
	uint32_t self;
	uint64_t incarnation, seq, next_req;
	bool joined, failed, quorate, quorum_told;
	/* quorum is only known for the ring of the last quorum notification:
	 * a node leaving or joining (CPG's NODEDOWN/NODEUP) or a later ring
	 * makes it unknown until the notification for the new ring comes
	 * (with a qdevice, after its poll: seconds later) */
	uint64_t quorum_ring;
	bool quorum_wait;
	uint64_t quorum_wait_ring; /* quorum_ring when quorum_wait was set */
	struct arb_fence_req fence[ARB_PENDING_MAX];
	struct arb_outdate_job jobs[ARB_PENDING_MAX];
	struct arb_since since[ARB_SINCE_MAX];
	size_t n_since;
	struct arb_insync insync[ARB_SINCE_MAX];
	size_t n_insync;
	qb_loop_timer_handle tick;
	struct arb_sb_ask sb_ask[ARB_PENDING_MAX];
	struct arb_sb_verdict verdicts[ARB_VERDICTS_MAX]; /* a ring, newest at next_verdict - 1 */
	size_t next_verdict;
	uint32_t ring_nodes[ARB_NODES_MAX]; /* the ring's members now */
	size_t n_ring;
	struct arb_left left[ARB_NODES_MAX];
	int64_t bad_logged; /* the last "dropped a message" line */
	unsigned int bad_quiet;
};

/* Whether quorate is known for the current membership. */
bool arb_core_quorum_known(const struct arb_core *a);
int64_t arb_core_now_ms(void);
uint64_t arb_core_wall_ms(void);
const char *arb_core_node_name(const struct arb_core *a, uint32_t id);
/* A message of this arbiter: header filled, body zero. */
void arb_core_header(struct arb_core *a, struct arbmsg *m, uint16_t type);
/* Encode and multicast m (its seq is set here); 0 or a negative errno. */
int arb_core_send(struct arb_core *a, struct arbmsg *m);
/* The local resource res, its peer's node id (0: not in the nodelist)
 * and the table's view of it; -ENOENT: tandemd does not have res. */
int arb_core_view(struct arb_core *a, const char *res, struct arb_local_res *lr, uint32_t *peer_id,
		  struct arb_view *v);
enum arb_policy_node arb_core_policy_node(const struct arb_view *v);
enum arb_policy_proc arb_core_policy_proc(const struct arb_view *v);
enum arb_policy_rec arb_core_policy_rec(const struct arb_view *v);
/* {"ok": true, "peer", "peer_id", "quorate"}: the start of an answer. */
json_object *arb_core_answer(struct arb_core *a, const struct arb_local_res *lr, uint32_t peer_id);

/* Publish lr's facts now, `changes` included (that alone does not
 * republish by itself). */
void arb_core_publish(struct arb_core *a, const struct arb_local_res *lr);

/* arb-fence.c */
void arb_fence_request(struct arb_core *a, uint64_t client, const char *res, json_object *req);
void arb_fence_redecide(struct arb_core *a);
void arb_fence_outdate_req(struct arb_core *a, const struct arbmsg *m);
void arb_fence_outdate_ack(struct arb_core *a, const struct arbmsg *m);
void arb_fence_tick(struct arb_core *a, int64_t now);

/* arb-sb.c */
void arb_sb_request(struct arb_core *a, uint64_t client, const char *res, json_object *req);
void arb_sb_delivered(struct arb_core *a, const struct arbmsg *m);
/* Answer, decide or expire the requests (after FACTS, a verdict, a tick). */
void arb_sb_step(struct arb_core *a);

#endif

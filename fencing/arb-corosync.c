/*
 * arb-corosync: CPG, quorum, votequorum and cmap for tandem-arbiterd.
 *
 * The loop follows corosync's test/testcpg.c: each library's fd in the
 * poll set, and CS_DISPATCH_ALL when it is readable. A dispatch that
 * fails means corosync is gone: ops->lost.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <corosync/cmap.h>
#include <corosync/corotypes.h>
#include <corosync/cpg.h>
#include <corosync/quorum.h>
#include <corosync/votequorum.h>

#include "arb-corosync.h"
#include "log.h"

#define QUEUE_MAX 64
#define RETRY_MS 100

struct queued {
	size_t len;
	unsigned char buf[ARBMSG_MAX_LEN];
};

struct arb_corosync {
	qb_loop_t *loop;
	const struct arb_corosync_ops *ops;
	void *ctx;
	cpg_handle_t cpg;
	quorum_handle_t quorum;
	votequorum_handle_t vq;
	cmap_handle_t cmap;
	bool have_cpg, have_quorum, have_vq, have_cmap;
	int cpg_fd, quorum_fd;
	uint32_t nodeid;
	bool lost;
	struct queued *queue; /* refused by TRY_AGAIN, oldest first */
	size_t n_queued;
	qb_loop_timer_handle retry;
	bool retry_armed;
};

static int cs_errno(cs_error_t e)
{
	switch (e) {
	case CS_OK:
		return 0;
	case CS_ERR_TRY_AGAIN:
	case CS_ERR_QUEUE_FULL:
		return -EAGAIN;
	case CS_ERR_EXIST:
		return -EEXIST;
	case CS_ERR_NOT_EXIST:
		return -ENOENT;
	case CS_ERR_NO_MEMORY:
		return -ENOMEM;
	case CS_ERR_ACCESS:
		return -EACCES;
	case CS_ERR_INVALID_PARAM:
		return -EINVAL;
	case CS_ERR_TOO_BIG:
		return -EMSGSIZE;
	default:
		return -ENOTCONN;
	}
}

static void lose(struct arb_corosync *c, const char *what, cs_error_t e)
{
	char why[160];

	if (c->lost)
		return;
	c->lost = true;
	snprintf(why, sizeof(why), "%s: %s", what, cs_strerror(e));
	c->ops->lost(c->ctx, why);
}

/* ---------------------------------------------------------------- CPG */

static struct arb_corosync *cpg_ctx(cpg_handle_t h)
{
	void *ctx = NULL;

	cpg_context_get(h, &ctx);
	return ctx;
}

static void on_deliver(cpg_handle_t h, const struct cpg_name *group, uint32_t nodeid,
		       uint32_t pid, void *msg, size_t len)
{
	struct arb_corosync *c = cpg_ctx(h);

	(void)group;
	c->ops->deliver(c->ctx, nodeid, pid, msg, len);
}

static struct arb_member *members_of(const struct cpg_address *a, size_t n)
{
	struct arb_member *m = calloc(n ? n : 1, sizeof(*m));
	size_t i;

	if (!m)
		return NULL;
	for (i = 0; i < n; i++) {
		m[i].nodeid = a[i].nodeid;
		m[i].pid = a[i].pid;
		m[i].reason = (enum arb_reason)a[i].reason;
	}
	return m;
}

static void on_confchg(cpg_handle_t h, const struct cpg_name *group,
		       const struct cpg_address *members, size_t n,
		       const struct cpg_address *left, size_t n_left,
		       const struct cpg_address *joined, size_t n_joined)
{
	struct arb_corosync *c = cpg_ctx(h);
	struct arb_member *m = members_of(members, n), *l = members_of(left, n_left);

	(void)group;
	(void)joined;
	(void)n_joined;
	if (!m || !l) {
		/* a membership we cannot hold is one we cannot trust: start over */
		free(m);
		free(l);
		lose(c, "out of memory in a membership change", CS_ERR_NO_MEMORY);
		return;
	}
	c->ops->group(c->ctx, m, n, l, n_left);
	free(m);
	free(l);
}

static void on_totem(cpg_handle_t h, struct cpg_ring_id ring, uint32_t n, const uint32_t *nodes)
{
	struct arb_corosync *c = cpg_ctx(h);

	c->ops->ring(c->ctx, ring.seq, nodes, n);
}

static int32_t on_cpg_fd(int32_t fd, int32_t revents, void *data)
{
	struct arb_corosync *c = data;
	cs_error_t e;

	(void)fd;
	(void)revents;
	e = cpg_dispatch(c->cpg, CS_DISPATCH_ALL);
	if (e != CS_OK && e != CS_ERR_TRY_AGAIN) {
		lose(c, "CPG dispatch", e);
		return -1; /* off the loop */
	}
	return 0;
}

/* ---------------------------------------------------------------- quorum */

static void on_quorum(quorum_handle_t h, uint32_t quorate, uint64_t ring_seq, uint32_t n,
		      uint32_t *view)
{
	const void *ctx = NULL;
	struct arb_corosync *c;

	(void)n;
	(void)view;
	quorum_context_get(h, &ctx);
	c = (struct arb_corosync *)ctx;
	c->ops->quorum(c->ctx, quorate != 0, ring_seq);
}

static int32_t on_quorum_fd(int32_t fd, int32_t revents, void *data)
{
	struct arb_corosync *c = data;
	cs_error_t e;

	(void)fd;
	(void)revents;
	e = quorum_dispatch(c->quorum, CS_DISPATCH_ALL);
	if (e != CS_OK && e != CS_ERR_TRY_AGAIN) {
		lose(c, "quorum dispatch", e);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- queue */

static int send_now(struct arb_corosync *c, const void *msg, size_t len)
{
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	cs_error_t e = cpg_mcast_joined(c->cpg, CPG_TYPE_AGREED, &iov, 1);

	return cs_errno(e);
}

static void arm_retry(struct arb_corosync *c);

static void on_retry(void *data)
{
	struct arb_corosync *c = data;
	size_t done = 0;
	int rc = 0;

	c->retry_armed = false;
	while (done < c->n_queued) {
		rc = send_now(c, c->queue[done].buf, c->queue[done].len);
		if (rc)
			break;
		done++;
	}
	memmove(c->queue, c->queue + done, (c->n_queued - done) * sizeof(*c->queue));
	c->n_queued -= done;
	if (rc && rc != -EAGAIN) {
		lose(c, "CPG multicast", CS_ERR_LIBRARY);
		return;
	}
	if (c->n_queued)
		arm_retry(c);
}

static void arm_retry(struct arb_corosync *c)
{
	if (c->retry_armed)
		return;
	if (qb_loop_timer_add(c->loop, QB_LOOP_MED, RETRY_MS * QB_TIME_NS_IN_MSEC, c, on_retry,
			      &c->retry) == 0)
		c->retry_armed = true;
}

int arb_corosync_mcast(struct arb_corosync *c, const void *msg, size_t len)
{
	int rc;

	if (len > ARBMSG_MAX_LEN)
		return -EMSGSIZE;
	if (c->lost)
		return -ENOTCONN;
	if (!c->n_queued) {
		rc = send_now(c, msg, len);
		if (rc != -EAGAIN)
			return rc;
	}
	if (c->n_queued == QUEUE_MAX) {
		log_err("arbiter: %d messages wait for corosync (TRY_AGAIN): dropping one",
			QUEUE_MAX);
		return -ENOMEM;
	}
	memcpy(c->queue[c->n_queued].buf, msg, len);
	c->queue[c->n_queued++].len = len;
	arm_retry(c);
	return 0;
}

/* ---------------------------------------------------------------- set-up */

static cpg_model_v1_data_t cpg_model = {
	.model = CPG_MODEL_V1,
	.cpg_deliver_fn = on_deliver,
	.cpg_confchg_fn = on_confchg,
	.cpg_totem_confchg_fn = on_totem,
	.flags = CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF,
};

static quorum_callbacks_t quorum_cbs = {.quorum_notify_fn = on_quorum};

static int setup_cpg(struct arb_corosync *c)
{
	struct cpg_name name;
	cs_error_t e;

	e = cpg_model_initialize(&c->cpg, CPG_MODEL_V1, (cpg_model_data_t *)&cpg_model, c);
	if (e != CS_OK) {
		log_err("arbiter: cannot connect to corosync's CPG: %s (is corosync running?)",
			cs_strerror(e));
		return -ENOTCONN;
	}
	c->have_cpg = true;
	e = cpg_local_get(c->cpg, &c->nodeid);
	if (e == CS_OK)
		e = cpg_fd_get(c->cpg, &c->cpg_fd);
	if (e != CS_OK) {
		log_err("arbiter: CPG: %s", cs_strerror(e));
		return cs_errno(e);
	}
	name.length = (uint32_t)strlen(ARB_COROSYNC_GROUP);
	memcpy(name.value, ARB_COROSYNC_GROUP, name.length);
	do
		e = cpg_join(c->cpg, &name);
	while (e == CS_ERR_TRY_AGAIN);
	if (e != CS_OK) {
		log_err("arbiter: cannot join the CPG group %s: %s%s", ARB_COROSYNC_GROUP,
			cs_strerror(e),
			e == CS_ERR_EXIST ? " (another tandem-arbiterd runs on this node?)" : "");
		return cs_errno(e);
	}
	return qb_loop_poll_add(c->loop, QB_LOOP_HIGH, c->cpg_fd, POLLIN, c, on_cpg_fd);
}

static int setup_quorum(struct arb_corosync *c)
{
	uint32_t type = 0;
	cs_error_t e = quorum_initialize(&c->quorum, &quorum_cbs, &type);

	if (e != CS_OK) {
		log_err("arbiter: cannot connect to corosync's quorum service: %s",
			cs_strerror(e));
		return -ENOTCONN;
	}
	c->have_quorum = true;
	quorum_context_set(c->quorum, c);
	if (type == QUORUM_FREE)
		log_warn("arbiter: corosync has no quorum provider: every partition counts as "
			 "quorate; configure quorum { provider: corosync_votequorum; }");
	e = quorum_trackstart(c->quorum, CS_TRACK_CURRENT | CS_TRACK_CHANGES);
	if (e == CS_OK)
		e = quorum_fd_get(c->quorum, &c->quorum_fd);
	if (e != CS_OK) {
		log_err("arbiter: quorum tracking: %s", cs_strerror(e));
		return cs_errno(e);
	}
	return qb_loop_poll_add(c->loop, QB_LOOP_HIGH, c->quorum_fd, POLLIN, c, on_quorum_fd);
}

int arb_corosync_new(qb_loop_t *loop, const struct arb_corosync_ops *ops, void *ctx,
		     struct arb_corosync **out)
{
	struct arb_corosync *c = calloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->queue = calloc(QUEUE_MAX, sizeof(*c->queue));
	if (!c->queue) {
		free(c);
		return -ENOMEM;
	}
	c->loop = loop;
	c->ops = ops;
	c->ctx = ctx;
	c->cpg_fd = c->quorum_fd = -1;
	if (cmap_initialize(&c->cmap) == CS_OK)
		c->have_cmap = true;
	else
		log_warn("arbiter: cannot read corosync's cmap: node names unknown");
	if (votequorum_initialize(&c->vq, NULL) == CS_OK)
		c->have_vq = true;
	rc = setup_cpg(c);
	if (rc == 0)
		rc = setup_quorum(c);
	if (rc) {
		arb_corosync_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void arb_corosync_free(struct arb_corosync *c)
{
	if (!c)
		return;
	if (c->retry_armed)
		qb_loop_timer_del(c->loop, c->retry);
	if (c->cpg_fd >= 0)
		qb_loop_poll_del(c->loop, c->cpg_fd);
	if (c->quorum_fd >= 0)
		qb_loop_poll_del(c->loop, c->quorum_fd);
	if (c->have_cpg)
		cpg_finalize(c->cpg); /* a clean leave: the others see LEAVE */
	if (c->have_quorum)
		quorum_finalize(c->quorum);
	if (c->have_vq)
		votequorum_finalize(c->vq);
	if (c->have_cmap)
		cmap_finalize(c->cmap);
	free(c->queue);
	free(c);
}

uint32_t arb_corosync_nodeid(const struct arb_corosync *c)
{
	return c->nodeid;
}

uint32_t arb_corosync_token_ms(struct arb_corosync *c)
{
	uint32_t v = 0;

	if (c->have_cmap &&
	    (cmap_get_uint32(c->cmap, "runtime.config.totem.token", &v) == CS_OK ||
	     cmap_get_uint32(c->cmap, "totem.token", &v) == CS_OK) &&
	    v > 0)
		return v;
	return 1000;
}

int arb_corosync_nodelist(struct arb_corosync *c,
			  void (*fn)(void *arg, uint32_t nodeid, const char *name), void *arg)
{
	char key[CMAP_KEYNAME_MAXLEN + 1];
	unsigned int i;

	if (!c->have_cmap)
		return -ENOTCONN;
	for (i = 0;; i++) {
		uint32_t id;
		char *name = NULL;

		snprintf(key, sizeof(key), "nodelist.node.%u.nodeid", i);
		if (cmap_get_uint32(c->cmap, key, &id) != CS_OK)
			break;
		snprintf(key, sizeof(key), "nodelist.node.%u.name", i);
		if (cmap_get_string(c->cmap, key, &name) != CS_OK) {
			snprintf(key, sizeof(key), "nodelist.node.%u.ring0_addr", i);
			if (cmap_get_string(c->cmap, key, &name) != CS_OK)
				name = NULL;
		}
		if (name)
			fn(arg, id, name);
		free(name);
	}
	return 0;
}

int arb_corosync_votes(struct arb_corosync *c, struct arb_corosync_votes *out)
{
	struct votequorum_info info;
	cs_error_t e;

	memset(out, 0, sizeof(*out));
	if (!c->have_vq)
		return -ENOTCONN;
	e = votequorum_getinfo(c->vq, c->nodeid, &info);
	if (e != CS_OK)
		return cs_errno(e);
	out->two_node = (info.flags & VOTEQUORUM_INFO_TWONODE) != 0;
	out->qdevice = (info.flags & VOTEQUORUM_INFO_QDEVICE_REGISTERED) != 0;
	out->wait_for_all = (info.flags & VOTEQUORUM_INFO_WAIT_FOR_ALL) != 0;
	out->node_votes = info.node_votes;
	out->total_votes = info.total_votes;
	out->expected_votes = info.node_expected_votes;
	out->quorum = info.quorum;
	return 0;
}

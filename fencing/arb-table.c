/*
 * arb-table: the arbiter's table of facts (doc/arbiter.md §1, §2).
 *
 * Clusters are small (two nodes for a tandem resource, a few more in the
 * ring), so nodes and records live in plain arrays searched in order.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arb-table.h"
#include "state.h"

struct node {
	uint32_t id;
	char name[ARBMSG_NAME_MAX + 1]; /* "" until cmap names it */
	bool in_ring, in_group, fenced;
	bool seen_ring; /* was in the ring once since this arbiter started */
	enum arb_reason left; /* why its arbiter last left the group */
	uint64_t incarnation, seq; /* of its last delivered message */
};

struct record {
	uint32_t node;
	struct arbmsg_facts f;
	int64_t at_ms; /* delivered */
};

struct arb_table {
	uint32_t self, token_ms;
	uint64_t ring_seq;
	bool quorate;
	struct node *nodes;
	size_t n_nodes;
	struct record *recs;
	size_t n_recs;
};

int arb_table_new(uint32_t self, uint32_t token_ms, struct arb_table **out)
{
	struct arb_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->self = self;
	t->token_ms = token_ms ? token_ms : 1000;
	*out = t;
	return 0;
}

void arb_table_free(struct arb_table *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->recs);
	free(t);
}

static struct node *find_node(const struct arb_table *t, uint32_t id)
{
	size_t i;

	for (i = 0; i < t->n_nodes; i++)
		if (t->nodes[i].id == id)
			return &t->nodes[i];
	return NULL;
}

/* The node with that id, added if new; NULL: out of memory, or id 0. */
static struct node *node_of(struct arb_table *t, uint32_t id)
{
	struct node *n = find_node(t, id), *grown;

	if (n || !id)
		return n;
	grown = realloc(t->nodes, (t->n_nodes + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	t->nodes = grown;
	n = &t->nodes[t->n_nodes++];
	memset(n, 0, sizeof(*n));
	n->id = id;
	return n;
}

int arb_table_set_node(struct arb_table *t, uint32_t nodeid, const char *name)
{
	struct node *n;

	if (!name || !name[0] || strlen(name) > ARBMSG_NAME_MAX)
		return -EINVAL;
	n = node_of(t, nodeid);
	if (!n)
		return nodeid ? -ENOMEM : -EINVAL;
	memcpy(n->name, name, strlen(name) + 1);
	return 0;
}

const char *arb_table_node_name(const struct arb_table *t, uint32_t nodeid)
{
	const struct node *n = find_node(t, nodeid);

	return n && n->name[0] ? n->name : NULL;
}

int arb_table_node_id(const struct arb_table *t, const char *name, uint32_t *nodeid)
{
	size_t i;

	for (i = 0; i < t->n_nodes; i++)
		if (t->nodes[i].name[0] && !strcmp(t->nodes[i].name, name)) {
			*nodeid = t->nodes[i].id;
			return 0;
		}
	return -ENOENT;
}

int arb_table_ring(struct arb_table *t, uint64_t ring_seq, const uint32_t *nodes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!node_of(t, nodes[i]))
			return nodes[i] ? -ENOMEM : -EINVAL;
	for (i = 0; i < t->n_nodes; i++) {
		size_t j;

		t->nodes[i].in_ring = false;
		for (j = 0; j < n; j++)
			if (nodes[j] == t->nodes[i].id)
				t->nodes[i].in_ring = t->nodes[i].seen_ring = true;
	}
	t->ring_seq = ring_seq;
	return 0;
}

int arb_table_group(struct arb_table *t, const struct arb_member *members, size_t n,
		    const struct arb_member *left, size_t n_left)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!node_of(t, members[i].nodeid))
			return members[i].nodeid ? -ENOMEM : -EINVAL;
	for (i = 0; i < n_left; i++) {
		struct node *nd = node_of(t, left[i].nodeid);

		if (!nd)
			return left[i].nodeid ? -ENOMEM : -EINVAL;
		nd->left = left[i].reason;
		nd->seen_ring = true; /* its arbiter was a member: it was in the ring */
		if (left[i].reason == ARB_REASON_NODEDOWN)
			nd->in_ring = false; /* whatever order corosync calls us in */
	}
	for (i = 0; i < t->n_nodes; i++) {
		struct node *nd = &t->nodes[i];
		bool was = nd->in_group;
		size_t j;

		nd->in_group = false;
		for (j = 0; j < n; j++)
			if (members[j].nodeid == nd->id)
				nd->in_group = true;
		if (nd->in_group && !was) {
			nd->fenced = false; /* back: no longer "known fenced" */
			nd->left = ARB_REASON_NONE;
			nd->in_ring = nd->seen_ring = true; /* a group member is in the ring */
		}
	}
	return 0;
}

void arb_table_set_quorate(struct arb_table *t, bool quorate)
{
	t->quorate = quorate;
}

bool arb_table_quorate(const struct arb_table *t)
{
	return t->quorate;
}

uint64_t arb_table_ring_seq(const struct arb_table *t)
{
	return t->ring_seq;
}

static struct record *find_rec(const struct arb_table *t, uint32_t node, const char *res)
{
	size_t i;

	for (i = 0; i < t->n_recs; i++)
		if (t->recs[i].node == node && !strcmp(t->recs[i].f.resource, res))
			return &t->recs[i];
	return NULL;
}

static void drop_rec(struct arb_table *t, struct record *r)
{
	size_t i = (size_t)(r - t->recs);

	memmove(&t->recs[i], &t->recs[i + 1], (t->n_recs - i - 1) * sizeof(*r));
	t->n_recs--;
}

static int put_facts(struct arb_table *t, uint32_t node, const struct arbmsg_facts *f,
		     int64_t now_ms)
{
	struct record *r = find_rec(t, node, f->resource), *grown;

	if (!r) {
		grown = realloc(t->recs, (t->n_recs + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		t->recs = grown;
		r = &t->recs[t->n_recs++];
		r->node = node;
	}
	r->f = *f;
	r->at_ms = now_ms;
	return 0;
}

int arb_table_deliver(struct arb_table *t, const struct arbmsg *m, int64_t now_ms)
{
	struct node *n = node_of(t, m->nodeid);
	struct record *r;
	size_t i;

	if (!n)
		return m->nodeid ? -ENOMEM : -EINVAL;
	if (m->incarnation == n->incarnation && m->seq <= n->seq)
		return -EALREADY;
	if (m->incarnation != n->incarnation && m->type == ARBMSG_HELLO) {
		/* a restarted arbiter: it republishes what it has */
		for (i = t->n_recs; i-- > 0;)
			if (t->recs[i].node == n->id)
				drop_rec(t, &t->recs[i]);
	}
	n->incarnation = m->incarnation;
	n->seq = m->seq;
	switch (m->type) {
	case ARBMSG_FACTS:
		return put_facts(t, n->id, &m->u.facts, now_ms);
	case ARBMSG_GONE:
		r = find_rec(t, n->id, m->u.gone.resource);
		if (r)
			drop_rec(t, r);
		return 0;
	case ARBMSG_FENCED: {
		struct node *f = node_of(t, m->u.fenced.node);

		if (!f)
			return m->u.fenced.node ? -ENOMEM : -EINVAL;
		/* a node in the group now came back after it was fenced (or
		 * the message is wrong): nothing to remember */
		if (!f->in_group)
			f->fenced = true;
		return 0;
	}
	default:
		return 0;
	}
}

static bool fresh(const struct arb_table *t, const struct record *r, int64_t now_ms)
{
	const struct node *n = find_node(t, r->node);

	return (n && n->in_group) || now_ms - r->at_ms < 2 * (int64_t)t->token_ms;
}

int arb_table_view(const struct arb_table *t, const char *res, uint32_t peer, int64_t now_ms,
		   struct arb_view *out)
{
	const struct node *n = find_node(t, peer);
	const struct record *r;

	if (!res || !peer)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->quorate = t->quorate;
	if (!n || !n->name[0])
		out->node = ARB_NODE_UNKNOWN;
	else
		out->node = n->in_ring	   ? ARB_NODE_MEMBER
			    : n->seen_ring ? ARB_NODE_NODEDOWN
					   : ARB_NODE_ABSENT;
	if (n) {
		out->arbiter_member = n->in_group;
		out->left = n->left;
		out->fenced = n->fenced;
	}
	r = find_rec(t, peer, res);
	if (!r)
		return 0;
	out->record = fresh(t, r, now_ms) ? ARB_RECORD_FRESH : ARB_RECORD_STALE;
	out->facts = r->f;
	out->age_ms = now_ms - r->at_ms;
	return 0;
}

static const char *reason_name(enum arb_reason r)
{
	static const char *const names[] = {"", "join", "leave", "nodedown", "nodeup", "procdown"};

	return (unsigned int)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

static json_object *uuid_json(uint64_t u)
{
	char buf[17];

	snprintf(buf, sizeof(buf), "%016llX", (unsigned long long)u);
	return json_object_new_string(buf);
}

static json_object *record_json(const struct arb_table *t, const struct record *r, int64_t now_ms)
{
	json_object *o = json_object_new_object(), *since = json_object_new_object();
	const char *name = arb_table_node_name(t, r->node);

	json_object_object_add(o, "node", json_object_new_string(name ? name : "?"));
	json_object_object_add(o, "nodeid", json_object_new_int64(r->node));
	json_object_object_add(o, "resource", json_object_new_string(r->f.resource));
	json_object_object_add(o, "peer", json_object_new_string(r->f.peer));
	json_object_object_add(o, "role", json_object_new_string(state_role_name(r->f.role)));
	json_object_object_add(o, "disk", json_object_new_string(state_disk_name(r->f.disk)));
	json_object_object_add(o, "connection",
			       json_object_new_string(state_conn_name(r->f.conn)));
	json_object_object_add(o, "peer_disk", json_object_new_string(state_disk_name(r->f.pdsk)));
	json_object_object_add(o, "susp", json_object_new_int(r->f.susp));
	json_object_object_add(o, "fencing", json_object_new_int(r->f.fencing));
	json_object_object_add(o, "quorum", json_object_new_int(r->f.quorum));
	json_object_object_add(o, "current_uuid", uuid_json(r->f.current));
	json_object_object_add(o, "bitmap_uuid", uuid_json(r->f.bitmap));
	json_object_object_add(since, "ring", json_object_new_uint64(r->f.since_ring));
	json_object_object_add(since, "s", json_object_new_int64(r->f.since_s));
	json_object_object_add(o, "primary_since", since);
	json_object_object_add(o, "up", json_object_new_boolean(r->f.up));
	json_object_object_add(o, "changes", json_object_new_uint64(r->f.changes));
	json_object_object_add(o, "age_ms", json_object_new_int64(now_ms - r->at_ms));
	json_object_object_add(o, "fresh", json_object_new_boolean(fresh(t, r, now_ms)));
	return o;
}

json_object *arb_table_show(const struct arb_table *t, int64_t now_ms)
{
	json_object *o = json_object_new_object(), *nodes = json_object_new_array(),
		    *recs = json_object_new_array();
	size_t i;

	json_object_object_add(o, "self", json_object_new_int64(t->self));
	json_object_object_add(o, "ring", json_object_new_uint64(t->ring_seq));
	json_object_object_add(o, "quorate", json_object_new_boolean(t->quorate));
	json_object_object_add(o, "token_ms", json_object_new_int64(t->token_ms));
	for (i = 0; i < t->n_nodes; i++) {
		const struct node *n = &t->nodes[i];
		json_object *jn = json_object_new_object();

		json_object_object_add(jn, "nodeid", json_object_new_int64(n->id));
		json_object_object_add(jn, "name", json_object_new_string(n->name));
		json_object_object_add(jn, "ring", json_object_new_boolean(n->in_ring));
		json_object_object_add(jn, "arbiter", json_object_new_boolean(n->in_group));
		json_object_object_add(jn, "left", json_object_new_string(reason_name(n->left)));
		json_object_object_add(jn, "fenced", json_object_new_boolean(n->fenced));
		json_object_array_add(nodes, jn);
	}
	for (i = 0; i < t->n_recs; i++)
		json_object_array_add(recs, record_json(t, &t->recs[i], now_ms));
	json_object_object_add(o, "nodes", nodes);
	json_object_object_add(o, "records", recs);
	return o;
}

/*
 * fence-cib: the CIB operations of the fence handlers, through Pacemaker's
 * CIB client library (libcib; ref/ha-stack-apis.md section 3.3) and the
 * controller IPC API, never by editing XML text: read the CIB, find the
 * promotable clone of a tandem resource, read a node's node_state, read,
 * create and remove a fence constraint by id, and ask a controller
 * whether it answers. cib_new() honours CIB_file and CIB_shadow, so tests
 * run against a file with no cluster ("offline" below).
 */
#ifndef TANDEM_FENCE_CIB_H
#define TANDEM_FENCE_CIB_H

#include <stdbool.h>
#include <stddef.h>

#include "fence-policy.h"

struct fence_cib;

/* Cluster-wide facts of the last CIB read. */
struct fence_cib_facts {
	bool quorum;          /* <cib have-quorum="1"> */
	bool stonith_enabled; /* cluster option, default true */
	bool startup_fencing; /* cluster option, default true */
	char validate_with[32];
};

/* The first call also sets up Pacemaker's library (its logging to stderr
 * as `prog`, its schemas). NULL when out of memory. */
struct fence_cib *fence_cib_new(const char *prog);
/* Sign on to the CIB (retrying for up to timeout_s) and read it. `name`
 * is the client name Pacemaker logs. -ENOTCONN if it never answered;
 * fence_cib_error() says why. */
int fence_cib_open(struct fence_cib *c, const char *name, unsigned int timeout_s);
/* Sign off (which writes a CIB_file back) and free. */
void fence_cib_free(struct fence_cib *c);
/* CIB_file or CIB_shadow: no cluster to ask, the file is the truth. */
bool fence_cib_offline(const struct fence_cib *c);
/* The reason of the last failure, for messages. */
const char *fence_cib_error(const struct fence_cib *c);

/* Read the whole CIB again, waiting at most timeout_s. */
int fence_cib_refresh(struct fence_cib *c, unsigned int timeout_s);
void fence_cib_facts(const struct fence_cib *c, struct fence_cib_facts *f);

/* The id of the promotable clone (or <master>) holding an
 * ocf:tandem:tandem primitive with resource=`res`. -ENOENT if there is
 * none, -ENOTUNIQ if there are several, -EINVAL if the only match is
 * not promotable (its id is still returned). */
int fence_cib_find_clone(const struct fence_cib *c, const char *res, char *id, size_t len);
/* The `resource` parameter of the tandem primitive of clone `id`. */
int fence_cib_clone_resource(const struct fence_cib *c, const char *id, char *res, size_t len);
/* Is `id` a resource (primitive, group, clone, ...) of the CIB? */
bool fence_cib_has_resource(const struct fence_cib *c, const char *id);

/* The node_state entry of node `uname` (present = false if none). */
int fence_cib_node_state(const struct fence_cib *c, const char *uname,
			 struct fence_node_state *n);
/* Is `uname` a cluster node of the nodes section? */
bool fence_cib_has_node(const struct fence_cib *c, const char *uname);
/* The only cluster node other than `me` (ping and remote nodes do not
 * count). -ENOENT if none, -ENOTUNIQ if several. */
int fence_cib_other_node(const struct fence_cib *c, const char *me, char *out, size_t len);

/* The rsc_location `id` as a fence constraint. -ENOENT if there is none. */
int fence_cib_get(const struct fence_cib *c, const char *id, struct fence_constraint *out);
/* Call fn for each rsc_location whose id starts with `prefix`; stops at
 * and returns fn's first nonzero result. */
int fence_cib_each(const struct fence_cib *c, const char *prefix,
		   int (*fn)(const char *id, const struct fence_constraint *fc, void *arg),
		   void *arg);
/* Create the constraint; -EEXIST if an element with that id exists (the
 * CIB refuses duplicate ids, which is what makes concurrent runs safe). */
int fence_cib_create(struct fence_cib *c, const char *id, const struct fence_constraint *fc);
/* Remove constraint `id`, if `expect` is not NULL only if it still
 * allows exactly the nodes `expect` allows (one atomic XPath delete).
 * -ENOENT if there was no such (matching) constraint. */
int fence_cib_remove(struct fence_cib *c, const char *id, const struct fence_constraint *expect);

/* Ask the controller of node `node` (NULL: the DC) whether it answers,
 * within timeout_ms. 0 and the answering node's name in `from`;
 * -ETIMEDOUT; -ENOTCONN if the local controller cannot be reached;
 * -EOPNOTSUPP when offline. */
int fence_cib_ping(struct fence_cib *c, const char *node, int timeout_ms, char *from, size_t len);

#endif

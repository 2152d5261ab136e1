/*
 * fence-ctl: what the fence handlers and `tandemadm fence-constraints`
 * need to know from tandemd about one resource (its control socket,
 * doc/control-protocol.md, the "status" command): is it up, connected,
 * and the worst disk state of this node and of the peer over its volumes.
 */
#ifndef TANDEM_FENCE_CTL_H
#define TANDEM_FENCE_CTL_H

#include <json-c/json.h>
#include <stdbool.h>

#include "fence-policy.h"

struct fence_ctl_res {
	bool up;
	char role[16];
	char conn[24];
	enum fence_disk disk;  /* worst volume of this node */
	enum fence_disk pdisk; /* worst peer disk */
	unsigned int n_vols;
};

/* Ask tandemd at RUN_DIR/tandemd.sock for resource `res`, waiting at most
 * timeout_ms for the answer. 0; -ENOTCONN if the daemon cannot be
 * reached; -ENOENT if it has no such resource; -ETIMEDOUT; -EPROTO (or
 * ctlc.h's -ECONNRESET, -EMSGSIZE) on a bad answer or none. */
int fence_ctl_status(const char *run_dir, const char *res, int timeout_ms,
		     struct fence_ctl_res *out);
/* A fence_ctl_status() failure in words ("not running", ...). */
const char *fence_ctl_error(int rc);
/* One element of a status answer's "resources" array. -EPROTO if it is
 * not a resource object. */
int fence_ctl_from_json(json_object *r, struct fence_ctl_res *out);
/* A whole status answer: the entry of resource `res`; -ENOENT if it is
 * not in the list or the daemon refused the request (exit 10); -EPROTO if
 * it is not a status answer. */
int fence_ctl_from_answer(json_object *resp, const char *res, struct fence_ctl_res *out);
/* The same from the handler environment tandemd sets (TANDEM_DISK,
 * TANDEM_PEER_DISK, TANDEM_CONNECTION, TANDEM_ROLE); -ENOENT without
 * TANDEM_DISK, -EINVAL if a disk state is not one of DRBD's names; no
 * TANDEM_PEER_DISK reads as DUnknown. These describe the moment tandemd
 * started the handler. */
int fence_ctl_from_env(struct fence_ctl_res *out);

#endif

/*
 * resource-repl: the operator's verbs about replication: connect,
 * disconnect, invalidate and pause-sync.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gi.h"
#include "log.h"
#include "control/control.h"
#include "front/nbd-srv.h"
#include "peer/peer.h"
#include "state/state-change.h"
#include "volume/volume.h"

int resource_connect(struct resource *r, bool discard_my_data, struct reply_err *e)
{
	if (!r->up) {
		ERRF(e, 10, "resource %s is down; run 'tandemadm up %s' first", r->name, r->name);
		return -ENODEV;
	}
	if (discard_my_data && resource_state(r).role == ROLE_PRIMARY) {
		ERRF(e, 11, "%s: discard-my-data is refused on a Primary; demote it first",
		     r->name);
		return -EPERM;
	}
	if (peer_exited(r))
		peer_stop(r); /* StandAlone after a refusal: start afresh */
	if (r->peer)
		return 0;
	return peer_start(r, discard_my_data, e);
}

int resource_disconnect(struct resource *r, struct reply_err *e)
{
	if (!r->peer)
		return 0;
	peer_stop(r);
	return 0;
}

/*
 * invalidate: this node's data is discarded, a full resync from the peer
 * follows (at once if connected, else at the next connection).
 * invalidate-remote: the peer's is, from here (needs the connection).
 */
int resource_invalidate(struct resource *r, bool remote, struct reply_err *e)
{
	struct state s = resource_state(r);
	unsigned int i;

	if (!r->up) {
		ERRF(e, 10, "resource %s is down; run 'tandemadm up %s' first", r->name, r->name);
		return -ENODEV;
	}
	if (!remote && s.role == ROLE_PRIMARY) {
		ERRF(e, 11, "%s: State change failed: invalidate is refused on a Primary; demote "
			    "it first (or run invalidate-remote on the other node)", r->name);
		return -EPERM;
	}
	if (remote && (!peer_live(r) || s.conn != CONN_CONNECTED)) {
		ERRF(e, 11, "%s: State change failed: (-15) Need a connection to start verify or "
			    "resync", r->name);
		return -ENOTCONN;
	}
	if (remote && (s.disk != DISK_UPTODATE || s.peer == ROLE_PRIMARY)) {
		ERRF(e, 11, "%s: State change failed: invalidate-remote needs UpToDate data here "
			    "and a Secondary peer", r->name);
		return -EPERM;
	}
	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];
		struct gi g;

		pthread_mutex_lock(&v->lock);
		if (!v->md) {
			pthread_mutex_unlock(&v->lock);
			continue;
		}
		bitmap_set_all(v->bm);
		volume_gi(v, &g);
		if (remote) {
			/* a new generation here: the peer's current one becomes our
			 * bitmap UUID, so the handshake makes us the source */
			if (g.uuid[GI_BITMAP] == 0)
				gi_new_current(&g, gi_entropy(), s.role == ROLE_PRIMARY);
		} else {
			volume_set_flags(v, 0, MDF_CONSISTENT | MDF_WAS_UP_TO_DATE);
			state_change_disk(v->st, DISK_INCONSISTENT, "invalidate");
		}
		volume_set_gi(v, &g);
		volume_writeback_bitmap_locked(v);
		volume_unlock(v);
	}
	log_res(LOG_NOTICE, r->name, "%s: full resync %s the peer", remote ? "invalidate-remote"
								   : "invalidate",
		remote ? "to" : "from");
	if (!remote)
		peer_state_changed(r);
	peer_renegotiate(r);
	return 0;
}

int resource_pause_sync(struct resource *r, bool pause, struct reply_err *e)
{
	struct state ns = resource_state(r);

	if (!r->up) {
		ERRF(e, 10, "resource %s is down; run 'tandemadm up %s' first", r->name, r->name);
		return -ENODEV;
	}
	if (ns.user_isp == pause)
		return 0;
	state_change_flag(r, SC_USER_ISP, pause, pause ? "pause-sync" : "resume-sync");
	peer_state_changed(r);
	peer_show_sync_state(r);
	return 0;
}

/*
 * repl-session: one connected session of a resource's peer thread: the
 * handshake, then the data stream until the link fails, then the cleanup
 * (the transfer log fails over to the bitmap, fencing runs); and the
 * synchronous submit used by TRIM and WRITE_ZEROES.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "epoch.h"
#include "peer-int.h"

/* ---------------------------------------------------------------- the session */

enum state_conn peer_overall(const struct peer *p)
{
	enum state_conn c = CONN_CONNECTED;
	unsigned int i;

	for (i = 0; i < p->r->n_vols; i++)
		if (peer_vol_repl(&p->pv[i]) > c)
			c = peer_vol_repl(&p->pv[i]);
	return c;
}

/* A resync of v ended (resync.c): the connection state follows. */
void resource_sync_done(struct resource *r, struct volume *v)
{
	struct peer *p = r->peer;
	struct state s = resource_state(r);
	enum state_disk pdsk = s.pdsk;

	if (!p)
		return;
	if (peer_overall(p) == CONN_CONNECTED)
		pdsk = DISK_UPTODATE;
	state_change_conn(r, peer_overall(p), s.peer, pdsk, "resync finished");
	resource_disk_changed(r);
	resync_after_changed(r);
}

int peer_session(struct peer *p)
{
	struct resource *r = p->r;
	unsigned int i;
	int rc;

	p->pv = calloc(r->n_vols, sizeof(*p->pv));
	if (!p->pv)
		return -ENOMEM;
	for (i = 0; i < r->n_vols; i++)
		p->pv[i].v = &r->vols[i];
	p->session_err = 0;
	p->barrier_nr = p->barrier_acked = 0;
	p->recv_epoch_writes = 0;
	integrity_fault_load(p);
	if (!p->ep && epoch_new((uint32_t)conf_res_num(tandemd_conf(r->d), resource_cr(r), CONF_SECT_NET,
						       "max-epoch-size"),
				1024, &p->ep) < 0) {
		free(p->pv);
		p->pv = NULL;
		return -ENOMEM;
	}
	epoch_reset(p->ep);
	resource_freeze(r, true); /* writes wait until the bitmaps are exchanged */
	rc = sync_handshake(p);
	if (rc == 0) {
		struct state s = resource_state(r);

		__atomic_store_n(&p->live, true, __ATOMIC_RELEASE);
		resource_freeze(r, false);
		state_change_conn(r, peer_overall(p), (enum state_role)p->pv[0].pstate.role,
				  peer_overall(p) == CONN_SYNCSOURCE ? DISK_INCONSISTENT
				  : peer_overall(p) == CONN_SYNCTARGET
					  ? (enum state_disk)p->pv[0].pstate.disk
					  : (enum state_disk)p->pv[0].pstate.disk,
				  NULL);
		(void)s;
		resource_disk_changed(r);
		resource_set_connected_ind(r, true);
		fence_conn_back(r);
		if (p->sb_demote) {
			p->sb_demote = false;
			resource_demote_after_sb(r);
		}
		rc = repl_start_meta(p);
		if (rc == 0)
			rc = resync_start_thread(p);
		if (rc == 0)
			rc = repl_receive(p);
	} else {
		resource_freeze(r, false);
	}
	peer_fail(p, rc);
	pthread_mutex_lock(&p->lock);
	if (p->session_err)
		rc = p->session_err; /* the first error is the cause */
	pthread_mutex_unlock(&p->lock);
	resync_stop(p);
	verify_stop(p);
	for (i = 0; p->pv && i < p->r->n_vols; i++)
		sbsave_run_abort(&p->pv[i]);
	repl_stop_meta(p);
	fence_conn_lost(r); /* before the requests in flight complete */
	repl_fail_all(p, rc);
	pthread_mutex_lock(&p->lock);
	free(p->pv);
	p->pv = NULL;
	pthread_mutex_unlock(&p->lock);
	resource_lost_peer(r);
	return rc;
}

/* ---------------------------------------------------------------- synchronous submit */

struct waiter {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	int rc;
};

static void waiter_done(void *arg, int rc)
{
	struct waiter *w = arg;

	pthread_mutex_lock(&w->lock);
	w->done = true;
	w->rc = rc;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* TRIM / WRITE_ZEROES to the peer, waiting for its leg. 0 if not live. */
int peer_trim_wait(struct resource *r, struct volume *v, bool zero, uint64_t off, uint32_t len)
{
	struct waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0};
	int rc = peer_submit(r, v, zero ? WIRE_P_WRITE_ZEROES : WIRE_P_TRIM, off, len, NULL, 0,
			     waiter_done, &w);

	if (rc <= 0)
		return rc;
	pthread_mutex_lock(&w.lock);
	while (!w.done)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
	return 0; /* a failed peer leg marked the blocks out of sync */
}

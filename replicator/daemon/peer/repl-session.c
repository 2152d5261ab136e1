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
#include "peer/peer-int.h"

/* ---------------------------------------------------------------- the session */

/*
 * The connection's flag in the metadata (MDF_CONNECTED_IND), for the
 * degraded-wait timeout after a restart. Any thread.
 */
static void set_connected_ind(struct resource *r, bool on)
{
	unsigned int i;

	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];

		pthread_mutex_lock(&v->lock);
		if (v->md && !!(volume_flags(v) & MDF_CONNECTED_IND) != on)
			volume_set_flags(v, on ? MDF_CONNECTED_IND : 0, on ? 0 : MDF_CONNECTED_IND);
		volume_unlock(v);
	}
}

/* A Primary with UpToDate data starts a new data generation (its old
 * current UUID becomes the bitmap UUID), so that a later handshake knows
 * which side changed, as DRBD does. */
static void new_current_uuid(struct resource *r)
{
	unsigned int i;

	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];
		struct gi g;
		bool made = false;

		pthread_mutex_lock(&v->lock);
		if (v->md && volume_disk(v) == DISK_UPTODATE && volume_uuid(v, GI_BITMAP) == 0) {
			volume_gi(v, &g);
			gi_new_current(&g, gi_entropy(), true);
			volume_set_gi(v, &g);
			made = true;
		}
		if (volume_unlock(v) < 0)
			log_res(LOG_ERR, r->name, "volume %u: cannot write the new current UUID",
				v->vnr);
		else if (made)
			log_res(LOG_INFO, r->name, "volume %u: new current UUID %016llX", v->vnr,
				(unsigned long long)g.uuid[GI_CURRENT]);
	}
}

/*
 * The connection is gone. A Primary starts a new data generation, unless
 * its I/O is frozen (fencing, quorum): then nothing can change here until
 * it resumes, and the generation starts then; a node fenced or
 * reconnected meanwhile keeps the generation it shares with its peer, so
 * its return is no split brain (DRBD's NEW_CUR_UUID).
 */
static void lost_peer(struct resource *r)
{
	struct state s = resource_state(r);

	set_connected_ind(r, false);
	if (s.role != ROLE_PRIMARY)
		return;
	if (s.susp_fen || s.susp_quo) {
		__atomic_store_n(&r->uuid_pending, true, __ATOMIC_RELEASE);
		log_res(LOG_INFO, r->name,
			"I/O is frozen: the new current UUID waits until it resumes");
		return;
	}
	new_current_uuid(r);
}

void peer_io_resumed(struct resource *r, bool connected)
{
	struct state s = resource_state(r);

	if (!__atomic_load_n(&r->uuid_pending, __ATOMIC_ACQUIRE))
		return;
	connected = connected || s.conn >= CONN_CONNECTED;
	if (!connected && (s.susp_fen || s.susp_quo))
		return; /* another reason still holds the I/O */
	__atomic_store_n(&r->uuid_pending, false, __ATOMIC_RELEASE);
	if (!connected && s.role == ROLE_PRIMARY)
		new_current_uuid(r);
}

/* A resync of v ended (resync.c): the connection state follows. */
void peer_sync_done(struct resource *r, struct volume *v)
{
	struct state s = resource_state(r);
	enum state_disk pdsk = s.pdsk;

	(void)v;
	if (!r->peer)
		return;
	if (state_change_live(r) == CONN_CONNECTED)
		pdsk = DISK_UPTODATE;
	state_change_conn(r, CONN_CONNECTED, s.peer, pdsk, "resync finished");
	peer_state_changed(r);
	resync_after_changed(r);
}

int peer_session(struct peer *p)
{
	struct resource *r = p->r;
	struct peer_vol *pv = calloc(r->n_vols, sizeof(*pv));
	unsigned int i;
	int rc;

	if (!pv)
		return -ENOMEM;
	for (i = 0; i < r->n_vols; i++)
		pv[i].v = &r->vols[i];
	pthread_mutex_lock(&p->lock); /* status reads p->pv under the lock */
	p->pv = pv;
	pthread_mutex_unlock(&p->lock);
	p->session_err = 0;
	p->barrier_nr = p->barrier_acked = p->flush_nr = 0;
	__atomic_store_n(&p->pe_all, 0, __ATOMIC_RELAXED);
	p->recv_epoch_writes = 0;
	integrity_fault_load(p);
	if (!p->ep && epoch_new((uint32_t)conf_res_num(tandemd_conf(r->d), resource_cr(r), CONF_SECT_NET,
						       "max-epoch-size"),
				1024, &p->ep) < 0) {
		pthread_mutex_lock(&p->lock);
		p->pv = NULL;
		pthread_mutex_unlock(&p->lock);
		free(pv);
		return -ENOMEM;
	}
	epoch_reset(p->ep);
	volume_freeze_all(r, VOLUME_FROZEN_HANDSHAKE, true); /* writes wait for the bitmaps */
	rc = sync_handshake(p);
	if (rc == 0) {
		enum state_conn live = state_change_live(r);

		__atomic_store_n(&p->live, true, __ATOMIC_RELEASE);
		volume_freeze_all(r, VOLUME_FROZEN_HANDSHAKE, false);
		state_change_conn(r, CONN_CONNECTED, (enum state_role)p->pv[0].pstate.role,
				  live == CONN_SYNCSOURCE ? DISK_INCONSISTENT
							  : (enum state_disk)p->pv[0].pstate.disk,
				  NULL);
		peer_state_changed(r);
		set_connected_ind(r, true);
		r->d->up->conn_back(r);
		if (p->sb_demote) {
			p->sb_demote = false;
			r->d->up->demote_after_sb(r);
		}
		rc = repl_start_meta(p);
		if (rc == 0)
			rc = resync_start_thread(p);
		if (rc == 0)
			rc = repl_receive(p);
	} else {
		volume_freeze_all(r, VOLUME_FROZEN_HANDSHAKE, false);
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
	r->d->up->conn_lost(r); /* before the requests in flight complete */
	repl_fail_all(p, rc);
	pthread_mutex_lock(&p->lock);
	free(p->pv);
	p->pv = NULL;
	pthread_mutex_unlock(&p->lock);
	lost_peer(r);
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

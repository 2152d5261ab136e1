/*
 * resource: one configured resource: its state (role, disk, connection),
 * its volumes, the state changes operators ask for (checked against the
 * rule table in state.c and logged by name), and its status.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbmsg.h"
#include "gi.h"
#include "log.h"
#include "tls.h"
#include "control/control.h"
#include "front/nbd-srv.h"
#include "peer/peer.h"
#include "state/state-change.h"
#include "volume/volume.h"

int resource_init(struct tandemd *d, struct resource *r, const struct conf_res *cr)
{
	const struct conf_vol *cv;
	unsigned int n = 0, *vnr;
	int rc;

	memset(r, 0, sizeof(*r));
	r->d = d;
	r->cr = cr;
	r->name = cr->name;
	pthread_mutex_init(&r->st_lock, NULL);
	pthread_cond_init(&r->fence_cond, NULL);
	r->fence_result = -1;
	for (cv = cr->me->vols; cv; cv = cv->next)
		n++;
	r->vols = calloc(n, sizeof(*r->vols));
	if (!r->vols)
		return -ENOMEM;
	r->n_vols = n;
	vnr = calloc(n ? n : 1, sizeof(*vnr));
	if (!vnr) {
		free(r->vols);
		return -ENOMEM;
	}
	for (n = 0, cv = cr->me->vols; cv; cv = cv->next, n++)
		vnr[n] = cv->vnr;
	rc = state_change_init(r, vnr);
	free(vnr);
	if (rc < 0) {
		free(r->vols);
		return rc;
	}
	for (n = 0, cv = cr->me->vols; cv; cv = cv->next, n++) {
		struct volume *v = &r->vols[n];

		v->res = r;
		v->cv = cv;
		v->vnr = cv->vnr;
		v->st = &r->vs[n];
		pthread_mutex_init(&v->lock, NULL);
		pthread_mutex_init(&v->md_lock, NULL);
		pthread_cond_init(&v->cond, NULL);
	}
	return 0;
}

void resource_fini(struct resource *r)
{
	unsigned int i;

	handler_forget(r);
	if (r->disk_watch_on)
		qb_loop_timer_del(r->d->loop, r->disk_watch);
	r->disk_watch_on = false;
	for (i = 0; i < r->n_vols; i++)
		if (r->vols[i].detach_wait)
			qb_loop_timer_del(r->d->loop, r->vols[i].detach_timer);
	pthread_mutex_destroy(&r->st_lock);
	pthread_cond_destroy(&r->fence_cond);
	for (i = 0; i < r->n_vols; i++) {
		pthread_mutex_destroy(&r->vols[i].lock);
		pthread_mutex_destroy(&r->vols[i].md_lock);
		pthread_cond_destroy(&r->vols[i].cond);
	}
	free(r->vols);
	state_change_fini(r);
}

/* Check a change; on refusal fill e the way drbdsetup reports it. */
static bool allowed(struct resource *r, const struct state *ns, bool force, struct reply_err *e)
{
	struct state_ctx ctx = state_change_ctx(r, force);
	struct state os = resource_state(r);
	enum state_result ss = state_check(&os, ns, &ctx);

	if (ss == SS_SUCCESS)
		return true;
	e->exit = state_result_exit(ss);
	e->ss = ss;
	snprintf(e->msg, sizeof(e->msg), "State change failed: (%d) %s", ss, state_result_text(ss));
	switch (ss) {
	case SS_DEVICE_IN_USE:
		snprintf(e->hint, sizeof(e->hint),
			 "%u NBD client(s) of %s are connected; stop them, or use --force",
			 nbd_srv_clients(r->nbd), r->name);
		break;
	case SS_NO_UP_TO_DATE_DISK:
		snprintf(e->hint, sizeof(e->hint),
			 "the local disk is %s; 'primary --force' makes it UpToDate if you know "
			 "this is the data to keep",
			 state_disk_name(os.disk));
		break;
	case SS_PRIMARY_NOP:
		snprintf(e->hint, sizeof(e->hint),
			 "fencing is configured and the peer's disk is not known to be Outdated; "
			 "outdate the peer or use --force");
		break;
	default:
		break;
	}
	log_res(LOG_WARNING, r->name, "%s", e->msg);
	return false;
}

/* attach on an up resource: attach the volumes that a local I/O error
 * detached (after the disk was repaired or replaced). */
static int resource_reattach(struct resource *r, struct reply_err *e)
{
	unsigned int i, n = 0;
	int rc;

	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];

		if (v->md)
			continue;
		state_change_disk(v->st, DISK_ATTACHING, "attach");
		rc = volume_attach(v, e);
		if (rc < 0) {
			state_change_disk(v->st, DISK_DISKLESS, "attach failed");
			log_res(LOG_ERR, r->name, "attach failed: %s", e->msg);
			return rc;
		}
		if (peer_live(r) && resource_state(r).pdsk == DISK_UPTODATE &&
		    volume_disk(v) > DISK_OUTDATED) {
			/* the peer carried on without this disk: it is behind */
			pthread_mutex_lock(&v->lock);
			volume_set_flags(v, 0, MDF_WAS_UP_TO_DATE);
			state_change_disk(v->st, DISK_OUTDATED, "attach: the peer went on without it");
			volume_sync_sb(v);
			volume_unlock(v);
		}
		n++;
	}
	if (n) {
		peer_state_changed(r);
		peer_renegotiate(r); /* a resync brings the disk up to date */
	}
	return 0;
}

static void disk_watch(void *arg);

int resource_up(struct resource *r, struct reply_err *e)
{
	const struct conf_res *cr;
	unsigned int i;
	int rc;

	if (r->up)
		return resource_reattach(r, e);
	/* settings that changed while it was up apply now (see reload.c) */
	cr = conf_find_res(tandemd_conf(r->d), r->name);
	if (!cr || !cr->me) {
		ERRF(e, 10, "%s was removed from the configuration", r->name);
		return -ENOENT;
	}
	if (cr != resource_cr(r)) {
		resource_fini(r);
		rc = resource_init(r->d, r, cr);
		if (rc < 0) {
			ERRF(e, 20, "out of memory");
			return rc;
		}
	}
	if (peer_refuse_unauthenticated(r, e) < 0) {
		log_res(LOG_ERR, r->name, "not brought up: %s", e->msg);
		return -EACCES;
	}
	if (resource_cr(r)->peer) { /* before anything is attached, as DRBD's up */
		char why[TLS_REASON_MAX + 256];

		rc = peer_tls_check(tandemd_conf(r->d), resource_cr(r), why, sizeof(why));
		if (rc < 0) {
			ERRF(e, 10, "%s: %.360s; fix it, then 'tandemadm adjust %s' and try again",
			     r->name, why, r->name);
			log_res(LOG_ERR, r->name, "not brought up: %s", e->msg);
			return rc;
		}
	}
	/* Diskless -> Attaching -> what the metadata says (the state table) */
	state_change_disks(r, DISK_ATTACHING, "attach");
	for (i = 0; i < r->n_vols; i++) {
		rc = volume_attach(&r->vols[i], e);
		if (rc < 0) {
			struct reply_err ignore = {0};

			while (i-- > 0)
				volume_detach(&r->vols[i], &ignore);
			state_change_disks(r, DISK_DISKLESS, "attach failed");
			log_res(LOG_ERR, r->name, "attach failed: %s", e->msg);
			return rc;
		}
	}
	r->up = true;
	for (i = 0; i < r->n_vols; i++)
		if (r->vols[i].md && (volume_flags(&r->vols[i]) & MDF_PEER_OUT_DATED))
			r->peer_outdated = true;
	if (r->peer_outdated) /* fenced before: the peer is known to be Outdated */
		state_change_conn(r, resource_state(r).conn, ROLE_UNKNOWN, DISK_OUTDATED, NULL);
	if (!r->disk_watch_on)
		disk_watch(r);
	if (resource_cr(r)->peer && resource_cr(r)->peer->addr.ip && resource_cr(r)->me->addr.ip &&
	    peer_start(r, false, e) < 0)
		log_res(LOG_ERR, r->name, "not connecting: %s", e->msg);
	e->msg[0] = '\0';
	e->exit = 0;
	return 0;
}

int resource_down(struct resource *r, bool force, struct reply_err *e)
{
	unsigned int i;
	int rc;

	if (!r->up)
		return 0;
	if (resource_state(r).role == ROLE_PRIMARY) {
		rc = resource_secondary(r, force, e);
		if (rc < 0)
			return rc;
	}
	peer_stop(r);
	for (i = 0; i < r->n_vols; i++) {
		rc = volume_detach(&r->vols[i], e);
		if (rc < 0)
			return rc;
	}
	r->up = false;
	state_change_disks(r, DISK_DISKLESS, "detach");
	return 0;
}

static int write_all_sb(struct resource *r, struct reply_err *e)
{
	unsigned int i;
	int rc;

	for (i = 0; i < r->n_vols; i++) {
		if (!r->vols[i].md)
			continue; /* detached after an I/O error */
		pthread_mutex_lock(&r->vols[i].lock);
		volume_sync_sb(&r->vols[i]);
		rc = volume_unlock(&r->vols[i]);
		if (rc < 0) {
			ERRF(e, 20, "volume %u: cannot write the superblock: %s", r->vols[i].vnr,
			     strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* The metadata no longer says Primary (written by write_all_sb()). */
static void mark_secondary(struct volume *v)
{
	struct gi g;

	pthread_mutex_lock(&v->lock);
	volume_gi(v, &g);
	gi_set_role(&g, false);
	volume_set_gi(v, &g);
	volume_set_flags(v, 0, MDF_PRIMARY_IND);
	pthread_mutex_unlock(&v->lock);
}

int resource_primary(struct resource *r, bool force, struct reply_err *e)
{
	bool forced_uuid = false, qforced = false;
	struct state ns = resource_state(r), os = ns;
	unsigned int i;
	int rc;

	if (!r->up) {
		ERRF(e, 10, "resource %s is down; run 'tandemadm up %s' first", r->name, r->name);
		return -ENODEV;
	}
	if (ns.role == ROLE_PRIMARY)
		return 0;
	if (quorum_promote_check(r, force, &qforced, e) < 0)
		return -EPERM;
	ns.role = ROLE_PRIMARY;
	if (force && ns.disk >= DISK_INCONSISTENT && ns.disk < DISK_UPTODATE)
		ns.disk = DISK_UPTODATE; /* checked below like any promotion */
	if (!allowed(r, &ns, force, e)) {
		if (e->ss == SS_PRIMARY_NOP && fence_for_promote(r))
			snprintf(e->hint, sizeof(e->hint),
				 "fence-peer is running to outdate the peer; promotion is possible "
				 "once it succeeds (tandemadm primary waits for it and retries)");
		return -EPERM;
	}
	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];
		struct gi g;

		pthread_mutex_lock(&v->lock);
		volume_gi(v, &g);
		if (force && volume_disk(v) >= DISK_INCONSISTENT && volume_disk(v) < DISK_UPTODATE) {
			log_res(LOG_WARNING, r->name, "volume %u: Forced to consider local data as "
						      "UpToDate!",
				v->vnr);
			gi_new_current(&g, gi_entropy(), true);
			volume_set_flags(v, MDF_CONSISTENT | MDF_WAS_UP_TO_DATE, 0);
			forced_uuid = true;
		} else if (os.conn < CONN_CONNECTED && g.uuid[GI_BITMAP] == 0) {
			/* promoted without the peer: a new data generation starts */
			gi_new_current(&g, gi_entropy(), true);
		}
		gi_set_role(&g, true);
		volume_set_gi(v, &g);
		volume_set_flags(v, MDF_PRIMARY_IND, 0);
		pthread_mutex_unlock(&v->lock);
	}
	rc = write_all_sb(r, e);
	if (rc == 0)
		rc = nbd_srv_start(r, e);
	if (rc < 0) {
		/* not promoted after all: the metadata must not say Primary */
		struct reply_err ignore = {0};

		for (i = 0; i < r->n_vols; i++)
			mark_secondary(&r->vols[i]);
		write_all_sb(r, &ignore);
		return rc;
	}
	/* the role and the forced disks in one change (one event order) */
	state_change(r,
		     &(struct state_chg){.mask = SC_ROLE | (forced_uuid ? SC_DISK : 0), .s = ns,
					 .vol = -1, .disk = DISK_UPTODATE,
					 .disk_from = DISK_INCONSISTENT, .how = STATE_HARD,
					 .force = force},
		     force ? "primary --force" : "primary");
	os = resource_state(r);
	if (force && state_change_ctx(r, false).fencing != FENCING_DONT_CARE && os.conn < CONN_CONNECTED &&
	    os.pdsk >= DISK_DUNKNOWN) {
		/* fencing could not outdate the peer, and the operator insists */
		log_res(LOG_WARNING, r->name, "Forced into split brain situation!");
		state_change_conn(r, os.conn, ROLE_UNKNOWN, DISK_OUTDATED, "primary --force");
	}
	if (forced_uuid)
		peer_renegotiate(r); /* the peer must sync from us */
	else
		peer_state_changed(r);
	quorum_role_changed(r, qforced);
	return 0;
}

int resource_secondary(struct resource *r, bool force, struct reply_err *e)
{
	struct state ns = resource_state(r);
	unsigned int i;

	if (ns.role != ROLE_PRIMARY)
		return 0;
	ns.role = ROLE_SECONDARY;
	if (!allowed(r, &ns, force, e))
		return -EBUSY;
	quorum_demoting(r);
	if (r->nbd) {
		nbd_srv_stop(r->nbd);
		r->nbd = NULL;
	}
	for (i = 0; i < r->n_vols; i++) {
		volume_flush(&r->vols[i]);
		mark_secondary(&r->vols[i]);
	}
	state_change(r, &(struct state_chg){.mask = SC_ROLE, .s = ns, .how = STATE_HARD,
					    .force = force},
		     force ? "secondary --force" : "secondary");
	quorum_role_changed(r, false);
	peer_state_changed(r);
	return write_all_sb(r, e);
}

/* Are the volumes in use (NBD clients, a kernel nbd device)? Any thread. */
bool resource_device_open(const struct resource *r)
{
	struct nbd_srv *s = __atomic_load_n(&r->nbd, __ATOMIC_ACQUIRE);

	return s && (nbd_srv_clients(s) > 0 || nbd_srv_kernel_in_use(s));
}

/* call-pri-lost-after-sb decided that this Primary's data lose and that
 * it can give up the role (nobody uses it): it resyncs as SyncTarget and
 * demotes now; if that fails after all, pri-lost-after-sb runs. */
static void demote_after_sb(void *arg)
{
	struct resource *r = arg;
	struct reply_err e = {0};

	if (resource_secondary(r, false, &e) == 0) {
		log_res(LOG_NOTICE, r->name,
			"call-pri-lost-after-sb: gave up the Primary role (its data lost the "
			"split brain)");
		return;
	}
	log_res(LOG_ERR, r->name,
		"call-pri-lost-after-sb: cannot give up the Primary role: %s; running "
		"pri-lost-after-sb", e.msg);
	handler_run(r, "pri-lost-after-sb", -1, NULL, NULL);
}

void resource_demote_after_sb(struct resource *r)
{
	if (defer_call(r->d->defer, demote_after_sb, r) < 0)
		log_res(LOG_ERR, r->name, "call-pri-lost-after-sb: out of memory");
}

/*
 * outdate on an up resource (drbdadm outdate): the local data become
 * Outdated, so that this node cannot be promoted with them. Refused on a
 * Primary (17), while connected to a peer that has no newer data to give
 * (DRBD's "Refusing to be Outdated while Connected"), and for data below
 * Outdated (5).
 */
int resource_outdate(struct resource *r, struct reply_err *e)
{
	struct state ns = resource_state(r);
	unsigned int i;

	if (!r->up) {
		ERRF(e, 10, "resource %s is down", r->name);
		return -ENODEV;
	}
	if (ns.disk == DISK_OUTDATED)
		return 0;
	ns.disk = DISK_OUTDATED;
	if (!allowed(r, &ns, false, e))
		return -EPERM;
	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];

		pthread_mutex_lock(&v->lock);
		if (v->md && volume_disk(v) > DISK_OUTDATED) {
			state_change_disk(v->st, DISK_OUTDATED, "outdate");
			volume_set_flags(v, 0, MDF_WAS_UP_TO_DATE);
		}
		if (volume_unlock(v) < 0)
			log_res(LOG_ERR, r->name, "volume %u: cannot record Outdated in the metadata",
				v->vnr);
	}
	peer_state_changed(r);
	return 0;
}

int resource_new_current_uuid(struct resource *r, bool clear_bitmap, struct reply_err *e)
{
	unsigned int i;

	if (!r->up) {
		ERRF(e, 10, "resource %s is down; run 'tandemadm up %s' first", r->name, r->name);
		return -ENODEV;
	}
	if (clear_bitmap && peer_skip_initial_sync(r))
		return 0;
	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];
		struct gi g;

		if (!v->md)
			continue;
		pthread_mutex_lock(&v->lock);
		volume_gi(v, &g);
		if (clear_bitmap)
			gi_new_current_clear_bitmap(&g, gi_entropy(), resource_state(r).role == ROLE_PRIMARY);
		else
			gi_new_current(&g, gi_entropy(), resource_state(r).role == ROLE_PRIMARY);
		volume_set_gi(v, &g);
		pthread_mutex_unlock(&v->lock);
	}
	log_res(LOG_NOTICE, r->name, "new current UUID%s", clear_bitmap ? " (bitmap cleared)" : "");
	return write_all_sb(r, e);
}

/* A counter, some of which other threads add to without the lock. */
#define CNT(v, x) __atomic_load_n(&(v)->c.x, __ATOMIC_RELAXED)

json_object *resource_status(struct resource *r)
{
	json_object *o = json_object_new_object(), *vols = json_object_new_array();
	struct state st = resource_state(r);
	unsigned int i;

	json_object_object_add(o, "name", json_object_new_string(r->name));
	json_object_object_add(o, "up", json_object_new_boolean(r->up));
	json_object_object_add(o, "role", json_object_new_string(state_role_name(st.role)));
	json_object_object_add(o, "peer_role", json_object_new_string(state_role_name(st.peer)));
	json_object_object_add(o, "connection",
			       json_object_new_string(r->up ? state_conn_name(st.conn)
							    : "Unconfigured"));
	if (resource_cr(r)->peer && resource_cr(r)->peer->n_names)
		json_object_object_add(o, "peer", json_object_new_string(resource_cr(r)->peer->names[0]));
	if (resource_cr(r)->peer && resource_cr(r)->peer->addr.ip) {
		json_object *w = json_object_new_array();

		if (!conf_res_text(tandemd_conf(r->d), resource_cr(r), CONF_SECT_NET, "cram-hmac-alg") ||
		    !conf_res_text(tandemd_conf(r->d), resource_cr(r), CONF_SECT_NET, "shared-secret"))
			json_object_array_add(
				w, json_object_new_string(
					   "the peer is not authenticated: set cram-hmac-alg and "
					   "shared-secret in the net section"));
		json_object_object_add(o, "warnings", w);
	}
	{
		static const char *const wfc[] = {"default", "degraded", "peer-outdated"};
		int w = VOLUME_WFC_DEFAULT;

		for (i = 0; i < r->n_vols; i++)
			if (r->vols[i].md && r->vols[i].wfc_class > w)
				w = r->vols[i].wfc_class;
		json_object_object_add(o, "wfc_class", json_object_new_string(wfc[w]));
	}
	if (r->sb_save[0])
		json_object_object_add(o, "sb_save", json_object_new_string(r->sb_save));
	if (r->conf_pending)
		json_object_object_add(o, "config_pending", json_object_new_boolean(true));
	fence_status(r, o);
	quorum_status(r, o);
	json_object_object_add(o, "susp", /* doc/arbiter.md §2; no user suspension in tandem */
			       json_object_new_int((st.susp_user ? ARBMSG_SUSP_USER : 0) |
						   (st.susp_nod ? ARBMSG_SUSP_NOD : 0) |
						   (st.susp_fen ? ARBMSG_SUSP_FEN : 0) |
						   (st.susp_quo ? ARBMSG_SUSP_QUORUM : 0)));
	pthread_mutex_lock(&r->st_lock);
	json_object_object_add(o, "primary_since", json_object_new_int64(r->primary_since));
	pthread_mutex_unlock(&r->st_lock);
	json_object_object_add(o, "integrity_failures",
			       json_object_new_uint64(integrity_failures(r)));
	peer_status_refusals(r, o);
	peer_status_ack_poll(r, o);
	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];
		json_object *jv = json_object_new_object(), *c = json_object_new_object();
		char uuid[20];

		pthread_mutex_lock(&v->lock);
		json_object_object_add(jv, "volume", json_object_new_int((int)v->vnr));
		json_object_object_add(jv, "minor", json_object_new_int(v->cv->minor));
		json_object_object_add(jv, "disk", json_object_new_string(state_disk_name(volume_disk(v))));
		json_object_object_add(jv, "peer_disk",
				       json_object_new_string(state_disk_name(st.pdsk)));
		json_object_object_add(jv, "size_sect", json_object_new_uint64(v->size_sect));
		if (v->md) /* where data I/O runs: inline, io_uring or threads */
			json_object_object_add(jv, "io", json_object_new_string(
							       v->io ? ioeng_kind(v->io) : "inline"));
		if (v->md) {
			snprintf(uuid, sizeof(uuid), "%016llX",
				 (unsigned long long)volume_uuid(v, GI_CURRENT));
			json_object_object_add(jv, "current_uuid", json_object_new_string(uuid));
			snprintf(uuid, sizeof(uuid), "%016llX",
				 (unsigned long long)volume_uuid(v, GI_BITMAP));
			json_object_object_add(jv, "bitmap_uuid", json_object_new_string(uuid));
		}
		if (r->nbd) {
			json_object_object_add(jv, "export",
					       json_object_new_string(nbd_srv_path(r->nbd)));
			json_object_object_add(jv, "clients",
					       json_object_new_int((int)nbd_srv_clients(r->nbd)));
		}
		json_object_object_add(c, "ns", json_object_new_uint64(CNT(v, ns)));
		json_object_object_add(c, "nr", json_object_new_uint64(CNT(v, nr)));
		json_object_object_add(c, "dw", json_object_new_uint64(CNT(v, dw)));
		json_object_object_add(c, "dr", json_object_new_uint64(CNT(v, dr)));
		json_object_object_add(c, "al", json_object_new_uint64(CNT(v, al)));
		json_object_object_add(c, "bm", json_object_new_uint64(CNT(v, bm)));
		json_object_object_add(c, "lo", json_object_new_int64(CNT(v, lo)));
		json_object_object_add(c, "pe", json_object_new_int64(CNT(v, pe)));
		json_object_object_add(c, "ua", json_object_new_int64(CNT(v, ua)));
		json_object_object_add(c, "ap", json_object_new_int64(CNT(v, ap)));
		json_object_object_add(c, "frozen", json_object_new_int64(CNT(v, frozen)));
		json_object_object_add(c, "oos",
				       json_object_new_uint64(v->bm ? bitmap_weight(v->bm) * 4 : 0));
		json_object_object_add(jv, "counters", c);
		pthread_mutex_unlock(&v->lock);
		peer_status(r, i, jv);
		json_object_array_add(vols, jv);
	}
	json_object_object_add(o, "volumes", vols);
	return o;
}

/* ---------------------------------------------------------------- I/O errors */

/* Primary without UpToDate data anywhere: DRBD's pri-on-incon-degr. */
static void check_incon_degr(struct resource *r)
{
	struct state s = resource_state(r);

	if (s.role == ROLE_PRIMARY && s.disk < DISK_UPTODATE && s.pdsk < DISK_UPTODATE)
		handler_run(r, "pri-on-incon-degr", -1, NULL, NULL);
}

static void detach_failed(struct resource *r, struct volume *v);

static void detach_retry(void *arg)
{
	struct volume *v = arg;

	v->detach_wait = false;
	if (v->md)
		detach_failed(v->res, v);
}

static void detach_failed(struct resource *r, struct volume *v)
{
	struct reply_err e = {0};
	bool primary;

	if (volume_busy(v)) {
		/* requests stuck in the disk (disk-timeout): new ones already go
		 * to the peer; detach when they return, without blocking here */
		if (!v->detach_wait) {
			v->detach_wait = true;
			if (qb_loop_timer_add(r->d->loop, QB_LOOP_MED, 100 * QB_TIME_NS_IN_MSEC, v,
					      detach_retry, &v->detach_timer) < 0)
				v->detach_wait = false;
		}
		return;
	}
	volume_detach(v, &e);
	state_change_disk(v->st, DISK_DISKLESS, "after a local I/O error");
	peer_state_changed(r);
	primary = resource_state(r).role == ROLE_PRIMARY; /* not under the log's lock */
	log_res(LOG_ERR, r->name,
		"volume %u: detached after a local I/O error. %s Check the disk, then "
		"'tandemadm attach %s' (the activity log marks what may differ).",
		v->vnr, primary ? "I/O to it fails until a disk or a peer is back." : "", r->name);
	check_incon_degr(r);
}

static void local_io_error_done(struct resource *r, const char *name, int result, void *arg)
{
	detach_failed(r, arg);
}

/*
 * disk-timeout (disk section, tenths of a second): local I/O that makes no
 * progress for that long fails the disk, as an I/O error would, and
 * on-io-error decides what follows; requests still stuck in the device
 * are abandoned (the disk is detached once they return). Main loop,
 * every 100 ms while the resource is up.
 */
static void disk_watch(void *arg)
{
	struct resource *r = arg;
	int64_t ms = (int64_t)conf_res_num(tandemd_conf(r->d), resource_cr(r), CONF_SECT_DISK, "disk-timeout") * 100;
	unsigned int i;

	r->disk_watch_on = false;
	if (!r->up)
		return;
	for (i = 0; ms > 0 && i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];

		if (v->md && !volume_diskless(v) && volume_stalled(v, ms)) {
			log_res(LOG_ERR, r->name,
				"volume %u: Local backing device failed to meet the disk-timeout "
				"(%lld ms): its requests are abandoned",
				v->vnr, (long long)ms);
			volume_io_error(v, VOLUME_ERR_DATA, "within disk-timeout", -ETIMEDOUT);
		}
	}
	if (qb_loop_timer_add(r->d->loop, QB_LOOP_LOW, 100 * QB_TIME_NS_IN_MSEC, r, disk_watch,
			      &r->disk_watch) == 0)
		r->disk_watch_on = true;
}

void resource_volume_failed(struct volume *v)
{
	struct resource *r = v->res;
	const char *policy = conf_res_text(tandemd_conf(r->d), resource_cr(r), CONF_SECT_DISK, "on-io-error");

	if (!v->md)
		return;
	state_change_disk(v->st, DISK_FAILED, "local I/O error");
	peer_state_changed(r);
	if (policy && !strcmp(policy, "call-local-io-error") &&
	    handler_run(r, "local-io-error", (int)v->vnr, local_io_error_done, v) == 0)
		return; /* detaches when the handler is done */
	detach_failed(r, v);
}

void resource_volume_error_passed(struct volume *v)
{
	struct resource *r = v->res;

	if (!v->md || volume_disk(v) <= DISK_INCONSISTENT)
		return;
	state_change_disk(v->st, DISK_INCONSISTENT, "local I/O error passed on");
	pthread_mutex_lock(&v->lock);
	volume_set_flags(v, 0, MDF_CONSISTENT | MDF_WAS_UP_TO_DATE);
	if (volume_unlock(v) < 0)
		log_res(LOG_ERR, r->name, "volume %u: cannot record Inconsistent in the metadata",
			v->vnr);
	peer_state_changed(r);
	check_incon_degr(r);
}

/*
 * quorum: DRBD 9's `options { quorum majority; on-no-quorum ...; }` in
 * tandemd (doc/arbiter.md §6.5; the rules are lib/quorum.c).
 *
 * tandem-arbiterd tells tandemd whether this node's partition is quorate
 * (corosync votequorum) with the control command `quorum`; tandemd keeps
 * the last value (d->quorate), quorate until told otherwise: without an
 * arbiter nothing is enforced (§8). Under `quorum majority`:
 *
 *  - a Secondary without quorum refuses `primary` (exit 11); `primary
 *    --force` promotes anyway, logs why, and that run as Primary is exempt
 *    from on-no-quorum until quorum comes back (the operator chose to serve
 *    I/O without it);
 *  - a Primary without quorum: `suspend-io` freezes its volumes (reason
 *    VOLUME_FROZEN_QUORUM, state flag susp_quo, DRBD 9's susp_quorum) until
 *    quorum returns: new reads and writes wait, as under fencing's freeze,
 *    which is lifted on its own (resume-io does not lift this one, nor this
 *    one fencing's); `io-error` makes the NBD front end fail new writes,
 *    trims and write-zeroes with EIO (r->quorum_io), while reads and
 *    flushes are served from the local disk.
 *
 * Everything here runs on the main loop.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "quorum.h"
#include "control/control.h"
#include "peer/peer.h"
#include "state/state-change.h"
#include "volume/volume.h"

static bool partition_quorate(const struct tandemd *d)
{
	return __atomic_load_n(&d->quorate, __ATOMIC_ACQUIRE);
}

static struct quorum_conf conf_of(const struct resource *r)
{
	return quorum_conf_of(tandemd_conf(r->d), resource_cr(r));
}

bool quorum_majority(const struct resource *r)
{
	return conf_of(r).policy == QUORUM_MAJORITY;
}

/* Lift the quorum suspension: frozen requests go on. */
static void unsuspend(struct resource *r, const char *why)
{
	state_change_flag(r, SC_SUSP_QUO, false, why);
	peer_io_resumed(r, false);
	volume_freeze_all(r, VOLUME_FROZEN_QUORUM, false);
}

void quorum_apply(struct resource *r, const char *why)
{
	struct quorum_conf q = conf_of(r);
	bool quorate = partition_quorate(r->d), forced;
	enum quorum_io io, old;
	struct state s;

	pthread_mutex_lock(&r->st_lock);
	if (quorate || r->st.role != ROLE_PRIMARY)
		r->quorum_forced = false; /* --force covered one run without quorum */
	forced = r->quorum_forced;
	s = r->st;
	pthread_mutex_unlock(&r->st_lock);
	io = quorum_io(q, quorate, s.role, forced);
	old = (enum quorum_io)__atomic_exchange_n(&r->quorum_io, (int)io, __ATOMIC_ACQ_REL);
	if (io == QUORUM_IO_SUSPEND && !s.susp_quo) {
		volume_freeze_all(r, VOLUME_FROZEN_QUORUM, true);
		state_change_flag(r, SC_SUSP_QUO, true, why);
	} else if (io != QUORUM_IO_SUSPEND && s.susp_quo) {
		unsuspend(r, why);
	}
	if (io == old)
		return;
	if (io == QUORUM_IO_SUSPEND)
		log_res(LOG_WARNING, r->name,
			"no quorum: new I/O waits until quorum returns (on-no-quorum suspend-io)");
	else if (io == QUORUM_IO_ERROR)
		log_res(LOG_ERR, r->name,
			"no quorum: new writes fail with EIO until quorum returns (on-no-quorum "
			"io-error)");
	else
		log_res(LOG_NOTICE, r->name, "I/O goes on: %s", why);
}

json_object *quorum_cmd(struct tandemd *d, json_object *req, struct reply_err *e)
{
	json_object *v, *o;
	bool q, old;
	unsigned int i;

	if (!json_object_object_get_ex(req, "quorate", &v) ||
	    !json_object_is_type(v, json_type_boolean)) {
		ERRF(e, 1, "'quorate' must be true or false");
		return NULL;
	}
	q = json_object_get_boolean(v);
	old = __atomic_exchange_n(&d->quorate, q, __ATOMIC_ACQ_REL);
	if (old != q) {
		log_qb(q ? LOG_NOTICE : LOG_WARNING,
		       "quorum %s: this node's partition is %squorate (corosync votequorum)",
		       q ? "regained" : "lost", q ? "" : "not ");
		for (i = 0; i < d->n_res; i++)
			if (conf_of(d->res[i]).policy == QUORUM_MAJORITY)
				log_res(q ? LOG_NOTICE : LOG_WARNING, d->res[i]->name, "quorum %s",
					q ? "regained" : "lost");
	}
	for (i = 0; i < d->n_res; i++)
		quorum_apply(d->res[i], q ? "quorum regained" : "quorum lost");
	o = json_object_new_object();
	json_object_object_add(o, "quorate", json_object_new_boolean(q));
	json_object_object_add(o, "changed", json_object_new_boolean(old != q));
	return o;
}

int quorum_promote_check(struct resource *r, bool force, bool *forced, struct reply_err *e)
{
	if (quorum_may_promote(conf_of(r).policy, partition_quorate(r->d), force, forced) == 0)
		return 0;
	e->exit = QUORUM_EXIT_NO_QUORUM;
	snprintf(e->msg, sizeof(e->msg), "State change failed: no quorum");
	snprintf(e->hint, sizeof(e->hint),
		 "this partition has no quorum (corosync votequorum); use --force to promote "
		 "anyway");
	log_res(LOG_WARNING, r->name, "primary refused: %s (quorum majority)", e->msg);
	return -EPERM;
}

void quorum_role_changed(struct resource *r, bool forced)
{
	if (forced) {
		log_res(LOG_WARNING, r->name,
			"promoted without quorum: forced by 'primary --force' (this partition has "
			"no quorum; on-no-quorum applies again once quorum came back and is lost)");
		pthread_mutex_lock(&r->st_lock);
		r->quorum_forced = true;
		pthread_mutex_unlock(&r->st_lock);
	}
	quorum_apply(r, forced ? "primary --force" : "role changed");
}

void quorum_demoting(struct resource *r)
{
	if (!resource_state(r).susp_quo)
		return;
	log_res(LOG_WARNING, r->name,
		"secondary --force: the requests waiting for quorum are let through before the "
		"clients are dropped");
	__atomic_store_n(&r->quorum_io, (int)QUORUM_IO_ON, __ATOMIC_RELEASE);
	unsuspend(r, "secondary --force");
}

void quorum_status(struct resource *r, json_object *o)
{
	struct quorum_conf q = conf_of(r);
	json_object *j = json_object_new_object();

	json_object_object_add(j, "policy", json_object_new_string(quorum_policy_name(q.policy)));
	json_object_object_add(j, "on_no_quorum", json_object_new_string(quorum_onq_name(q.onq)));
	json_object_object_add(j, "quorate", json_object_new_boolean(partition_quorate(r->d)));
	json_object_object_add(o, "quorum", j);
}

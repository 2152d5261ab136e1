/*
 * reload: re-read the configuration (SIGHUP, `tandemadm adjust`) and bind
 * the resources to it. A resource that is down simply takes its new
 * settings; one that is up keeps running and takes settings that need a
 * re-attach (disk, meta-disk, device) at its next up; new resources appear
 * down; removed ones go away once they are down.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "tls.h"
#include "control/control.h"
#include "front/nbd-srv.h"
#include "peer/peer.h"
#include "state/state-change.h"
#include "volume/volume.h"

int tandemd_add_resource(struct tandemd *d, const struct conf_res *cr)
{
	struct resource **n, *r;

	r = calloc(1, sizeof(*r));
	if (!r || resource_init(d, r, cr) < 0) {
		free(r);
		return -ENOMEM;
	}
	pthread_rwlock_wrlock(&d->res_lock);
	n = realloc(d->res, (d->n_res + 1) * sizeof(*n));
	if (n) {
		d->res = n;
		d->res[d->n_res++] = r;
	}
	pthread_rwlock_unlock(&d->res_lock);
	if (!n) {
		resource_fini(r);
		free(r);
		return -ENOMEM;
	}
	return 0;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Can a running resource move to this configuration without re-attaching? */
static bool same_volumes(const struct resource *r, const struct conf_res *cr)
{
	const struct conf_vol *cv;
	unsigned int i = 0;

	for (cv = cr->me->vols; cv; cv = cv->next, i++) {
		const struct conf_vol *o;

		if (i >= r->n_vols)
			return false;
		o = r->vols[i].cv;
		if (o->vnr != cv->vnr || o->minor != cv->minor || !same_str(o->disk, cv->disk) ||
		    o->md != cv->md || !same_str(o->md_dev, cv->md_dev) || o->md_index != cv->md_index)
			return false;
	}
	return i == r->n_vols;
}

static void rebind(struct resource *r, const struct conf_res *cr)
{
	/* r->name and the volumes' cv stay: same name, same volumes
	 * (same_volumes), in the old configuration, which is kept */
	__atomic_store_n(&r->cr, cr, __ATOMIC_RELEASE);
	r->conf_pending = false;
}

/*
 * The TLS files of every resource that is connecting or connected, in the
 * new configuration: a set that does not load is refused now, with the
 * reason, rather than found at the next connection (doc/security.md
 * section 5, key rotation). 0, or -EINVAL with msg filled.
 */
static int check_tls_files(struct tandemd *d, const struct conf *nc, char *msg, size_t msglen)
{
	const struct conf_res *cr;

	for (cr = conf_resources(nc); cr; cr = cr->next) {
		const struct resource *r = resource_find(d, cr->name);
		char why[TLS_REASON_MAX + 256];

		if (!r || !r->peer || !cr->me)
			continue;
		if (peer_tls_check(nc, cr, why, sizeof(why)) < 0) {
			snprintf(msg, msglen, "%s not applied: resource %s: %.400s", d->conf_path,
				 cr->name, why);
			return -EINVAL;
		}
	}
	return 0;
}

int tandemd_reload(struct tandemd *d, char *msg, size_t msglen)
{
	struct conf *nc, **retired;
	const struct conf_res *cr;
	struct diag *diag;
	unsigned int i, kept = 0;
	int rc;

	if (diag_new(&diag) < 0) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	rc = conf_load(d->conf_path, &d->conf_opts, diag, &nc);
	if (rc < 0) {
		FILE *f = fmemopen(msg, msglen, "w");

		if (f) {
			fprintf(f, "%s not applied: ", d->conf_path);
			diag_print(diag, f);
			fclose(f);
		}
		diag_free(diag);
		return rc;
	}
	diag_free(diag);
	rc = check_tls_files(d, nc, msg, msglen);
	if (rc < 0) {
		conf_free(nc);
		log_warn("%s", msg);
		return rc;
	}
	retired = realloc(d->retired, (d->n_retired + 1) * sizeof(*retired));
	if (!retired) {
		conf_free(nc);
		snprintf(msg, msglen, "%s not applied: out of memory", d->conf_path);
		return -ENOMEM;
	}
	d->retired = retired;

	/* Existing resources: rebind, or keep the old settings while up.
	 * Other threads look resources up (resync-after): not meanwhile. */
	pthread_rwlock_wrlock(&d->res_lock);
	for (i = 0; i < d->n_res; i++) {
		struct resource *r = d->res[i];

		cr = conf_find_res(nc, r->name);
		if (cr && cr->me && (!r->up || same_volumes(r, cr))) {
			if (!r->up) {
				resource_fini(r);
				resource_init(d, r, cr);
			} else {
				rebind(r, cr);
			}
			continue;
		}
		if (r->up) {
			r->conf_pending = cr && cr->me;
			if (cr && cr->me)
				log_res(LOG_WARNING, r->name,
					"its volumes changed in the configuration; the change "
					"takes effect after 'tandemadm down' and 'up'");
			else
				log_res(LOG_WARNING, r->name,
					"was removed from the configuration but is up; it goes "
					"away at the next reload after 'tandemadm down'");
			continue;
		}
		log_res(LOG_NOTICE, r->name, "removed from the configuration");
		resource_fini(r);
		free(r);
		d->res[i] = NULL;
	}
	for (i = 0; i < d->n_res; i++)
		if (d->res[i])
			d->res[kept++] = d->res[i];
	d->n_res = kept;
	pthread_rwlock_unlock(&d->res_lock);
	/* New resources appear down. */
	for (cr = conf_resources(nc); cr; cr = cr->next) {
		if (!cr->me || resource_find(d, cr->name))
			continue;
		if (tandemd_add_resource(d, cr) == 0)
			log_res(LOG_NOTICE, cr->name, "added from the configuration (down)");
	}
	/* The old configuration is kept until the daemon exits: up resources
	 * may still use it, and any thread may be reading it
	 * (tandemd_conf(), resource_cr()). Reloads are rare and small. */
	d->retired[d->n_retired++] = d->conf;
	__atomic_store_n(&d->conf, nc, __ATOMIC_RELEASE);
	for (i = 0; i < d->n_res; i++) /* quorum and on-no-quorum may have changed */
		quorum_apply(d->res[i], "configuration reloaded");
	snprintf(msg, msglen, "%s applied", d->conf_path);
	log_info("%s", msg);
	return 0;
}

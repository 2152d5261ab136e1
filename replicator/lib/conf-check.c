/*
 * conf-check: semantic rules over a parsed configuration.
 *
 * DRBD's own parse-time rules plus those DRBD leaves to its kernel module,
 * so that a bad config is refused when it is loaded, with its position,
 * and not when a resource is brought up. One table, one function a rule.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conf-int.h"
#include "peercred.h"

#define ERR(c, loc, kw, ...) diag_add((c)->diag, DIAG_ERR, loc, kw, __VA_ARGS__)
#define WARN(c, loc, kw, ...) diag_add((c)->diag, DIAG_WARN, loc, kw, __VA_ARGS__)

/* Effective value and the place to blame for it. */
static const struct conf_val *eff(const struct conf *c, const struct conf_res *r,
				  enum conf_sect s, const char *name)
{
	return conf_res_get(c, r, s, name);
}

static const char *protocol_of(const struct conf *c, const struct conf_res *r)
{
	return conf_res_text(c, r, CONF_SECT_NET, "protocol");
}

static void check_res_name(struct conf *c, struct conf_res *r)
{
	const char *s;

	if (r->name[0] == '\0' || r->name[0] == '.' || r->name[0] == '-' ||
	    strlen(r->name) > 128)
		goto bad;
	for (s = r->name; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-:=@%",
			    *s))
			goto bad;
	return;
bad:
	ERR(c, &r->loc, "resource",
	    "resource name '%s' must be 1 to 128 letters, digits or _.+-:=@%% and must not "
	    "start with '.' or '-' (it names files and Pacemaker parameters)",
	    r->name);
}

static void check_hosts(struct conf *c, struct conf_res *r)
{
	struct conf_host *h, *o;
	struct conf_vol *v;
	unsigned int n = 0, i;

	for (h = r->hosts; h; h = h->next) {
		n++;
		for (i = 0; i < h->n_names; i++) {
			const char *nm = h->names[i];
			size_t k, len = strlen(nm);

			for (k = 0; k < len; k++)
				if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
					    "._-",
					    nm[k]))
					break;
			if (len == 0 || len > 128 || k < len)
				ERR(c, &h->loc, "on",
				    "host name '%s' must be 1 to 128 letters, digits or ._- (it is "
				    "compared with `uname -n`)",
				    nm);
		}
		if (h->damaged || r->damaged)
			continue;
		if (!h->addr.af)
			ERR(c, &h->loc, h->floating ? "floating" : "on",
			    "resource %s, host section %s: missing 'address'", r->name,
			    h->floating ? "floating" : h->names[0]);
		if (!h->vols)
			ERR(c, &h->loc, h->floating ? "floating" : "on",
			    "resource %s, host section %s: no volume; add device, disk and "
			    "meta-disk",
			    r->name, h->floating ? "floating" : h->names[0]);
		for (v = h->vols; v; v = v->next) {
			const char *who = h->floating ? h->addr.ip : h->names[0];

			if (v->minor < 0)
				ERR(c, &v->loc, "device",
				    "resource %s, on %s, volume %u: missing 'device'", r->name, who,
				    v->vnr);
			if (!v->disk)
				ERR(c, &v->loc, "disk",
				    "resource %s, on %s, volume %u: missing 'disk'", r->name, who,
				    v->vnr);
			if (v->md == CONF_MD_UNSET)
				ERR(c, &v->loc, "meta-disk",
				    "resource %s, on %s, volume %u: missing 'meta-disk' (usually "
				    "'meta-disk internal;')",
				    r->name, who, v->vnr);
		}
		for (o = h->next; o; o = o->next)
			for (i = 0; i < h->n_names; i++)
				if (conf_host_has_name(o, h->names[i]))
					ERR(c, &o->loc, "on",
					    "resource %s: host %s has two host sections (first at "
					    "%s:%d)",
					    r->name, h->names[i], h->loc.file, h->loc.line);
	}
	if (n != 2 && !r->damaged)
		ERR(c, &r->loc, "resource",
		    "resource %s has %u host section%s; a two-node resource needs exactly two "
		    "'on' (or 'floating') sections",
		    r->name, n, n == 1 ? "" : "s");
}

/* One thing that must be unique per node: a minor, a device, an address. */
struct uniq {
	const char *host; /* a host name, or "floating IP" */
	const char *what;
	const char *value; /* in the conf's arena */
	const char *res;
	struct diag_loc loc;
	size_t idx; /* order of appearance */
	const char *first_res; /* set on a duplicate: where the first one is */
	struct diag_loc first_loc;
};

static int uniq_cmp_idx(const void *x, const void *y)
{
	const struct uniq *a = x, *b = y;

	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int uniq_cmp_key(const struct uniq *a, const struct uniq *b)
{
	int c = strcmp(a->what, b->what);

	if (!c)
		c = strcmp(a->host, b->host);
	if (!c)
		c = strcmp(a->value, b->value);
	return c;
}

static int uniq_cmp(const void *x, const void *y)
{
	const struct uniq *a = x, *b = y;
	int c = uniq_cmp_key(a, b);

	return c ? c : (a->idx < b->idx ? -1 : a->idx > b->idx);
}

static void uniq_add(struct uniq **u, size_t *n, size_t *cap, const struct uniq *e)
{
	if (!e->value)
		return; /* out of memory: nothing to compare */
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		struct uniq *nu = realloc(*u, nc * sizeof(*nu));

		if (!nu)
			return;
		*u = nu;
		*cap = nc;
	}
	(*u)[(*n)++] = *e;
}

static void check_unique(struct conf *c)
{
	struct uniq *u = NULL, e;
	size_t n = 0, cap = 0, i, j;
	struct conf_res *r;
	struct conf_host *h;
	struct conf_vol *v;
	unsigned int k;

	for (r = c->res_head; r; r = r->next) {
		for (h = r->hosts; h; h = h->next) {
			for (k = 0; k < (h->floating ? 1 : h->n_names); k++) {
				e.host = h->floating ? h->addr.ip : h->names[k];
				e.res = r->name;
				if (!e.host)
					continue;
				if (h->addr.af) {
					e.what = "address";
					e.loc = h->addr.loc;
					e.value = arena_printf(c->arena,
							       strchr(h->addr.ip, ':') ? "[%s]:%u"
										: "%s:%u",
							       h->addr.ip, h->addr.port);
					uniq_add(&u, &n, &cap, &e);
				}
				for (v = h->vols; v; v = v->next) {
					e.loc = v->loc;
					if (v->minor >= 0) {
						e.what = "minor";
						e.value = arena_printf(c->arena, "%d", v->minor);
						uniq_add(&u, &n, &cap, &e);
					}
					if (v->device) {
						e.what = "device";
						e.value = v->device;
						uniq_add(&u, &n, &cap, &e);
					}
				}
			}
		}
	}
	/* sort, so that equal entries are neighbours: n log n, not n^2 */
	for (i = 0; i < n; i++) {
		u[i].idx = i;
		u[i].first_res = NULL;
	}
	if (n > 1)
		qsort(u, n, sizeof(*u), uniq_cmp);
	for (i = 1, j = 0; i < n; i++) {
		if (uniq_cmp_key(&u[i], &u[j]) != 0) {
			j = i; /* first of a new group */
			continue;
		}
		u[i].first_res = u[j].res;
		u[i].first_loc = u[j].loc;
	}
	/* report in the order of appearance */
	if (n > 1)
		qsort(u, n, sizeof(*u), uniq_cmp_idx);
	for (i = 0; i < n; i++) {
		if (!u[i].first_res)
			continue;
		ERR(c, &u[i].loc, u[i].what,
		    "%s %s is used twice on host %s (resource %s here, resource %s at %s:%d); "
		    "each must be unique per host",
		    u[i].what, u[i].value, u[i].host, u[i].res, u[i].first_res,
		    u[i].first_loc.file, u[i].first_loc.line);
	}
	/* The two ends of one resource cannot share an endpoint either. */
	for (r = c->res_head; r; r = r->next) {
		struct conf_host *a = r->hosts, *b = a ? a->next : NULL;

		if (a && b && a->addr.af && b->addr.af && !strcmp(a->addr.ip, b->addr.ip) &&
		    a->addr.port == b->addr.port)
			ERR(c, &b->addr.loc, "address",
			    strchr(b->addr.ip, ':')
				    ? "resource %s: both host sections use [%s]:%u; each node needs "
				      "its own endpoint"
				    : "resource %s: both host sections use %s:%u; each node needs its "
				      "own endpoint",
			    r->name, b->addr.ip, b->addr.port);
	}
	free(u);
}

static void check_protocol(struct conf *c, struct conf_res *r)
{
	const struct conf_val *v;
	const char *proto = protocol_of(c, r);

	v = eff(c, r, CONF_SECT_DISK, "fencing");
	if (v && !strcmp(v->text, "resource-and-stonith") && !strcmp(proto, "A"))
		ERR(c, &v->loc, "fencing",
		    "resource %s: fencing resource-and-stonith needs protocol B or C (protocol A "
		    "can lose acknowledged writes); change one of them",
		    r->name);
	v = eff(c, r, CONF_SECT_NET, "allow-two-primaries");
	if (v && v->v.yes && strcmp(proto, "C"))
		ERR(c, &v->loc, "allow-two-primaries",
		    "resource %s: allow-two-primaries needs protocol C (it is %s)", r->name, proto);
	v = eff(c, r, CONF_SECT_NET, "on-congestion");
	if (v && strcmp(v->text, "block") && strcmp(proto, "A"))
		ERR(c, &v->loc, "on-congestion",
		    "resource %s: on-congestion %s needs protocol A (it is %s)", r->name, v->text,
		    proto);
}

static void check_asb(struct conf *c, struct conf_res *r)
{
	const struct conf_val *v = eff(c, r, CONF_SECT_NET, "after-sb-0pri");
	const struct conf_host *h;
	const char *name;

	if (!v || v->v.idx != CONF_ASB_DISCARD_NODE)
		return;
	name = v->text + strlen("discard-node-");
	for (h = r->hosts; h; h = h->next)
		if (conf_host_has_name(h, name))
			return;
	ERR(c, &v->loc, "after-sb-0pri",
	    "resource %s: discard-node-%s names no host of this resource; use one of its 'on' "
	    "names",
	    r->name, name);
}

/* drbd.conf(5) asks for timeout below connect-int and ping-int, but neither
 * drbdadm-84 nor the 8.4 kernel enforces it, and nothing breaks: a warning. */
static void check_timeouts(struct conf *c, struct conf_res *r)
{
	uint64_t timeout = conf_res_num(c, r, CONF_SECT_NET, "timeout");
	uint64_t cint = conf_res_num(c, r, CONF_SECT_NET, "connect-int");
	uint64_t pint = conf_res_num(c, r, CONF_SECT_NET, "ping-int");
	const struct conf_val *v = eff(c, r, CONF_SECT_NET, "timeout");
	const struct diag_loc *loc = v ? &v->loc : &r->loc;

	if (timeout >= cint * 10)
		WARN(c, loc, "timeout",
		     "resource %s: timeout (%llu.%llu s) should be below connect-int (%llu s), as "
		     "drbd.conf(5) asks (DRBD 8.4 does not enforce it); lower timeout or raise "
		     "connect-int",
		     r->name, (unsigned long long)timeout / 10, (unsigned long long)timeout % 10,
		     (unsigned long long)cint);
	if (timeout >= pint * 10)
		WARN(c, loc, "timeout",
		     "resource %s: timeout (%llu.%llu s) should be below ping-int (%llu s), as "
		     "drbd.conf(5) asks (DRBD 8.4 does not enforce it); lower timeout or raise "
		     "ping-int",
		     r->name, (unsigned long long)timeout / 10, (unsigned long long)timeout % 10,
		     (unsigned long long)pint);
}

static void check_resync_after(struct conf *c, struct conf_res *r)
{
	const struct conf_val *v = eff(c, r, CONF_SECT_DISK, "resync-after");
	const struct conf_res *t = r;
	unsigned int steps = 0;

	if (!v)
		return;
	if (!strcmp(v->text, "-1") || !strcmp(v->text, "none"))
		return;
	if (!strcmp(v->text, r->name)) {
		ERR(c, &v->loc, "resync-after", "resource %s cannot resync after itself", r->name);
		return;
	}
	if (!conf_find_res(c, v->text)) {
		ERR(c, &v->loc, "resync-after",
		    "resource %s: resync-after names '%s', which is not a resource of this "
		    "configuration",
		    r->name, v->text);
		return;
	}
	while (t && (v = eff(c, t, CONF_SECT_DISK, "resync-after")) && steps++ < 1000) {
		t = conf_find_res(c, v->text);
		if (t == r) {
			ERR(c, &eff(c, r, CONF_SECT_DISK, "resync-after")->loc, "resync-after",
			    "resource %s: the resync-after chain loops back to this resource",
			    r->name);
			return;
		}
	}
}

static void check_startup(struct conf *c, struct conf_res *r)
{
	const struct conf_val *v = eff(c, r, CONF_SECT_STARTUP, "become-primary-on");
	const struct conf_host *h;

	if (!v)
		return;
	if (!strcmp(v->text, "both")) {
		if (!conf_res_bool(c, r, CONF_SECT_NET, "allow-two-primaries"))
			ERR(c, &v->loc, "become-primary-on",
			    "resource %s: become-primary-on both needs net { allow-two-primaries; }",
			    r->name);
		return;
	}
	for (h = r->hosts; h; h = h->next)
		if (conf_host_has_name(h, v->text))
			return;
	ERR(c, &v->loc, "become-primary-on",
	    "resource %s: '%s' is not a host of this resource (use one of its 'on' names, or "
	    "both)",
	    r->name, v->text);
}

static void check_auth(struct conf *c, struct conf_res *r)
{
	const struct conf_val *alg = eff(c, r, CONF_SECT_NET, "cram-hmac-alg");
	const struct conf_val *sec = eff(c, r, CONF_SECT_NET, "shared-secret");
	const struct conf_val *ver;

	if (alg && !strcmp(alg->text, "crc32c")) {
		ERR(c, &alg->loc, "cram-hmac-alg",
		    "resource %s: crc32c is a checksum, not a hash for HMAC; use sha256 or sha1",
		    r->name);
		return;
	}
	/* after a parse error the missing partner may be the value refused */
	if (r->damaged)
		return;
	if (alg && !sec)
		WARN(c, &alg->loc, "cram-hmac-alg",
		     "resource %s: cram-hmac-alg without shared-secret authenticates with an empty "
		     "secret; set net { shared-secret \"...\"; }",
		     r->name);
	if (sec && !alg)
		WARN(c, &sec->loc, "shared-secret",
		     "resource %s: shared-secret has no effect without cram-hmac-alg", r->name);
	if (c->warn_unauthenticated && conf_res_unauthenticated(c, r))
		WARN(c, &r->loc, "shared-secret",
		     "resource %s: its peer would not be authenticated, so tandemd will not bring "
		     "it up; set net { cram-hmac-alg sha256; shared-secret \"...\"; } or "
		     "net { tls yes; tls-ca ...; tls-certificate ...; tls-key ...; } on both "
		     "nodes, or net { allow-unauthenticated yes; } to replicate without "
		     "authentication",
		     r->name);
	ver = eff(c, r, CONF_SECT_NET, "cram-hmac-version");
	if (alg && ver && !strcmp(ver->text, "1"))
		WARN(c, &ver->loc, "cram-hmac-version",
		     "resource %s: cram-hmac-version 1 (DRBD's) lets an attacker relay answers "
		     "between resources that share the secret and between the two sockets; use 2 "
		     "(the default) unless the peer cannot",
		     r->name);
}

/* tls yes needs its three files, each an absolute path; without it they
 * do nothing. */
static void check_tls(struct conf *c, struct conf_res *r)
{
	static const char *const files[] = {"tls-ca", "tls-certificate", "tls-key"};
	const struct conf_val *tls = eff(c, r, CONF_SECT_NET, "tls");
	bool on = conf_res_bool(c, r, CONF_SECT_NET, "tls");
	char missing[64] = "";

	if (r->damaged)
		return;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const struct conf_val *v = eff(c, r, CONF_SECT_NET, files[i]);

		if (!v) {
			size_t l = strlen(missing);

			snprintf(missing + l, sizeof(missing) - l, "%s%s", l ? ", " : "", files[i]);
			continue;
		}
		if (!on)
			WARN(c, &v->loc, files[i], "resource %s: %s has no effect without tls yes",
			     r->name, files[i]);
		else if (v->text[0] != '/')
			ERR(c, &v->loc, files[i],
			    "resource %s: %s must be an absolute path (tandemd does not run in the "
			    "directory of the configuration), not '%s'",
			    r->name, files[i], v->text);
	}
	if (on && missing[0])
		ERR(c, &tls->loc, "tls",
		    "resource %s: tls yes needs tls-ca, tls-certificate and tls-key in the net "
		    "section; missing: %s (doc/security.md section 5 shows how to make them)",
		    r->name, missing);
}

static void check_misc(struct conf *c, struct conf_res *r)
{
	const struct conf_val *v = eff(c, r, CONF_SECT_DISK, "al-extents");

	if (v && v->v.num > 6433)
		WARN(c, &v->loc, "al-extents",
		     "resource %s: %llu is above 6433, the most the default 32 KiB activity-log "
		     "ring can hold; 6433 is used",
		     r->name, (unsigned long long)v->v.num);
	v = eff(c, r, CONF_SECT_NET, "discard-my-data");
	if (v)
		WARN(c, &v->loc, "discard-my-data",
		     "resource %s: in the configuration it applies to every connect; prefer the "
		     "one-shot 'tandemadm connect --discard-my-data %s'",
		     r->name, r->name);
}

/* on-no-quorum only matters under quorum majority (DRBD 9 does not say so). */
static void check_quorum(struct conf *c, struct conf_res *r)
{
	const struct conf_val *onq = eff(c, r, CONF_SECT_OPTIONS, "on-no-quorum");

	if (onq && !strcmp(conf_res_text(c, r, CONF_SECT_OPTIONS, "quorum"), "off"))
		WARN(c, &onq->loc, "on-no-quorum",
		     "resource %s: on-no-quorum has no effect while quorum is off; add "
		     "options { quorum majority; } or remove it",
		     r->name);
	/* a Primary freezes on the peer's loss until fence-peer's verdict
	 * (doc/arbiter.md §6.5): without a fencing policy nothing freezes */
	if (!strcmp(conf_res_text(c, r, CONF_SECT_OPTIONS, "quorum"), "majority") &&
	    !strcmp(conf_res_text(c, r, CONF_SECT_DISK, "fencing"), "dont-care")) {
		const struct conf_val *q = eff(c, r, CONF_SECT_OPTIONS, "quorum");

		WARN(c, q ? &q->loc : &r->loc, "quorum",
		     "resource %s: quorum majority without a fencing policy: a Primary cut off "
		     "from its peer acknowledges writes alone until corosync reports the lost "
		     "quorum; set disk { fencing resource-only; } and a fence-peer handler "
		     "(doc/fence-handlers.md)",
		     r->name);
	}
}

/* options { nbd-allow-group }: the group exists here (on this node's
 * resources only: the others are checked where they run). */
static void check_nbd_group(struct conf *c, struct conf_res *r)
{
	const struct conf_val *g = eff(c, r, CONF_SECT_OPTIONS, "nbd-allow-group");
	gid_t gid;
	int rc;

	if (!g || !r->me)
		return;
	rc = peercred_group(g->text, &gid);
	if (rc == 0)
		return;
	if (rc != -ENOENT)
		WARN(c, &g->loc, "nbd-allow-group",
		     "resource %s: cannot look group '%s' up: %s; only root may use the NBD "
		     "export while it cannot be found",
		     r->name, g->text, strerror(-rc));
	else
		ERR(c, &g->loc, "nbd-allow-group",
		    "resource %s: there is no group '%s' on this node; create it (groupadd "
		    "--system %s) or name an existing one (getent group)",
		    r->name, g->text, g->text);
}

static void (*const res_rules[])(struct conf *, struct conf_res *) = {
	check_res_name,	    check_hosts,   check_protocol, check_asb,  check_timeouts,
	check_resync_after, check_startup, check_auth,	   check_tls, check_misc, check_quorum,
	check_nbd_group,
};

void conf_check(struct conf *c)
{
	struct conf_res *r;
	size_t i;

	for (r = c->res_head; r; r = r->next)
		for (i = 0; i < sizeof(res_rules) / sizeof(res_rules[0]); i++)
			res_rules[i](c, r);
	check_unique(c);
}

/*
 * conf: loading, host resolution and effective-value lookup of a
 * configuration. Parsing is in conf-parse.c, checks in conf-check.c.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "conf-int.h"

static int conf_new(const struct conf_load_opts *opts, struct diag *d, struct conf **out)
{
	struct utsname u;
	const char *env = getenv("TANDEM_HOSTNAME");
	struct conf *c;
	int rc;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	rc = arena_new(&c->arena);
	if (rc < 0) {
		free(c);
		return rc;
	}
	c->diag = d;
	c->glob_left = CONF_GLOB_ENTRIES_MAX;
	c->no_ip_check = opts && opts->no_ip_check;
	c->warn_unauthenticated = opts && opts->warn_unauthenticated;
	if (opts && opts->fs) {
		c->fs = opts->fs;
		c->fs_ctx = opts->fs_ctx;
	}
	if (opts && opts->hostname)
		c->hostname = arena_strdup(c->arena, opts->hostname);
	else if (env && *env)
		c->hostname = arena_strdup(c->arena, env);
	else if (uname(&u) == 0)
		c->hostname = arena_strdup(c->arena, u.nodename);
	else
		c->hostname = arena_strdup(c->arena, "localhost");
	if (!c->hostname) {
		conf_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void conf_free(struct conf *c)
{
	if (!c)
		return;
	arena_free(c->arena);
	free(c);
}

static int conf_finish(struct conf *c, int rc, struct conf **out)
{
	/* The semantic rules run even after syntax errors, so that one run
	 * reports every problem; they cope with half-parsed sections. */
	if (rc == 0) {
		conf_resolve(c);
		conf_check(c);
	}
	if (rc == 0 && diag_count(c->diag, DIAG_ERR) > 0)
		rc = -EINVAL;
	if (rc < 0) {
		conf_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int conf_load(const char *path, const struct conf_load_opts *opts, struct diag *d,
	      struct conf **out)
{
	struct conf *c;
	int rc;

	*out = NULL;
	rc = conf_new(opts, d, &c);
	if (rc < 0)
		return rc;
	c->file = arena_strdup(c->arena, path);
	rc = c->file ? conf_parse_file(c, path, NULL) : -ENOMEM;
	return conf_finish(c, rc, out);
}

int conf_load_buf(const char *name, const char *buf, size_t len, const struct conf_load_opts *opts,
		  struct diag *d, struct conf **out)
{
	struct conf *c;
	int rc;

	*out = NULL;
	rc = conf_new(opts, d, &c);
	if (rc < 0)
		return rc;
	c->file = arena_strdup(c->arena, name);
	/* count the buffer as the top file, as conf_load counts its file */
	c->stack[c->depth++] = c->file;
	rc = c->file ? conf_parse_buf(c, c->file, buf, len) : -ENOMEM;
	c->depth--;
	return conf_finish(c, rc, out);
}

bool conf_res_unauthenticated(const struct conf *c, const struct conf_res *r)
{
	return r->me && r->peer && !conf_res_get(c, r, CONF_SECT_NET, "cram-hmac-alg") &&
	       !conf_res_bool(c, r, CONF_SECT_NET, "tls") &&
	       !conf_res_bool(c, r, CONF_SECT_NET, "allow-unauthenticated");
}

bool conf_host_has_name(const struct conf_host *h, const char *name)
{
	unsigned int i;

	for (i = 0; i < h->n_names; i++)
		if (strcmp(h->names[i], name) == 0)
			return true;
	return false;
}

/* Is ip (in family af) configured on a local interface? */
static bool addr_is_local(const struct conf_addr *a)
{
	struct ifaddrs *ifs, *i;
	unsigned char want[sizeof(struct in6_addr)];
	bool v6 = strcmp(a->af, "ipv6") == 0;
	bool found = false;

	if (inet_pton(v6 ? AF_INET6 : AF_INET, a->ip, want) != 1 || getifaddrs(&ifs) < 0)
		return false;
	for (i = ifs; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		if (!v6 && i->ifa_addr->sa_family == AF_INET)
			found = !memcmp(&((struct sockaddr_in *)i->ifa_addr)->sin_addr, want, 4);
		else if (v6 && i->ifa_addr->sa_family == AF_INET6)
			found = !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, want, 16);
	}
	freeifaddrs(ifs);
	return found;
}

/* Pick this node's host section (by name; floating ones by local address). */
void conf_resolve(struct conf *c)
{
	struct conf_res *r;
	struct conf_host *h;

	for (r = c->res_head; r; r = r->next) {
		r->me = r->peer = NULL;
		for (h = r->hosts; h; h = h->next) {
			if (!h->floating && conf_host_has_name(h, c->hostname)) {
				r->me = h;
				break;
			}
		}
		for (h = r->hosts; !r->me && !c->no_ip_check && h; h = h->next)
			if (h->floating && h->addr.af && addr_is_local(&h->addr))
				r->me = h;
		for (h = r->hosts; r->me && h; h = h->next)
			if (h != r->me && !r->peer)
				r->peer = h;
	}
}

const char *conf_file(const struct conf *c)
{
	return c->file;
}

const char *conf_hostname(const struct conf *c)
{
	return c->hostname;
}

const struct conf_optlist *conf_global(const struct conf *c)
{
	return &c->global;
}

const struct conf_optlist *conf_common(const struct conf *c, enum conf_sect sect)
{
	return &c->common[sect];
}

const struct conf_res *conf_resources(const struct conf *c)
{
	return c->res_head;
}

const struct conf_res *conf_find_res(const struct conf *c, const char *name)
{
	const struct conf_res *r;

	for (r = c->res_head; r; r = r->next)
		if (strcmp(r->name, name) == 0)
			return r;
	return NULL;
}

const struct conf_val *conf_list_find(const struct conf_optlist *l, const char *name)
{
	const struct conf_val *v;

	for (v = l->head; v; v = v->next)
		if (strcmp(v->opt->name, name) == 0)
			return v;
	return NULL;
}

const struct conf_val *conf_res_get(const struct conf *c, const struct conf_res *r,
				    enum conf_sect sect, const char *name)
{
	const struct conf_val *v = NULL;

	if (sect == CONF_SECT_GLOBAL)
		return conf_list_find(&c->global, name);
	if (r)
		v = conf_list_find(&r->opts[sect], name);
	if (!v)
		v = conf_list_find(&c->common[sect], name);
	return v;
}

uint64_t conf_res_num(const struct conf *c, const struct conf_res *r, enum conf_sect sect,
		      const char *name)
{
	const struct conf_val *v = conf_res_get(c, r, sect, name);
	const struct conf_opt *o;
	uint64_t n = 0;
	char err[128];

	if (v)
		return v->v.num;
	o = conf_opt_find(sect, name);
	if (o && o->def && conf_opt_parse_num(o->def, o->unit, &n, err, sizeof(err)) == 0)
		return n;
	return 0;
}

const char *conf_res_text(const struct conf *c, const struct conf_res *r, enum conf_sect sect,
			  const char *name)
{
	const struct conf_val *v = conf_res_get(c, r, sect, name);
	const struct conf_opt *o;

	if (v)
		return v->text;
	o = conf_opt_find(sect, name);
	return o ? o->def : NULL;
}

bool conf_res_bool(const struct conf *c, const struct conf_res *r, enum conf_sect sect,
		   const char *name)
{
	const struct conf_val *v = conf_res_get(c, r, sect, name);
	const struct conf_opt *o;

	if (v)
		return v->v.yes;
	o = conf_opt_find(sect, name);
	return o && o->def && strcmp(o->def, "yes") == 0;
}

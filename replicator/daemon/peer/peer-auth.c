/*
 * peer-auth: the phase of a connection before authentication
 * (doc/wire-protocol.md §5.4-§5.6): the source address check, the
 * rate-limited log of refusals and their count in status, the TLS files,
 * and the refusal of a resource whose peer would not be authenticated.
 * The exchange itself is lib/setup.c's (CRAM-HMAC versions 1 and 2) and
 * lib/tls.c's (TLS).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "log.h"
#include "peer/peer-int.h"

/* ---------------------------------------------------------------- before authentication */


/* "10.0.0.9:51234" (or "[fd00::9]:51234") of a socket address. */
static void addr_of(const struct sockaddr_storage *ss, char *buf, size_t n)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, n, "[%s]:%u", ip, ntohs(s6->sin6_port));
		return;
	}
	inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, ip, sizeof(ip));
	snprintf(buf, n, "%s:%u", ip, ntohs(((const struct sockaddr_in *)ss)->sin_port));
}

/* Is the source of an accepted connection the configured peer address? */
static bool from_peer(const struct peer *p, const struct sockaddr_storage *ss)
{
	const struct conf_addr *a = &resource_cr(p->r)->peer->addr;
	struct in6_addr want6;
	struct in_addr want4;

	if (inet_pton(AF_INET, a->ip, &want4) == 1) {
		if (ss->ss_family == AF_INET)
			return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == want4.s_addr;
		if (ss->ss_family == AF_INET6) {
			const struct in6_addr *g = &((const struct sockaddr_in6 *)ss)->sin6_addr;

			return IN6_IS_ADDR_V4MAPPED(g) && !memcmp(&g->s6_addr[12], &want4, 4);
		}
		return false;
	}
	if (inet_pton(AF_INET6, a->ip, &want6) == 1 && ss->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)ss)->sin6_addr, &want6, sizeof(want6));
	return false;
}

/* Is this reason (its first PEER_REASON_KEY bytes) not among the last
 * ones logged? Under p->lock. */
static bool new_reason(const struct peer *p, const char *msg)
{
	for (unsigned int i = 0; i < PEER_REASONS; i++)
		if (!strncmp(p->pre_seen[i], msg, PEER_REASON_KEY - 1) && p->pre_seen[i][0])
			return false;
	return true;
}

static void remember_reason(struct peer *p, const char *msg)
{
	snprintf(p->pre_seen[p->pre_seen_next], PEER_REASON_KEY, "%.95s", msg);
	p->pre_seen_next = (p->pre_seen_next + 1) % PEER_REASONS;
}

/*
 * Log a refusal before authentication, naming the connection's real
 * address: the first one, then at most one per 10 s, which counts the
 * ones left out (lib/ratelimit); and up to 4 more per 10 s whose reason is
 * not among the last PEER_REASONS logged.
 */
void peer_preauth_log(struct peer *p, const char *addr, const char *fmt, ...)
{
	char msg[256], note[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&p->lock);
	p->pre_refused++;
	snprintf(p->pre_last, sizeof(p->pre_last), "connection from %s refused: %s", addr, msg);
	if (ratelimit_ok(p->pre_rl, note, sizeof(note))) {
		/* logged, with the count of those left out */
	} else if (new_reason(p, msg) && ratelimit_ok(p->pre_rl_new, NULL, 0)) {
		/* a reason not among the last ones logged goes out at once, a
		 * few per window: with two kinds of refusal alternating (each
		 * node's own attempt and the peer's), the one that says what to
		 * fix does not wait behind the other */
		ratelimit_unrefuse(p->pre_rl);
	} else {
		p->pre_unlogged++;
		pthread_mutex_unlock(&p->lock);
		return;
	}
	if (new_reason(p, msg))
		remember_reason(p, msg);
	pthread_mutex_unlock(&p->lock);
	log_res(LOG_WARNING, p->r->name, "connection from %s refused: %s%s", addr, msg, note);
}

void peer_status_refusals(struct resource *r, json_object *o)
{
	struct peer *p = r->peer;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	json_object_object_add(o, "refused", json_object_new_uint64(p->pre_refused));
	if (p->pre_last[0])
		json_object_object_add(o, "last_refused", json_object_new_string(p->pre_last));
	pthread_mutex_unlock(&p->lock);
}

/* accept4() one connection; one from another address than the peer's is
 * closed before anything is read from it (§5.5): -EPERM. */
int peer_accept(struct peer *p, char *addr, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = accept4(p->lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	addr_of(&ss, addr, n);
	if (!from_peer(p, &ss)) {
		peer_preauth_log(p, addr, "not the peer's address %s",
				 resource_cr(p->r)->peer->addr.ip);
		close(fd);
		return -EPERM;
	}
	return fd;
}

int peer_refuse_unauthenticated(struct resource *r, struct reply_err *e)
{
	const struct conf_res *cr = resource_cr(r);

	if (!conf_res_unauthenticated(tandemd_conf(r->d), cr))
		return 0;
	ERRF(e, 10,
	     "%s:%d: resource %s: its peer would not be authenticated (no cram-hmac-alg and "
	     "shared-secret, no tls); set net { cram-hmac-alg sha256; shared-secret \"...\"; } "
	     "or net { tls yes; tls-ca ...; tls-certificate ...; tls-key ...; } on both nodes, or "
	     "net { allow-unauthenticated yes; } to replicate without authentication "
	     "(doc/security.md); then 'tandemadm adjust %s' reloads it, and you can try again",
	     cr->loc.file ? cr->loc.file : "?", cr->loc.line, r->name, r->name);
	return -EACCES;
}

/* ---------------------------------------------------------------- TLS files */

/* The three paths and what stat says of each, to tell a change. */
static void tls_sig(const struct tls_files *f, char *buf, size_t n)
{
	const char *paths[] = {f->ca, f->cert, f->key};
	size_t l = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < 3 && l < n; i++) {
		struct stat st;

		memset(&st, 0, sizeof(st));
		if (paths[i])
			stat(paths[i], &st);
		l += (size_t)snprintf(buf + l, n - l, "%s:%llu:%llu:%lld.%09ld;",
				      paths[i] ? paths[i] : "", (unsigned long long)st.st_ino,
				      (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
				      st.st_mtim.tv_nsec);
	}
}

static struct tls_files tls_files_of(const struct conf *c, const struct conf_res *cr)
{
	return (struct tls_files){conf_res_text(c, cr, CONF_SECT_NET, "tls-ca"),
				  conf_res_text(c, cr, CONF_SECT_NET, "tls-certificate"),
				  conf_res_text(c, cr, CONF_SECT_NET, "tls-key")};
}

int peer_tls_check(const struct conf *c, const struct conf_res *cr, char *why, size_t n)
{
	struct tls_files f;
	struct tls_ctx *t = NULL;
	int rc;

	if (!conf_res_bool(c, cr, CONF_SECT_NET, "tls"))
		return 0;
	f = tls_files_of(c, cr);
	rc = tls_ctx_new(&f, why, n, &t);
	tls_ctx_free(t);
	return rc;
}

int peer_tls_load(struct peer *p, char *why, size_t n)
{
	const struct conf *c = tandemd_conf(p->r->d);
	const struct conf_res *cr = resource_cr(p->r);
	char sig[sizeof(p->tls_sig)];
	struct tls_files f;
	struct tls_ctx *t;
	int rc;

	if (!conf_res_bool(c, cr, CONF_SECT_NET, "tls")) {
		tls_ctx_free(p->tls);
		p->tls = NULL;
		p->tls_sig[0] = '\0';
		return 0;
	}
	f = tls_files_of(c, cr);
	tls_sig(&f, sig, sizeof(sig));
	if (!strcmp(sig, p->tls_sig))
		return p->tls_bad ? -EALREADY : 0; /* unchanged since the last try */
	snprintf(p->tls_sig, sizeof(p->tls_sig), "%s", sig);
	rc = tls_ctx_new(&f, why, n, &t);
	p->tls_bad = rc < 0;
	if (rc < 0)
		return rc;
	if (p->tls)
		log_res(LOG_NOTICE, p->r->name, "TLS: loaded %s, %s and %s again; new connections "
						"use them", f.ca, f.cert, f.key);
	tls_ctx_free(p->tls);
	p->tls = t;
	return 0;
}

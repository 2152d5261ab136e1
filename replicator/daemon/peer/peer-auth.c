/*
 * peer-auth: the phase of a connection before authentication
 * (doc/wire-protocol.md §5.4, §5.5): the source address check, CRAM-HMAC
 * versions 1 and 2 on one socket, the rate-limited log of refusals and
 * their count in status, and the refusal of a resource whose peer would
 * not be authenticated.
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
#include <unistd.h>

#include "auth.h"
#include "log.h"
#include "peer/peer-int.h"

/* ---------------------------------------------------------------- before authentication */

#define PREAUTH_LOG_MS 10000 /* at most one refusal logged per this */

/* "10.0.0.9:51234" (or "[fd00::9]:51234") of a socket's other end. */
void peer_addr_of_fd(int fd, char *buf, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (fd < 0 || getpeername(fd, (struct sockaddr *)&ss, &len) < 0) {
		snprintf(buf, n, "(unknown address)");
		return;
	}
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		port = ntohs(s6->sin6_port);
		snprintf(buf, n, "[%s]:%u", ip, port);
		return;
	}
	inet_ntop(AF_INET, &((const struct sockaddr_in *)&ss)->sin_addr, ip, sizeof(ip));
	port = ntohs(((const struct sockaddr_in *)&ss)->sin_port);
	snprintf(buf, n, "%s:%u", ip, port);
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

/*
 * Log a refusal before authentication, naming the connection's real
 * address: the first one, then at most one per PREAUTH_LOG_MS, which
 * counts the ones not logged. fd < 0: no connection to name.
 */
void peer_preauth_log(struct peer *p, int fd, const char *fmt, ...)
{
	int64_t now = peer_now_ms();
	char addr[INET6_ADDRSTRLEN + 16], msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	peer_addr_of_fd(fd, addr, sizeof(addr));
	pthread_mutex_lock(&p->lock);
	p->pre_refused++;
	snprintf(p->pre_last, sizeof(p->pre_last), "connection from %s refused: %s", addr, msg);
	pthread_mutex_unlock(&p->lock);
	if (p->pre_logged_ms && now - p->pre_logged_ms < PREAUTH_LOG_MS) {
		p->pre_suppressed++;
		return;
	}
	if (p->pre_suppressed)
		log_res(LOG_WARNING, p->r->name,
			"connection from %s refused: %s (and %u other refusals in the last %d s)",
			addr, msg, p->pre_suppressed, (int)((now - p->pre_logged_ms) / 1000));
	else
		log_res(LOG_WARNING, p->r->name, "connection from %s refused: %s", addr, msg);
	p->pre_logged_ms = now;
	p->pre_suppressed = 0;
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
int peer_accept(struct peer *p)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = accept4(p->lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (!from_peer(p, &ss)) {
		peer_preauth_log(p, fd, "not the peer's address %s",
			    resource_cr(p->r)->peer->addr.ip);
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* ---------------------------------------------------------------- auth */

/* Send our P_AUTH_RESPONSE over msg (version 2's M, version 1's challenge). */
static int send_response(struct peer *p, struct pktio *io, const uint8_t *msg, size_t len,
			 int tmo)
{
	uint8_t resp[AUTH_RESPONSE_MAX];
	size_t rlen = sizeof(resp);
	struct wire_pkt pkt;
	int rc = auth_response(p->alg, p->secret, strlen(p->secret), msg, len, resp, &rlen);

	if (rc < 0)
		return rc == -EIO ? -EIO : -EACCES;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = WIRE_P_AUTH_RESPONSE;
	pkt.volume = WIRE_VOL_NONE;
	pkt.digest = resp;
	pkt.digest_len = (uint32_t)rlen;
	return pktio_send(io, &pkt, tmo);
}

/* Receive the peer's P_AUTH_RESPONSE and check it over msg. */
static int check_response(struct peer *p, struct pktio *io, const uint8_t *msg, size_t len,
			  int tmo)
{
	char why[WIRE_REASON_MAX];
	struct wire_pkt pkt;
	int rc = pktio_recv(io, tmo, &pkt, why, sizeof(why));

	if (rc == -ECONNRESET && p->initiator && p->agreed.auth_v2) {
		peer_preauth_log(p, pktio_fd(io),
			    "Authentication of peer failed: it closed the connection instead of "
			    "answering our response (a different shared-secret on the two nodes?)");
		return -EACCES;
	}
	if (rc < 0) {
		peer_preauth_log(p, pktio_fd(io), "during authentication: %s",
			    rc == -ETIMEDOUT ? "no response in time" : rc == -ECONNRESET ? "closed" : why);
		return rc;
	}
	if (pkt.type != WIRE_P_AUTH_RESPONSE ||
	    auth_verify(p->alg, p->secret, strlen(p->secret), msg, len, pkt.digest,
			pkt.digest_len) < 0) {
		peer_preauth_log(p, pktio_fd(io),
			    "Authentication of peer failed: wrong shared-secret? (cram-hmac-alg %s, "
			    "cram-hmac-version %d); if it is the real peer, fix the configuration, "
			    "then 'tandemadm adjust %s'",
			    p->alg, p->agreed.auth_v2 ? 2 : 1, p->r->name);
		return -EACCES;
	}
	return 0;
}

/*
 * CRAM-HMAC on one socket (§5.4). Version 2: the initiator proves first,
 * the acceptor answers only a right proof. A failure is one before
 * authentication (§5.5): -EACCES or a socket error, the attempt closed.
 */
int peer_authenticate(struct peer *p, struct pktio *io, enum auth_purpose purpose)
{
	uint8_t own[AUTH_CHALLENGE_LEN], theirs[AUTH_CHALLENGE_LEN];
	uint8_t m_own[AUTH_V2_MSG_MAX], m_peer[AUTH_V2_MSG_MAX];
	size_t own_len = sizeof(m_own), peer_len = sizeof(m_peer);
	int tmo = p->ping_timeout_ms * 4;
	char why[WIRE_REASON_MAX];
	struct wire_pkt pkt;
	struct auth_v2 a;
	int rc;

	if (!p->alg[0])
		return 0;
	if (auth_challenge_new(own) < 0)
		return -EIO;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = WIRE_P_AUTH_CHALLENGE;
	pkt.volume = WIRE_VOL_NONE;
	snprintf(pkt.u.challenge.alg, sizeof(pkt.u.challenge.alg), "%s", p->alg);
	memcpy(pkt.u.challenge.challenge, own, sizeof(own));
	rc = pktio_send(io, &pkt, tmo);
	if (rc < 0)
		return rc;
	rc = pktio_recv(io, tmo, &pkt, why, sizeof(why));
	if (rc < 0) {
		peer_preauth_log(p, pktio_fd(io), "during authentication: %s",
			    rc == -ETIMEDOUT ? "no challenge in time" : why);
		return rc;
	}
	if (pkt.type != WIRE_P_AUTH_CHALLENGE) {
		peer_preauth_log(p, pktio_fd(io),
			    "Authentication of peer failed: expected P_AUTH_CHALLENGE, got %s",
			    wire_type_name(pkt.type));
		return -EACCES;
	}
	if (strcmp(pkt.u.challenge.alg, p->alg)) {
		peer_preauth_log(p, pktio_fd(io),
			    "Authentication of peer failed: the peer uses cram-hmac-alg %.64s, we "
			    "use %s; configure the same on both nodes",
			    pkt.u.challenge.alg, p->alg);
		return -EACCES;
	}
	memcpy(theirs, pkt.u.challenge.challenge, sizeof(theirs));
	rc = auth_check_peer_challenge(own, theirs, sizeof(theirs));
	if (rc < 0) {
		peer_preauth_log(p, pktio_fd(io), "Authentication of peer failed: %s",
			    rc == -EACCES ? "it reflected our challenge" : "a malformed challenge");
		return -EACCES;
	}
	if (!p->agreed.auth_v2) { /* DRBD's: answer at once, then check */
		rc = send_response(p, io, theirs, sizeof(theirs), tmo);
		if (rc == 0)
			rc = check_response(p, io, own, sizeof(own), tmo);
		return rc;
	}
	a = (struct auth_v2){.purpose = purpose,
			     .conn_id = p->conn_id,
			     .res = p->r->name,
			     .initiator = p->initiator ? p->me : p->peer_node,
			     .acceptor = p->initiator ? p->peer_node : p->me,
			     .initiator_challenge = p->initiator ? own : theirs,
			     .acceptor_challenge = p->initiator ? theirs : own};
	rc = auth_v2_message(&a, p->initiator ? AUTH_INITIATOR : AUTH_ACCEPTOR, m_own, &own_len);
	if (rc == 0)
		rc = auth_v2_message(&a, p->initiator ? AUTH_ACCEPTOR : AUTH_INITIATOR, m_peer,
				     &peer_len);
	if (rc < 0) {
		peer_preauth_log(p, pktio_fd(io), "Authentication of peer failed: %s", strerror(-rc));
		return -EACCES;
	}
	if (p->initiator) {
		rc = send_response(p, io, m_own, own_len, tmo);
		if (rc == 0)
			rc = check_response(p, io, m_peer, peer_len, tmo);
	} else {
		rc = check_response(p, io, m_peer, peer_len, tmo);
		if (rc == 0) /* only a peer that proved itself gets our answer */
			rc = send_response(p, io, m_own, own_len, tmo);
	}
	return rc;
}

int peer_refuse_unauthenticated(struct resource *r, struct reply_err *e)
{
	const struct conf_res *cr = resource_cr(r);

	if (!conf_res_unauthenticated(tandemd_conf(r->d), cr))
		return 0;
	ERRF(e, 10,
	     "%s:%d: resource %s: its peer would not be authenticated (no cram-hmac-alg and "
	     "shared-secret); set net { cram-hmac-alg sha256; shared-secret \"...\"; } on both "
	     "nodes, or net { allow-unauthenticated yes; } to replicate without authentication "
	     "(doc/security.md); then 'tandemadm adjust %s' reloads it, and you can try again",
	     cr->loc.file ? cr->loc.file : "?", cr->loc.line, r->name, r->name);
	return -EACCES;
}

/*
 * peer: the connection of a resource to its peer (doc/wire-protocol.md
 * §5): listening on our address and connecting to the peer's, the
 * deterministic choice between simultaneous attempts, P_HELLO
 * negotiation, CRAM-HMAC authentication on both sockets, and reconnecting
 * every connect-int after a network failure. Before authentication
 * (§5.5) only the peer's address gets in, every phase has a deadline, and
 * a failure closes that attempt and changes no state.
 *
 * One thread per resource runs the connection: it establishes it, runs
 * the handshake (sync.c) and then receives the data stream (repl.c);
 * a second thread receives the meta stream (acks, pings) while connected.
 * State changes go through state_change(), which may be called from
 * any thread.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "epoch.h"
#include "log.h"
#include "spin.h"
#include "peer/peer-int.h"

int64_t peer_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void peer_set_conn(struct peer *p, enum state_conn c, const char *why)
{
	struct state s = resource_state(p->r);

	state_change_conn(p->r, c, s.peer, s.pdsk, why);
}

static bool stopping(struct peer *p)
{
	return __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE);
}

/* Sleep up to ms, or until told to stop; accepted sockets are refused. */
void peer_sleep(struct peer *p, int ms)
{
	int64_t end = peer_now_ms() + ms;
	struct pollfd f[2] = {{p->wake[0], POLLIN, 0}, {p->lfd, POLLIN, 0}};

	while (!stopping(p) && peer_now_ms() < end) {
		int n = poll(f, p->lfd >= 0 ? 2 : 1, (int)(end - peer_now_ms()));

		if (n > 0 && (f[1].revents & POLLIN)) {
			char addr[PEER_ADDR_MAX];
			int fd = peer_accept(p, addr, sizeof(addr));

			if (fd >= 0) { /* the peer retries within connect-int */
				log_res(LOG_DEBUG, p->r->name,
					"connection from %s closed: between two attempts of ours", addr);
				close(fd);
			}
		}
	}
}

/* ---------------------------------------------------------------- the thread */

static void close_sockets(struct peer *p)
{
	struct pktio *d, *m;

	pthread_mutex_lock(&p->lock);
	d = p->data;
	m = p->meta;
	p->data = p->meta = NULL;
	pthread_mutex_unlock(&p->lock);
	pktio_free(d);
	pktio_free(m);
}

static const char *conn_error_name(int rc)
{
	switch (rc) {
	case -ETIMEDOUT:
		return "Timeout";
	case -ECONNRESET:
	case -EPIPE:
		return "BrokenPipe";
	case -EPROTO:
	case -EBADMSG:
	case -E2BIG:
		return "ProtocolError";
	default:
		return "NetworkFailure";
	}
}

static enum state_conn conn_error_state(int rc)
{
	switch (rc) {
	case -ETIMEDOUT:
		return CONN_TIMEOUT;
	case -ECONNRESET:
	case -EPIPE:
		return CONN_BROKENPIPE;
	case -EPROTO:
	case -EBADMSG:
	case -E2BIG:
		return CONN_PROTOCOLERROR;
	default:
		return CONN_NETWORKFAILURE;
	}
}

static void *peer_thread(void *arg)
{
	struct peer *p = arg;
	int rc;

	while (!stopping(p)) {
		peer_set_conn(p, CONN_WFCONNECTION, NULL);
		rc = peer_establish(p);
		if (rc == -ECANCELED)
			break;
		if (rc < 0) { /* before authentication: logged, nothing else changes (§5.5) */
			close_sockets(p);
			if (!stopping(p))
				peer_sleep(p, 500);
			continue;
		}
		log_res(LOG_INFO, p->r->name, "connected to %s (%s), %s%s%s%s", p->peer_node,
			p->peer_addr, p->initiator ? "as initiator" : "as acceptor",
			!p->alg[0]	      ? ""
			: p->agreed.auth_v2 ? ", authenticated (cram-hmac-version 2)"
					    : ", authenticated (cram-hmac-version 1)",
			p->tls ? ", TLS: " : !p->alg[0] ? ", not authenticated" : "",
			p->tls ? p->tls_desc : "");
		pthread_mutex_lock(&p->lock);
		if (p->pre_unlogged)
			log_res(LOG_WARNING, p->r->name,
				"%u refusals before this connection were not logged; the latest: %s",
				p->pre_unlogged, p->pre_last);
		p->pre_unlogged = 0;
		ratelimit_reset(p->pre_rl); /* the next refusal is logged at once */
		ratelimit_reset(p->pre_rl_new);
		memset(p->pre_seen, 0, sizeof(p->pre_seen));
		pthread_mutex_unlock(&p->lock);
		peer_set_conn(p, CONN_WFREPORTPARAMS, NULL);
		if (peer_guard_start(p) < 0)
			log_res(LOG_WARNING, p->r->name,
				"cannot serve the listener while connected: attempts queue unread");
		rc = peer_session(p); /* handshake, then replication until an error */
		peer_guard_stop(p);
		close_sockets(p);
		if (stopping(p))
			break;
		if (rc == -EACCES) {
			peer_set_conn(p, CONN_STANDALONE, "after the handshake");
			break;
		}
		if (rc == -ERESTART) { /* a fresh handshake was asked for */
			peer_set_conn(p, CONN_UNCONNECTED, "renegotiating");
			continue;
		}
		log_res(LOG_WARNING, p->r->name, "connection lost: %s (%s)",
			rc < 0 ? strerror(-rc) : "closed", conn_error_name(rc));
		peer_set_conn(p, conn_error_state(rc), NULL);
		peer_set_conn(p, CONN_UNCONNECTED, NULL);
		peer_sleep(p, 200);
	}
	__atomic_store_n(&p->exited, true, __ATOMIC_RELEASE);
	return NULL;
}

/* The thread gave up by itself (StandAlone after a refusal)? */
bool peer_exited(const struct resource *r)
{
	struct peer *p = peer_of(r);

	return p && __atomic_load_n(&p->exited, __ATOMIC_ACQUIRE);
}

void peer_load_auth(struct peer *p)
{
	const struct conf *c = tandemd_conf(p->r->d);
	const struct conf_res *cr = resource_cr(p->r);
	const char *s;

	if (conf_res_unauthenticated(c, cr)) { /* up refused this; adjust only warns */
		if (!p->auth_kept)
			log_res(LOG_ERR, p->r->name,
				"the configuration now leaves the peer unauthenticated (no "
				"cram-hmac-alg, no tls, no allow-unauthenticated); connecting with "
				"the authentication loaded before until it is fixed");
		p->auth_kept = true;
		return;
	}
	p->auth_kept = false;
	s = conf_res_text(c, cr, CONF_SECT_NET, "cram-hmac-alg");
	snprintf(p->alg, sizeof(p->alg), "%s", s ? s : "");
	s = conf_res_text(c, cr, CONF_SECT_NET, "shared-secret");
	snprintf(p->secret, sizeof(p->secret), "%s", s ? s : "");
	s = conf_res_text(c, cr, CONF_SECT_NET, "cram-hmac-version");
	p->auth_v1 = s && !strcmp(s, "1");
}

/* What net { ack-poll-usec } set up in peer_start(). */
static void ack_poll_free(struct peer *p)
{
	spin_free(p->spin);
	spin_free(p->spin_fl);
	if (p->kick_fd >= 0)
		close(p->kick_fd);
}

static void load_conf(struct peer *p)
{
	const struct conf *c = tandemd_conf(p->r->d);
	const struct conf_res *cr = resource_cr(p->r);
	const char *s;

	p->connect_int_ms = (int)conf_res_num(c, cr, CONF_SECT_NET, "connect-int") * 1000;
	p->ping_int_ms = (int)conf_res_num(c, cr, CONF_SECT_NET, "ping-int") * 1000;
	p->ping_timeout_ms = (int)conf_res_num(c, cr, CONF_SECT_NET, "ping-timeout") * 100;
	p->timeout_ms = (int)conf_res_num(c, cr, CONF_SECT_NET, "timeout") * 100;
	p->ko_count = (int)conf_res_num(c, cr, CONF_SECT_NET, "ko-count");
	p->sndbuf = (int)conf_res_num(c, cr, CONF_SECT_NET, "sndbuf-size");
	p->ack_poll_us = (unsigned int)conf_res_num(c, cr, CONF_SECT_NET, "ack-poll-usec");
	s = conf_res_text(c, cr, CONF_SECT_NET, "protocol");
	p->protocol = s && s[0] == 'A' ? WIRE_PROTO_A : s && s[0] == 'B' ? WIRE_PROTO_B
									   : WIRE_PROTO_C;
	peer_load_auth(p);
	snprintf(p->me, sizeof(p->me), "%s", conf_hostname(c));
	snprintf(p->peer_name, sizeof(p->peer_name), "%s",
		 cr->peer && cr->peer->n_names ? cr->peer->names[0] : "(peer)");
}

int peer_start(struct resource *r, bool discard_my_data, struct reply_err *e)
{
	char why[TLS_REASON_MAX + 256];
	struct peer *p;
	int rc;

	if (r->peer)
		return 0;
	if (!resource_cr(r)->peer || !resource_cr(r)->peer->addr.ip || !resource_cr(r)->me->addr.ip) {
		ERRF(e, 10, "%s has no peer address configured", r->name);
		return -EINVAL;
	}
	if (peer_refuse_unauthenticated(r, e) < 0)
		return -EACCES;
	p = calloc(1, sizeof(*p));
	if (!p) {
		ERRF(e, 20, "out of memory");
		return -ENOMEM;
	}
	p->r = r;
	p->discard_my_data = discard_my_data;
	p->kick_fd = -1;
	load_conf(p);
	rc = peer_tls_load(p, why, sizeof(why));
	if (rc < 0) {
		ERRF(e, 10, "%s: %.360s; fix it, then 'tandemadm adjust %s' and try again", r->name, why,
		     r->name);
		free(p);
		return rc;
	}
	pthread_mutex_init(&p->send_lock, NULL);
	pthread_mutex_init(&p->meta_lock, NULL);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	pthread_cond_init(&p->fl_cond, NULL);
	/* one refusal logged per 10 s, and up to 4 more with a new reason */
	if (ratelimit_new(1, 10000, &p->pre_rl) < 0 || ratelimit_new(4, 10000, &p->pre_rl_new) < 0) {
		rc = -ENOMEM;
		goto fail;
	}
	if (pipe2(p->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		rc = -errno;
		goto fail;
	}
	if (p->ack_poll_us && ((rc = spin_new(p->ack_poll_us, &p->spin)) < 0 ||
			       (rc = spin_new(p->ack_poll_us, &p->spin_fl)) < 0 ||
			       (p->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)) {
		rc = rc < 0 ? rc : -errno;
		close(p->wake[0]);
		close(p->wake[1]);
		goto fail;
	}
	p->lfd = peer_listen(p);
	if (p->lfd < 0) /* retried every connect-int (a floating address may come later) */
		log_res(LOG_WARNING, r->name,
			"cannot listen on %s:%u yet: %s (is the address on this node, the port "
			"free?); retrying every connect-int",
			resource_cr(r)->me->addr.ip, resource_cr(r)->me->addr.port, strerror(-p->lfd));
	if (!p->alg[0] && !p->tls)
		log_res(LOG_WARNING, r->name,
			"allow-unauthenticated: the peer is not authenticated; anything that "
			"connects from %s is taken for it",
			resource_cr(r)->peer->addr.ip);
	__atomic_store_n(&r->peer, p, __ATOMIC_RELEASE); /* the data path reads it */
	/* StandAlone -> Unconnected -> WFConnection, as the state table says */
	if (resource_state(r).conn == CONN_STANDALONE)
		state_change_conn(r, CONN_UNCONNECTED, ROLE_UNKNOWN, DISK_DUNKNOWN, "connect");
	state_change_conn(r, CONN_WFCONNECTION, ROLE_UNKNOWN, DISK_DUNKNOWN, NULL);
	if (pthread_create(&p->thread, NULL, peer_thread, p) != 0) {
		__atomic_store_n(&r->peer, NULL, __ATOMIC_RELEASE);
		if (p->lfd >= 0)
			close(p->lfd);
		close(p->wake[0]);
		close(p->wake[1]);
		rc = -EAGAIN;
		goto fail;
	}
	return 0;
fail:
	ERRF(e, 20, "cannot start the connection: %s", strerror(-rc));
	pthread_mutex_destroy(&p->send_lock);
	pthread_mutex_destroy(&p->meta_lock);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	pthread_cond_destroy(&p->fl_cond);
	ratelimit_free(p->pre_rl);
	ratelimit_free(p->pre_rl_new);
	ack_poll_free(p);
	tls_ctx_free(p->tls);
	free(p);
	return rc;
}

/* Disconnect: stop the thread and close everything; StandAlone. */
void peer_stop(struct resource *r)
{
	struct peer *p = r->peer;

	if (!p)
		return;
	if (peer_live(r))
		peer_drain(r, p->timeout_ms > 0 ? p->timeout_ms : 6000);
	__atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
	if (write(p->wake[1], "x", 1) < 0)
		log_res(LOG_WARNING, r->name, "cannot wake the connection thread");
	pthread_mutex_lock(&p->lock);
	if (p->data)
		pktio_shutdown(p->data);
	if (p->meta)
		pktio_shutdown(p->meta);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	if (p->lfd >= 0)
		close(p->lfd);
	close(p->wake[0]);
	close(p->wake[1]);
	__atomic_store_n(&r->peer, NULL, __ATOMIC_RELEASE);
	pthread_mutex_destroy(&p->send_lock);
	pthread_mutex_destroy(&p->meta_lock);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	pthread_cond_destroy(&p->fl_cond);
	epoch_free(p->ep);
	ack_poll_free(p);
	ratelimit_free(p->pre_rl);
	ratelimit_free(p->pre_rl_new);
	tls_ctx_free(p->tls);
	free(p);
	state_change_conn(r, CONN_STANDALONE, ROLE_UNKNOWN, DISK_DUNKNOWN, "disconnect");
}

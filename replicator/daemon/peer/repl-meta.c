/*
 * repl-meta: the meta stream while connected (doc/wire-protocol.md §8):
 * its thread receives the peer's acks (P_RECV_ACK, P_WRITE_ACK,
 * P_NEG_ACK, P_BARRIER_ACK) and pings, completes the peer's leg of the
 * writes in the transfer log, and keeps the connection alive (ping-int,
 * ping-timeout).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "epoch.h"
#include "spin.h"
#include "peer/peer-int.h"

/* Find the request with this id in the transfer log (lock held). */
static struct peer_req *tl_find(struct peer *p, uint64_t id)
{
	struct peer_req *q;

	for (q = p->tl; q; q = q->next)
		if (q->id == id)
			return q;
	return NULL;
}

/* RECV_ACK (B), WRITE_ACK (C), NEG_ACK: the application's side of the
 * peer's leg completes; the request stays until its epoch is acked. */
static void on_ack(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_req *q;
	bool neg = pkt->type == WIRE_P_NEG_ACK;

	if (pkt->type == WIRE_P_RECV_ACK && p->protocol != WIRE_PROTO_B)
		return; /* C waits for the write */
	pthread_mutex_lock(&p->lock);
	q = tl_find(p, pkt->u.ack.id);
	if (!q || q->done_called) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	repl_leg_done_locked(p, q);
	pthread_mutex_unlock(&p->lock);
	if (neg) {
		struct peer_vol *pv = peer_vol_of(p, (uint16_t)q->vnr);

		if (pv)
			volume_mark_oos(pv->v, q->sector * 512, q->size);
	}
	q->done(q->arg, neg ? -EIO : 0);
	p->ack_closed = true; /* the meta thread sends its barrier if no write does */
}

static void on_ping(struct peer *p, const struct wire_pkt *pkt)
{
	struct wire_pkt a = {.type = WIRE_P_PING_ACK, .volume = WIRE_VOL_NONE};

	peer_send_meta(p, &a);
}

static void on_ping_ack(struct peer *p, const struct wire_pkt *pkt)
{
	/* any packet shows the peer is alive: nothing else to do */
}

/* The peer has every write of the epoch on stable storage: its requests
 * leave the transfer log. */
static void on_barrier_ack(struct peer *p, const struct wire_pkt *pkt)
{
	uint32_t nr = pkt->u.barrier.barrier, writes = 0;
	struct peer_req **pp, *q, *done = NULL;
	struct peer_flushw **wp, *w, *fdone = NULL;
	int rc;

	pthread_mutex_lock(&p->lock);
	rc = epoch_ack(p->ep, nr, pkt->u.barrier.set_size, &writes);
	if (rc == 0) {
		p->barrier_acked = nr;
		for (wp = &p->flushw; (w = *wp);) {
			if ((int32_t)(w->nr - nr) <= 0) {
				*wp = w->next;
				w->next = fdone;
				fdone = w;
			} else {
				wp = &w->next;
			}
		}
		for (pp = &p->tl; (q = *pp);) {
			if ((int32_t)(q->epoch - nr) <= 0 && q->done_called) {
				*pp = q->next;
				q->next = done;
				done = q;
			} else {
				pp = &q->next;
			}
		}
		for (p->tl_tail = NULL, q = p->tl; q; q = q->next)
			p->tl_tail = q;
	}
	pthread_mutex_unlock(&p->lock);
	/* after unlocking: a FLUSH woken here must not block on p->lock */
	pthread_cond_broadcast(&p->cond);
	for (; fdone; fdone = w) { /* the FLUSHes answer from here */
		w = fdone->next;
		fdone->done(fdone->arg);
	}
	if (rc < 0) {
		log_res(LOG_ERR, p->r->name,
			"protocol error: P_BARRIER_ACK %u with %u writes does not match the epochs "
			"sent", nr, pkt->u.barrier.set_size);
		peer_fail(p, -EPROTO);
	}
	for (; done; done = q) {
		q = done->next;
		free(done);
	}
	if (rc == 0) /* a barrier that was due but had to wait for this ack */
		repl_close_due_epoch(p);
}

/* One row per packet type handled on the meta stream; the others (the
 * codec already refused data-stream types) are protocol errors. */
static const struct {
	uint16_t type;
	void (*fn)(struct peer *p, const struct wire_pkt *pkt);
} meta_handlers[] = {
	{WIRE_P_PING, on_ping},
	{WIRE_P_PING_ACK, on_ping_ack},
	{WIRE_P_RECV_ACK, on_ack},
	{WIRE_P_WRITE_ACK, on_ack},
	{WIRE_P_NEG_ACK, on_ack},
	{WIRE_P_RS_WRITE_ACK, resync_on_rs_ack},
	{WIRE_P_NEG_RS_DREPLY, resync_on_rs_ack},
	{WIRE_P_RS_IS_IN_SYNC, resync_on_in_sync},
	{WIRE_P_BARRIER_ACK, on_barrier_ack},
	{WIRE_P_NEG_DREPLY, on_neg_dreply},
	{WIRE_P_OV_RESULT, verify_on_result},
};

/*
 * The meta stream: acks and pings. An ack that closes the epoch does not
 * send its barrier at once: the next write sends it in front of itself
 * (epoch_write), and a FLUSH closes the epoch with its own barrier. Only
 * when no write comes within EPOCH_DUE_MS does this thread send it, so that
 * an idle link still gets its last epoch acknowledged. A barrier per write
 * would cost the peer a packet, and its flusher a wake-up, per write.
 */
#define EPOCH_DUE_MS 1

/*
 * What ack is due from the peer: the spin that waits for it, or NULL. A
 * write's ack comes one round trip after it; a FLUSH's P_BARRIER_ACK only
 * once the peer's disk has flushed, often much later: each kind has its
 * own budget, so that slow flushes do not stop the spins for the writes.
 */
static struct spin *awaiting_ack(struct peer *p)
{
	bool flush;

	if (__atomic_load_n(&p->pe_all, __ATOMIC_SEQ_CST) > 0)
		return p->spin;
	pthread_mutex_lock(&p->lock);
	flush = (int32_t)(p->barrier_acked - p->flush_nr) < 0;
	pthread_mutex_unlock(&p->lock);
	return flush ? p->spin_fl : NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Before the receive, with ack-poll on (net { ack-poll-usec }): when an ack is due, spin for it
 * (for the spin's budget; the receive then sleeps if it did not come);
 * else sleep until the socket is readable or a write's kick
 * (repl_kick_meta) says an ack will be due: 2 when kicked, else 0 or 1
 * (the receive follows). The thread wakes while the write crosses the
 * link, so its wake-up overlaps the round trip instead of following it.
 */
static int ack_wait(struct peer *p, int tmo)
{
	struct spin *s;
	uint64_t n, t0;
	uint32_t us;
	int rc;

	if (pktio_pending(p->meta))
		return 1;
	if ((s = awaiting_ack(p))) {
		us = spin_budget(s);
		if (!us)
			return 0;
		t0 = now_ns();
		rc = pktio_spin(p->meta, us);
		spin_done(s, rc > 0, now_ns() - t0);
		return rc < 0 ? rc : 1;
	}
	__atomic_store_n(&p->meta_asleep, 1, __ATOMIC_SEQ_CST);
	if (awaiting_ack(p)) { /* a write came between the two looks */
		__atomic_store_n(&p->meta_asleep, 0, __ATOMIC_SEQ_CST);
		return 2;
	}
	rc = pktio_wait_or(p->meta, p->kick_fd, tmo);
	__atomic_store_n(&p->meta_asleep, 0, __ATOMIC_SEQ_CST);
	if (read(p->kick_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_res(LOG_WARNING, p->r->name, "ack-poll: cannot read the kick: %s",
			strerror(errno));
	return rc;
}

void repl_kick_meta(struct peer *p)
{
	uint64_t one = 1;

	if (p->kick_fd < 0)
		return;
	/* a seq_cst read-modify-write orders the write's pe before the look at
	 * meta_asleep (ThreadSanitizer has no fences) */
	__atomic_fetch_add(&p->pe_all, 0, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&p->meta_asleep, 0, __ATOMIC_SEQ_CST) &&
	    write(p->kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_res(LOG_WARNING, p->r->name, "ack-poll: cannot wake the meta thread: %s",
			strerror(errno));
}

void peer_status_ack_poll(struct resource *r, json_object *o)
{
	struct peer *p = r->peer;
	struct spin_stats w, f;
	json_object *a;

	if (!p || !p->spin)
		return;
	spin_stats(p->spin, &w);
	spin_stats(p->spin_fl, &f);
	a = json_object_new_object();
	json_object_object_add(a, "usec", json_object_new_int((int)w.max_us));
	json_object_object_add(a, "budget_usec", json_object_new_int((int)w.cur_us));
	json_object_object_add(a, "flush_budget_usec", json_object_new_int((int)f.cur_us));
	json_object_object_add(a, "spins", json_object_new_uint64(w.spins + f.spins));
	json_object_object_add(a, "hits", json_object_new_uint64(w.hits + f.hits));
	json_object_object_add(a, "flush_spins", json_object_new_uint64(f.spins));
	json_object_object_add(a, "flush_hits", json_object_new_uint64(f.hits));
	json_object_object_add(a, "spin_ms",
			       json_object_new_uint64((w.spent_us + f.spent_us) / 1000));
	json_object_object_add(o, "ack_poll", a);
}

static void *meta_thread(void *arg)
{
	struct peer *p = arg;
	char why[WIRE_REASON_MAX];
	struct wire_pkt pkt;
	int64_t ping_sent = 0, last = peer_now_ms(), due_at = 0;
	size_t i;
	int rc;

	for (;;) {
		int64_t until = ping_sent ? ping_sent + p->ping_timeout_ms : last + p->ping_int_ms;
		bool due_first = due_at && due_at < until;
		int64_t tmo = (due_first ? due_at : until) - peer_now_ms();

		if (p->spin) {
			if (ack_wait(p, tmo < 0 ? 0 : (int)tmo) == 2)
				continue; /* kicked: a write went out, spin for its ack */
			tmo = (due_first ? due_at : until) - peer_now_ms();
		}
		rc = pktio_recv(p->meta, tmo < 0 ? 0 : (int)tmo, &pkt, why, sizeof(why));
		if (rc == -ETIMEDOUT && due_first) {
			due_at = 0;
			repl_close_due_epoch(p);
			continue;
		}
		if (rc == -ETIMEDOUT && !ping_sent) {
			struct wire_pkt ping = {.type = WIRE_P_PING, .volume = WIRE_VOL_NONE};

			ping_sent = peer_now_ms();
			if (peer_send_meta(p, &ping) < 0)
				break;
			continue;
		}
		if (rc < 0) {
			if (rc == -ETIMEDOUT)
				log_res(LOG_WARNING, p->r->name,
					"PingAck did not arrive in time (ping-timeout %d ms)",
					p->ping_timeout_ms);
			else if (rc == -EPROTO || rc == -EBADMSG || rc == -E2BIG)
				log_res(LOG_ERR, p->r->name, "protocol error on the meta stream: %s",
					why);
			peer_fail(p, rc);
			break;
		}
		ping_sent = 0; /* anything from the peer shows it is alive */
		last = peer_now_ms();
		for (i = 0; i < sizeof(meta_handlers) / sizeof(meta_handlers[0]); i++)
			if (meta_handlers[i].type == pkt.type)
				break;
		if (i == sizeof(meta_handlers) / sizeof(meta_handlers[0])) {
			log_res(LOG_ERR, p->r->name,
				"protocol error: unexpected %s on the meta stream",
				wire_type_name(pkt.type));
			peer_fail(p, -EPROTO);
			break;
		}
		meta_handlers[i].fn(p, &pkt);
		if (p->ack_closed) {
			p->ack_closed = false;
			if (!due_at)
				due_at = last + EPOCH_DUE_MS;
		}
	}
	return NULL;
}

int repl_start_meta(struct peer *p)
{
	p->fl_head = p->fl_n = p->fl_urgent = 0;
	p->fl_stop = p->fl_busy = false;
	if (pthread_create(&p->fl_thread, NULL, flusher_thread, p) != 0)
		return -EAGAIN;
	p->fl_running = true;
	if (pthread_create(&p->meta_thread, NULL, meta_thread, p) != 0)
		return -EAGAIN;
	p->meta_running = true;
	return 0;
}

void repl_stop_meta(struct peer *p)
{
	if (p->fl_running) {
		pthread_mutex_lock(&p->lock);
		p->fl_stop = true;
		pthread_cond_broadcast(&p->fl_cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->fl_thread, NULL);
		p->fl_running = false;
	}
	if (p->meta_running) {
		pthread_join(p->meta_thread, NULL);
		p->meta_running = false;
	}
}

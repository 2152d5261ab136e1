/*
 * flusher: the Secondary's side of barriers (doc/wire-protocol.md §8.1).
 * P_BARRIER queues the epoch for a flush of the backing devices; the
 * flusher thread flushes and acks queued barriers in batches (group
 * commit), and a FLUSH barrier on an idle stream is flushed at once by
 * the receiving thread.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "peer/peer-int.h"

/*
 * Flush the disks and ack a batch of barriers, in order (no lock held).
 * An ack says the epoch is on stable storage: after a failed flush none
 * is sent. The volume takes its on-io-error path (volume_flush), and the
 * connection is dropped, so that the Primary keeps every write of the
 * unacknowledged epochs out of sync and resyncs them later, as after a
 * lost link, instead of waiting for acks that cannot come.
 */
static void flush_batch(struct peer *p, const struct wire_barrier *batch, unsigned int n)
{
	unsigned int i;
	int rc;

	for (i = 0; i < p->r->n_vols; i++) {
		if (!volume_attached(&p->r->vols[i]))
			continue; /* diskless: its writes were refused, nothing to flush */
		rc = volume_flush(&p->r->vols[i]);
		if (rc < 0) {
			log_res(LOG_ERR, p->r->name,
				"volume %u: flushing the backing device failed (%s): barriers "
				"%u..%u not acknowledged; dropping the connection so that the "
				"Primary keeps their writes out of sync",
				p->r->vols[i].vnr, strerror(-rc), n ? batch[0].barrier : 0,
				n ? batch[n - 1].barrier : 0);
			peer_fail(p, rc);
			return;
		}
	}
	for (i = 0; i < n; i++) {
		struct wire_pkt a;

		memset(&a, 0, sizeof(a));
		a.type = WIRE_P_BARRIER_ACK;
		a.volume = WIRE_VOL_NONE;
		a.u.barrier = batch[i];
		if (peer_send_meta(p, &a) < 0)
			break;
	}
}

/* Take every queued barrier into batch (p->lock held); the caller flushes
 * them and then calls batch_done(). */
static unsigned int take_batch(struct peer *p, struct wire_barrier *batch)
{
	unsigned int n;

	for (n = 0; n < p->fl_n; n++)
		batch[n] = p->fl_q[(p->fl_head + n) % FL_QUEUE].b;
	p->fl_head = (p->fl_head + n) % FL_QUEUE;
	p->fl_n = 0;
	p->fl_urgent = 0;
	p->fl_busy = true;
	if (n == FL_QUEUE) /* the session thread may wait for room */
		pthread_cond_broadcast(&p->fl_cond);
	return n;
}

static void batch_done(struct peer *p)
{
	bool more;

	pthread_mutex_lock(&p->lock);
	p->fl_busy = false;
	more = p->fl_n > 0;
	pthread_mutex_unlock(&p->lock);
	if (more) /* barriers queued meanwhile, for the flusher */
		pthread_cond_broadcast(&p->fl_cond);
}

/*
 * Every write before the barrier was applied (in order). The flusher
 * thread makes them stable and acks the barrier; meanwhile this thread
 * goes on applying the writes of the next epoch. Barriers that queue up
 * while a flush runs share the next one (group commit), so a flush no
 * longer stalls the data stream once per epoch.
 *
 * A barrier a FLUSH waits for, arriving on an idle stream (nothing more
 * received) while the flusher is idle, is flushed and acked here: the
 * stream has nothing to apply meanwhile, and waking the flusher would
 * only add a thread switch to the FLUSH's round trip.
 */
int flusher_on_barrier(struct peer *p, const struct wire_pkt *pkt)
{
	bool wake = false;
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	while (p->fl_n == FL_QUEUE && !p->session_err && !p->stop)
		pthread_cond_wait(&p->fl_cond, &p->lock);
	if (p->session_err || p->stop) {
		rc = -ECONNABORTED;
	} else {
		struct fl_item *it = &p->fl_q[(p->fl_head + p->fl_n++) % FL_QUEUE];

		it->b = (struct wire_barrier){pkt->u.barrier.barrier, p->recv_epoch_writes, 0};
		it->urgent = (pkt->u.barrier.flags & WIRE_BF_FLUSH) ||
			     !(p->agreed.features & WIRE_F_BARRIER_FLUSH);
		it->at_ms = peer_now_ms();
		p->recv_epoch_writes = 0;
		if (it->urgent && !p->fl_busy && !pktio_pending(p->data)) {
			struct wire_barrier batch[FL_QUEUE];
			unsigned int n = take_batch(p, batch);

			pthread_mutex_unlock(&p->lock);
			flush_batch(p, batch, n);
			batch_done(p);
			return 0;
		}
		if (it->urgent)
			p->fl_urgent++;
		/* the flusher: to flush now, to start its timer, or a full queue */
		wake = it->urgent || p->fl_n == 1 || p->fl_n >= FL_QUEUE / 2;
	}
	pthread_mutex_unlock(&p->lock);
	if (wake)
		pthread_cond_broadcast(&p->fl_cond);
	return rc;
}

/*
 * Barriers that no FLUSH waits for (no WIRE_BF_FLUSH) may wait up to
 * FL_DEFER_MS for company: their acks only let the Primary forget the
 * writes, so one flush per FL_DEFER_MS is enough for them, and a busy
 * link no longer costs one flush per completed write. A FLUSH barrier
 * (or any barrier from a peer that does not mark them) is flushed at once,
 * together with every barrier queued before it.
 */
static bool flush_due(const struct peer *p)
{
	const struct fl_item *oldest = &p->fl_q[p->fl_head];

	return p->fl_urgent || p->fl_n >= FL_QUEUE / 2 ||
	       peer_now_ms() - oldest->at_ms >= FL_DEFER_MS;
}

static void wait_flush_due(struct peer *p)
{
	while (!p->fl_stop && (!p->fl_n || !flush_due(p) || p->fl_busy)) {
		struct timespec ts;
		int64_t left;

		if (!p->fl_n || p->fl_busy) {
			pthread_cond_wait(&p->fl_cond, &p->lock);
			continue;
		}
		left = p->fl_q[p->fl_head].at_ms + FL_DEFER_MS - peer_now_ms();
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(left > 0 ? left : 0) * 1000000L;
		while (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->fl_cond, &p->lock, &ts);
	}
}

void *flusher_thread(void *arg)
{
	struct peer *p = arg;
	struct wire_barrier batch[FL_QUEUE];
	unsigned int n;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		wait_flush_due(p);
		if (p->fl_stop) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		n = take_batch(p, batch);
		pthread_mutex_unlock(&p->lock);
		flush_batch(p, batch, n);
		batch_done(p);
	}
	return NULL;
}


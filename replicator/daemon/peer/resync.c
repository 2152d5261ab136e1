/*
 * resync: the resync after the handshake (doc/wire-protocol.md §9.1),
 * started by sync.c. The target's thread asks for the blocks marked in
 * its bitmap, in bitmap order, at the rate the controller (rsctl)
 * allows; the source reads and sends them; both clear the bits as the
 * blocks are written. With csums the target sends digests instead and
 * the source answers P_RS_IS_IN_SYNC for equal blocks.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "peer/peer-int.h"
#include "rsctl.h"

#define RS_REQ_BITS 32u /* blocks per resync request: 128 KiB */
#define RS_STEP_MS 100 /* the controller's step (DRBD's SLEEP_TIME) */

/*
 * Source: read the requested blocks and send them (the range is claimed,
 * so an application write of the same blocks goes before or after, never
 * between the read and the send). A checksum request (P_CSUM_RS_REQUEST)
 * is answered with P_RS_IS_IN_SYNC instead when our blocks have the
 * target's digest: both nodes then mark them in sync without the data.
 */
static int answer_rs_request(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	const struct wire_req *q = &pkt->u.req;
	uint8_t dg[DIGEST_MAX_SIZE], mine[DIGEST_MAX_SIZE];
	bool csum = pkt->type == WIRE_P_CSUM_RS_REQUEST;
	struct wire_pkt rep;
	uint8_t *buf;
	int rc;

	if (!pv || wire_req_check(q, pv->v->size_sect, WIRE_MAX_DATA) < 0)
		return -EPROTO;
	if (csum && (!p->cs_alg || pkt->digest_len != digest_size(p->cs_alg))) {
		log_res(LOG_ERR, p->r->name,
			"protocol error: P_CSUM_RS_REQUEST with a %u-byte digest, csums-alg %s has "
			"%zu",
			pkt->digest_len, p->cs_alg ? digest_name(p->cs_alg) : "(none)",
			p->cs_alg ? digest_size(p->cs_alg) : (size_t)0);
		return -EPROTO;
	}
	buf = malloc(q->size);
	if (!buf)
		return -ENOMEM;
	memset(&rep, 0, sizeof(rep));
	rep.volume = pkt->volume;
	rc = volume_read_claimed(pv->v, q->sector * 512, q->size, buf, (void *)p, NULL);
	if (rc < 0) {
		rep.type = WIRE_P_NEG_RS_DREPLY;
		rep.u.ack = (struct wire_ack){q->sector, q->id, q->size, 0};
		free(buf);
		return peer_send_meta(p, &rep);
	}
	if (csum && digest_buf(p->cs_alg, buf, q->size, mine) == 0 &&
	    !memcmp(mine, pkt->digest, pkt->digest_len)) {
		volume_clear_oos(pv->v, q->sector * 512, q->size);
		volume_read_release(pv->v, q->sector * 512, q->size);
		free(buf);
		pthread_mutex_lock(&p->lock);
		pv->cs_req += q->size / 4096;
		pv->cs_same += q->size / 4096;
		pthread_mutex_unlock(&p->lock);
		rep.type = WIRE_P_RS_IS_IN_SYNC;
		rep.u.ack = (struct wire_ack){q->sector, q->id, q->size, 0};
		return peer_send_meta(p, &rep);
	}
	if (csum) {
		pthread_mutex_lock(&p->lock);
		pv->cs_req += q->size / 4096;
		pthread_mutex_unlock(&p->lock);
	}
	rep.type = WIRE_P_RS_DATA_REPLY;
	rep.u.data = (struct wire_data){q->sector, q->id, 0, 0};
	rep.data = buf;
	rep.data_len = q->size;
	rc = integrity_sign(p, &rep, dg);
	if (rc == 0)
		rc = peer_send(p, &rep);
	if (rc == 0)
		__atomic_add_fetch(&pv->v->c.ns, q->size / 1024, __ATOMIC_RELAXED);
	volume_read_release(pv->v, q->sector * 512, q->size);
	free(buf);
	return rc;
}

int resync_on_rs_request(struct peer *p, const struct wire_pkt *pkt)
{
	return answer_rs_request(p, pkt);
}

int resync_on_csum_request(struct peer *p, const struct wire_pkt *pkt)
{
	return answer_rs_request(p, pkt);
}

/* DRBD's line at the end of a checksum-based resync (both nodes). */
void resync_log_csums(struct peer *p, const struct peer_vol *pv)
{
	uint64_t req, same;

	pthread_mutex_lock(&p->lock);
	req = pv->cs_req;
	same = pv->cs_same;
	pthread_mutex_unlock(&p->lock);
	if (!req)
		return;
	log_res(LOG_INFO, p->r->name,
		"volume %u: %llu %% had equal checksums, eliminated: %lluK; transferred %lluK "
		"total %lluK",
		pv->v->vnr, (unsigned long long)(same * 100 / req), (unsigned long long)same * 4,
		(unsigned long long)(req - same) * 4, (unsigned long long)req * 4);
}

static void finish_target(struct peer *p, struct peer_vol *pv)
{
	struct volume *v = pv->v;
	struct gi g, peer;
	int64_t ms = peer_now_ms() - pv->rs_start_ms;

	pthread_mutex_lock(&v->lock);
	volume_gi(v, &g);
	memcpy(peer.uuid, pv->puuids.uuid, sizeof(peer.uuid));
	gi_end_sync_target(&g, &peer, resource_state(p->r).role == ROLE_PRIMARY);
	volume_set_gi(v, &g);
	volume_set_flags(v, MDF_CONSISTENT | MDF_WAS_UP_TO_DATE, MDF_CRASHED_PRIMARY);
	state_change(p->r,
		     &(struct state_chg){.mask = SC_DISK | SC_REPL, .vol = (int)(v - p->r->vols),
					 .disk = DISK_UPTODATE, .repl = CONN_CONNECTED,
					 .how = STATE_HARD},
		     "resync done (as SyncTarget)");
	volume_sync_sb(v);
	volume_writeback_bitmap_locked(v);
	volume_unlock(v);
	log_res(LOG_NOTICE, p->r->name, "volume %u: resync done (%llu KiB in %lld.%03lld s)",
		v->vnr, (unsigned long long)pv->rs_done * 4, (long long)ms / 1000,
		(long long)ms % 1000);
	resync_log_csums(p, pv);
	if (conf_res_text(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_HANDLERS, "after-resync-target"))
		p->r->d->up->handler_run(p->r, "after-resync-target", (int)v->vnr, NULL, NULL);
}

/* Target: write the blocks, clear their bits, ack to the source. */
int resync_on_rs_reply(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	const struct wire_data *w = &pkt->u.data;
	struct wire_pkt ack;
	uint64_t bits;
	int rc;

	if (!pv || peer_vol_repl(pv) != CONN_SYNCTARGET || !pkt->data_len ||
	    w->sector + pkt->data_len / 512 > pv->v->size_sect)
		return -EPROTO;
	rc = integrity_check(p, pkt);
	if (rc < 0)
		return rc;
	__atomic_add_fetch(&pv->v->c.nr, pkt->data_len / 1024, __ATOMIC_RELAXED);
	rc = volume_rs_write(pv->v, w->sector * 512, pkt->data_len, pkt->data);
	bits = pkt->data_len / 4096;
	memset(&ack, 0, sizeof(ack));
	ack.type = rc < 0 ? WIRE_P_NEG_ACK : WIRE_P_RS_WRITE_ACK;
	ack.volume = pkt->volume;
	ack.u.ack = (struct wire_ack){w->sector, w->id, pkt->data_len, 0};
	pthread_mutex_lock(&p->lock);
	pv->rs_inflight -= pv->rs_inflight >= bits ? bits : pv->rs_inflight;
	pv->rs_done += bits;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return peer_send_meta(p, &ack);
}

/* Target, P_RS_IS_IN_SYNC: the source has the blocks we digested; they
 * are in sync without a copy. */
void resync_on_in_sync(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	uint64_t bits = pkt->u.ack.size / 4096;

	if (!pv || peer_vol_repl(pv) != CONN_SYNCTARGET ||
	    pkt->u.ack.sector + pkt->u.ack.size / 512 > pv->v->size_sect)
		return;
	volume_clear_oos(pv->v, pkt->u.ack.sector * 512, pkt->u.ack.size);
	pthread_mutex_lock(&p->lock);
	pv->rs_inflight -= pv->rs_inflight >= bits ? bits : pv->rs_inflight;
	pv->rs_done += bits;
	pv->cs_same += bits;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* Source: the target wrote the blocks: they are in sync now. */
void resync_on_rs_ack(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);

	if (pv && pkt->type == WIRE_P_NEG_RS_DREPLY && peer_vol_repl(pv) == CONN_VERIFYS) {
		verify_on_neg(p, pkt);
		return;
	}
	if (!pv || pkt->type != WIRE_P_RS_WRITE_ACK)
		return;
	volume_clear_oos(pv->v, pkt->u.ack.sector * 512, pkt->u.ack.size);
}

/* Wait until `need` more fits under the in-flight limit (*inflight is
 * changed under p->lock, which signals p->cond): 0, or -ETIMEDOUT at the
 * end of the step, -ECANCELED when stopping. Resync and verify. */
int resync_wait_window(struct peer *p, const uint64_t *inflight, uint64_t need,
		       uint64_t max_inflight, int64_t step_end)
{
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	while (*inflight + need > max_inflight && *inflight) {
		struct timespec ts;
		int64_t left = step_end - peer_now_ms();

		if (p->stop || p->session_err) {
			rc = -ECANCELED;
			break;
		}
		if (left <= 0) {
			rc = -ETIMEDOUT;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += left / 1000;
		ts.tv_nsec += (long)(left % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/* Target with csums: read and digest our blocks of the request q and
 * turn it into P_CSUM_RS_REQUEST. On a read error q stays a plain request
 * (the source's data overwrite whatever we have). */
static int csum_request(struct peer *p, struct peer_vol *pv, struct wire_pkt *q, uint8_t *buf,
			uint8_t *dg)
{
	uint64_t off = q->u.req.sector * 512;
	uint32_t len = q->u.req.size;
	int rc;

	rc = volume_read_claimed(pv->v, off, len, buf, NULL, NULL);
	if (rc < 0)
		return rc;
	rc = digest_buf(p->cs_alg, buf, len, dg);
	volume_read_release(pv->v, off, len);
	if (rc < 0)
		return rc;
	q->type = WIRE_P_CSUM_RS_REQUEST;
	q->digest = dg;
	q->digest_len = (uint32_t)digest_size(p->cs_alg);
	return 0;
}

/* The rate controller of a resync or verify, from the disk/net options. */
int resync_new_ctl(struct peer *p, struct rsctl **ctl)
{
	const struct conf *c = tandemd_conf(p->r->d);
	struct rsctl_params prm;

	memset(&prm, 0, sizeof(prm));
	prm.resync_rate = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "resync-rate");
	prm.c_plan_ahead = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "c-plan-ahead");
	prm.c_delay_target = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "c-delay-target");
	prm.c_fill_target = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "c-fill-target");
	prm.c_max_rate = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "c-max-rate");
	prm.c_min_rate = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "c-min-rate");
	prm.max_buffers = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_NET, "max-buffers");
	return rsctl_new(&prm, ctl);
}

/* Sleep out the rest of a controller step; the next one ends step_ms later. */
void resync_step_sleep(struct peer *p, int64_t *step_end, int step_ms)
{
	if (peer_now_ms() < *step_end)
		peer_sleep(p, (int)(*step_end - peer_now_ms()));
	*step_end += step_ms;
	if (*step_end < peer_now_ms())
		*step_end = peer_now_ms() + step_ms;
}

/* The target's pacing thread: requests in bitmap order, at the rate of
 * the controller (one step every RS_STEP_MS, as DRBD's), at most
 * max-buffers/2 pages in flight at any time. */
static void *rs_thread(void *arg)
{
	struct peer *p = arg;
	const struct conf *c = tandemd_conf(p->r->d);
	struct rsctl *ctl = NULL;
	unsigned int i;
	uint64_t max_inflight =
		conf_res_num(c, resource_cr(p->r), CONF_SECT_NET, "max-buffers") / 2; /* 4 KiB pages */
	uint64_t done_before = 0;
	bool was_after = false;
	int64_t step_end = peer_now_ms() + RS_STEP_MS;
	uint8_t dg[DIGEST_MAX_SIZE], *buf = malloc(RS_REQ_BITS * 4096);

	if (!buf) {
		peer_fail(p, -ENOMEM);
		return NULL;
	}
	if (resync_new_ctl(p, &ctl) < 0) {
		log_res(LOG_ERR, p->r->name, "resync: the rate controller refuses the settings "
					     "(resync-rate, c-*); check them with 'tandemadm dump'");
		peer_fail(p, -EINVAL);
		free(buf);
		return NULL;
	}
	for (;;) {
		bool active = false, after = peer_after_isp(p->r);

		if (after != was_after) { /* resync-after: tell the source, show it */
			was_after = after;
			for (i = 0; i < p->r->n_vols; i++)
				peer_send_state(p, i);
			if (after)
				log_res(LOG_INFO, p->r->name, "resync waits for %s (resync-after)",
					conf_res_text(c, resource_cr(p->r), CONF_SECT_DISK, "resync-after"));
		}
		peer_show_sync_state(p->r);
		pthread_mutex_lock(&p->lock);
		if (p->stop || p->session_err) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		pthread_mutex_unlock(&p->lock);
		for (i = 0; i < p->r->n_vols; i++) {
			struct peer_vol *pv = &p->pv[i];
			struct volume *v = pv->v;
			uint64_t done_now, sect_in, budget, sent = 0;

			if (peer_vol_repl(pv) != CONN_SYNCTARGET)
				continue;
			active = true;
			if (peer_sync_paused(p, pv))
				continue;
			pthread_mutex_lock(&p->lock);
			done_now = pv->rs_done;
			sect_in = (done_now - done_before) * 8;
			done_before = done_now;
			budget = rsctl_step(ctl, sect_in, pv->rs_inflight * 8) / 8;
			pthread_mutex_unlock(&p->lock);
			while (sent < budget) {
				struct wire_pkt q;
				uint64_t b, n;
				bool csum;

				/* max-buffers bounds what is in flight, not the rate:
				 * wait for replies within this step */
				if (resync_wait_window(p, &pv->rs_inflight, RS_REQ_BITS, max_inflight,
						       step_end) < 0)
					break;

				pthread_mutex_lock(&v->lock);
				b = bitmap_find_next_set(v->bm, pv->rs_pos);
				for (n = 1; n < RS_REQ_BITS && b + n < bitmap_bits(v->bm) &&
					    bitmap_test(v->bm, b + n) && (b + n) % RS_REQ_BITS;
				     n++)
					;
				pthread_mutex_unlock(&v->lock);
				if (b >= bitmap_bits(v->bm) || b * 8 >= v->size_sect) {
					pv->rs_pos = bitmap_bits(v->bm); /* all requested */
					break;
				}
				if ((b + n) * 8 > v->size_sect)
					n = v->size_sect / 8 - b;
				if (!n)
					break;
				pv->rs_pos = b + n;
				memset(&q, 0, sizeof(q));
				q.type = WIRE_P_RS_DATA_REQUEST;
				q.volume = (uint16_t)v->vnr;
				q.u.req = (struct wire_req){b * 8, b, (uint32_t)(n * 4096)};
				csum = pv->rs_csums && csum_request(p, pv, &q, buf, dg) == 0;
				pthread_mutex_lock(&p->lock);
				pv->rs_inflight += n;
				if (csum)
					pv->cs_req += n;
				pthread_mutex_unlock(&p->lock);
				if (peer_send(p, &q) < 0)
					break;
				sent += n;
			}
			pthread_mutex_lock(&p->lock);
			if (pv->rs_pos >= bitmap_bits(v->bm) || pv->rs_pos * 8 >= v->size_sect) {
				/* every request sent: wait for the last replies */
				if (!pv->rs_inflight) {
					uint64_t left;

					pthread_mutex_unlock(&p->lock);
					pthread_mutex_lock(&v->lock);
					left = bitmap_find_next_set(v->bm, 0);
					pthread_mutex_unlock(&v->lock);
					if (left < bitmap_bits(v->bm) && left * 8 < v->size_sect) {
						pv->rs_pos = 0; /* bits set meanwhile: another pass */
						continue;
					}
					finish_target(p, pv);
					sync_send_uuids(p, i);
					peer_send_state(p, i);
					peer_sync_done(p->r, v);
					continue;
				}
			}
			pthread_mutex_unlock(&p->lock);
		}
		if (!active)
			break;
		resync_step_sleep(p, &step_end, RS_STEP_MS);
	}
	rsctl_free(ctl);
	free(buf);
	return NULL;
}

int resync_start_thread(struct peer *p)
{
	unsigned int i;

	for (i = 0; i < p->r->n_vols; i++)
		if (peer_vol_repl(&p->pv[i]) == CONN_SYNCTARGET)
			break;
	if (i == p->r->n_vols)
		return 0;
	if (pthread_create(&p->rs_thread, NULL, rs_thread, p) != 0)
		return -EAGAIN;
	p->rs_running = true;
	return 0;
}

void resync_stop(struct peer *p)
{
	if (p->rs_running) {
		pthread_join(p->rs_thread, NULL);
		p->rs_running = false;
	}
}

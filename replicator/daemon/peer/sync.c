/*
 * sync: the handshake of a new connection (doc/wire-protocol.md §6), up
 * to the start of the resync that may follow (resync.c, §9.1).
 *
 * Both nodes send P_PROTOCOL and, per volume, P_SYNC_PARAM, P_SIZES,
 * P_UUIDS and P_STATE, then decide each volume on their own with
 * uuidcmp_handshake() (ref/drbd-semantics.md §5): no sync, SyncSource,
 * SyncTarget, or a refusal (StandAlone). A resync exchanges the bitmaps
 * (the source first; both merge with OR), moves the UUIDs, and the target
 * then requests the marked blocks in bitmap order at the rate the
 * controller allows (rsctl). At the end the target's UUIDs and disk state
 * follow the source's.
 *
 * With csums-alg (and WIRE_F_CSUMS) the target reads and digests its own
 * blocks and asks with P_CSUM_RS_REQUEST instead; the source answers
 * P_RS_IS_IN_SYNC when its blocks have the same digest, so blocks that
 * are marked but equal cost a digest instead of their data. With
 * csums-after-crash-only, only the resync after a Primary crash does so.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bmx.h"
#include "log.h"
#include "peer/peer-int.h"
#include "uuidcmp.h"

/* ---------------------------------------------------------------- sending */

static enum sbpolicy asb(struct peer *p, const char *opt, enum sbpolicy_slot slot, char *node)
{
	const char *t = conf_res_text(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_NET, opt);
	enum sbpolicy v = SBPOLICY_DISCONNECT;

	if (t)
		sbpolicy_parse(slot, t, &v, node, SBPOLICY_NODE_MAX);
	return v;
}

static void conf_asb(struct peer *p, struct sbpolicy_conf *c)
{
	sbpolicy_conf_init(c);
	c->after_sb_0pri = asb(p, "after-sb-0pri", SBPOLICY_0PRI, c->node);
	c->after_sb_1pri = asb(p, "after-sb-1pri", SBPOLICY_1PRI, NULL);
	c->after_sb_2pri = asb(p, "after-sb-2pri", SBPOLICY_2PRI, NULL);
}

static const char *integrity_alg(struct peer *p)
{
	const char *a = conf_res_text(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_NET, "data-integrity-alg");

	return a ? a : "";
}

static int send_protocol(struct peer *p)
{
	struct wire_pkt pkt = {.type = WIRE_P_PROTOCOL, .volume = WIRE_VOL_NONE};
	struct wire_protocol *w = &pkt.u.protocol;
	struct sbpolicy_conf c;

	conf_asb(p, &c);
	w->protocol = (uint8_t)p->protocol;
	w->after_sb_0pri = (uint8_t)sbpolicy_localize(c.after_sb_0pri, c.node, p->me);
	w->after_sb_1pri = (uint8_t)c.after_sb_1pri;
	w->after_sb_2pri = (uint8_t)c.after_sb_2pri;
	if (conf_res_bool(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_NET, "allow-two-primaries"))
		w->flags |= WIRE_PF_TWO_PRIMARIES;
	if (p->discard_my_data)
		w->flags |= WIRE_PF_DISCARD_MY_DATA;
	if (conf_res_bool(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_NET, "always-asbp"))
		w->flags |= WIRE_PF_ALWAYS_ASBP;
	snprintf(w->integrity_alg, sizeof(w->integrity_alg), "%s", integrity_alg(p));
	return peer_send(p, &pkt);
}

static uint64_t uuid_flags(struct peer *p, struct volume *v)
{
	uint64_t f = 0;

	if (p->discard_my_data)
		f |= WIRE_UF_DISCARD_MY_DATA;
	if (volume_flags(v) & MDF_CRASHED_PRIMARY)
		f |= WIRE_UF_CRASHED_PRIMARY;
	if (volume_disk(v) <= DISK_INCONSISTENT)
		f |= WIRE_UF_INCONSISTENT;
	return f;
}

int sync_send_uuids(struct peer *p, unsigned int vi)
{
	struct volume *v = &p->r->vols[vi];
	struct wire_pkt pkt = {.type = WIRE_P_UUIDS, .volume = (uint16_t)v->vnr};
	struct gi g;

	pthread_mutex_lock(&v->lock);
	volume_gi(v, &g);
	memcpy(pkt.u.uuids.uuid, g.uuid, sizeof(pkt.u.uuids.uuid));
	pkt.u.uuids.weight = v->bm ? bitmap_weight(v->bm) : 0;
	pkt.u.uuids.flags = uuid_flags(p, v);
	pthread_mutex_unlock(&v->lock);
	return peer_send(p, &pkt);
}

static int send_volume(struct peer *p, unsigned int vi)
{
	struct volume *v = &p->r->vols[vi];
	const struct conf *c = tandemd_conf(p->r->d);
	struct wire_pkt pkt = {.type = WIRE_P_SYNC_PARAM, .volume = (uint16_t)v->vnr};
	struct wire_sync_param *sp = &pkt.u.sync_param;
	int rc;

	sp->resync_rate = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "resync-rate");
	sp->c_plan_ahead = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "c-plan-ahead");
	sp->c_delay_target = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "c-delay-target");
	sp->c_fill_target = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "c-fill-target");
	sp->c_max_rate = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "c-max-rate");
	sp->c_min_rate = (uint32_t)conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "c-min-rate");
	snprintf(sp->verify_alg, sizeof(sp->verify_alg), "%s",
		 conf_res_text(c, resource_cr(p->r), CONF_SECT_NET, "verify-alg") ?: "");
	snprintf(sp->csums_alg, sizeof(sp->csums_alg), "%s",
		 conf_res_text(c, resource_cr(p->r), CONF_SECT_NET, "csums-alg") ?: "");
	rc = peer_send(p, &pkt);
	if (rc < 0)
		return rc;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = WIRE_P_SIZES;
	pkt.volume = (uint16_t)v->vnr;
	pkt.u.sizes.d_size = md_layout(v->md)->max_data_sect;
	pkt.u.sizes.u_size = conf_res_num(c, resource_cr(p->r), CONF_SECT_DISK, "size");
	pkt.u.sizes.c_size = v->size_sect;
	pkt.u.sizes.max_req = WIRE_MAX_DATA;
	rc = peer_send(p, &pkt);
	if (rc == 0)
		rc = sync_send_uuids(p, vi);
	if (rc < 0)
		return rc;
	memset(&pkt, 0, sizeof(pkt));
	peer_fill_state(p, &pkt, vi);
	return peer_send(p, &pkt);
}

/* ---------------------------------------------------------------- receiving */

static int expect(struct peer *p, uint16_t type, uint16_t vol, struct wire_pkt *pkt)
{
	char why[WIRE_REASON_MAX];
	int rc = pktio_recv(p->data, p->ping_timeout_ms * 4 + p->timeout_ms, pkt, why,
			    sizeof(why));

	if (rc < 0) {
		if (rc == -EPROTO || rc == -EBADMSG || rc == -E2BIG)
			log_res(LOG_ERR, p->r->name, "protocol error: %s", why);
		return rc;
	}
	if (pkt->type != type || (vol != WIRE_VOL_NONE && pkt->volume != vol)) {
		log_res(LOG_ERR, p->r->name, "protocol error: expected %s for volume %u, got %s",
			wire_type_name(type), vol, wire_type_name(pkt->type));
		return -EPROTO;
	}
	return 0;
}

/* verify-alg and csums-alg must be the same on both nodes (as DRBD). */
static int check_sync_param(struct peer *p, const struct wire_sync_param *sp)
{
	const struct conf *c = tandemd_conf(p->r->d);
	static const char *const opts[] = {"verify-alg", "csums-alg"};
	const char *theirs[] = {sp->verify_alg, sp->csums_alg};
	unsigned int i;

	for (i = 0; i < 2; i++) {
		const char *mine = conf_res_text(c, resource_cr(p->r), CONF_SECT_NET, opts[i]) ?: "";

		if (strcmp(mine, theirs[i])) {
			log_res(LOG_ERR, p->r->name,
				"incompatible %s settings: me=\"%s\" peer=\"%s\"; set the same "
				"on both nodes and run 'tandemadm adjust %s' on both",
				opts[i], mine, theirs[i], p->r->name);
			return -EACCES;
		}
	}
	return 0;
}

/* The peer's settings must fit ours (§7.4); -EACCES: StandAlone. */
static int check_protocol(struct peer *p, const struct wire_protocol *w)
{
	struct sbpolicy_conf c;
	bool two = conf_res_bool(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_NET, "allow-two-primaries");

	conf_asb(p, &c);
	if (w->protocol != p->protocol) {
		log_res(LOG_ERR, p->r->name,
			"incompatible communication protocols: we use %c, the peer %c; set the "
			"same 'protocol' on both nodes",
			'A' + p->protocol - 1, 'A' + w->protocol - 1);
		return -EACCES;
	}
	if (sbpolicy_mirror((enum sbpolicy)w->after_sb_0pri) !=
		    sbpolicy_localize(c.after_sb_0pri, c.node, p->me) ||
	    w->after_sb_1pri != c.after_sb_1pri || w->after_sb_2pri != c.after_sb_2pri) {
		log_res(LOG_ERR, p->r->name,
			"incompatible after-sb policies (after-sb-0pri/1pri/2pri differ from the "
			"peer's); configure the same on both nodes");
		return -EACCES;
	}
	if (!!(w->flags & WIRE_PF_TWO_PRIMARIES) != two) {
		log_res(LOG_ERR, p->r->name,
			"incompatible setting of allow-two-primaries; configure the same on both "
			"nodes");
		return -EACCES;
	}
	if (strcmp(w->integrity_alg, integrity_alg(p))) {
		log_res(LOG_ERR, p->r->name,
			"incompatible data-integrity-alg settings: the peer uses '%.64s', we use "
			"'%s'; configure the same on both nodes",
			w->integrity_alg, integrity_alg(p));
		return -EACCES;
	}
	if ((w->flags & WIRE_PF_DISCARD_MY_DATA) && p->discard_my_data) {
		log_res(LOG_ERR, p->r->name,
			"both nodes asked for discard-my-data; connect only the node whose data "
			"is to be discarded with --discard-my-data");
		return -EACCES;
	}
	return 0;
}

/* The algorithm of a digest option for the session; "" is none. An
 * unknown name cannot pass the configuration check, but a library
 * without it (md5 in FIPS mode) can: -EACCES, StandAlone. */
static int session_alg(struct peer *p, const char *opt, const char *name,
		       const struct digest_alg **out)
{
	int rc;

	*out = NULL;
	if (!name[0])
		return 0;
	rc = digest_lookup(name, out);
	if (rc < 0) {
		log_res(LOG_ERR, p->r->name, "%s %s: %s; use one of %s on both nodes", opt, name,
			rc == -EOPNOTSUPP ? "not provided by this OpenSSL" : "unknown algorithm",
			digest_known());
		return -EACCES;
	}
	return 0;
}

/* ---------------------------------------------------------------- decision */

static void side_of(struct peer *p, struct volume *v, struct uuidcmp_side *s)
{
	memset(s, 0, sizeof(*s));
	volume_gi(v, &s->uuids);
	s->bits = bitmap_weight(v->bm);
	s->discard_my_data = p->discard_my_data;
	s->crashed_primary = volume_flags(v) & MDF_CRASHED_PRIMARY;
	s->inconsistent = volume_disk(v) <= DISK_INCONSISTENT;
	s->primary = resource_state(p->r).role == ROLE_PRIMARY;
}

static void peer_side_of(const struct peer_vol *pv, struct uuidcmp_side *s)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->uuids.uuid, pv->puuids.uuid, sizeof(s->uuids.uuid));
	s->bits = pv->puuids.weight;
	s->discard_my_data = pv->puuids.flags & WIRE_UF_DISCARD_MY_DATA;
	s->crashed_primary = pv->puuids.flags & WIRE_UF_CRASHED_PRIMARY;
	s->inconsistent = pv->puuids.flags & WIRE_UF_INCONSISTENT;
	s->primary = pv->pstate.role == ROLE_PRIMARY;
}

static void run_handlers(struct peer *p, unsigned int h, unsigned int vnr)
{
	unsigned int bit;

	for (bit = 1; bit <= UUIDCMP_H_PRI_LOST; bit <<= 1)
		if (h & bit)
			p->r->d->up->handler_run(p->r, uuidcmp_handler_name(bit), (int)vnr, NULL, NULL);
}

static void log_lines(struct peer *p, int prio, const char *text)
{
	const char *s = text, *e;

	while (*s) {
		e = strchr(s, '\n');
		if (!e)
			e = s + strlen(s);
		log_res(prio, p->r->name, "%.*s", (int)(e - s), s);
		s = *e ? e + 1 : e;
	}
}

static int decide(struct peer *p, unsigned int vi, struct uuidcmp_decision *d)
{
	struct peer_vol *pv = &p->pv[vi];
	struct volume *v = pv->v;
	struct uuidcmp_input in;
	const char *rr;
	int rc;

	memset(&in, 0, sizeof(in));
	pthread_mutex_lock(&v->lock);
	side_of(p, v, &in.self);
	pthread_mutex_unlock(&v->lock);
	peer_side_of(pv, &in.peer);
	in.disk = volume_disk(v);
	in.pdsk = (enum state_disk)pv->pstate.disk;
	in.resolve_conflicts = !p->initiator;
	conf_asb(p, &in.asb);
	in.always_asbp = conf_res_bool(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_NET, "always-asbp");
	rr = conf_res_text(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_NET, "rr-conflict");
	in.rr_conflict = SBPOLICY_DISCONNECT;
	if (rr)
		sbpolicy_parse_rr_conflict(rr, &in.rr_conflict);
	/* call-pri-lost-after-sb: a Primary nobody uses may give up the role */
	in.can_demote = resource_state(p->r).role == ROLE_PRIMARY && !p->r->d->up->device_open(p->r);
	in.self_name = p->me;
	in.peer_name = p->peer_name;
	in.resource = p->r->name;
	rc = uuidcmp_handshake(&in, d);
	if (rc < 0)
		return rc;
	/* a split brain, not resolved by hand: one verdict for both nodes (the
	 * arbiter's records carry the first volume's UUIDs, so volume 0 asks) */
	if (vi == 0 && d->split_brain && !in.dry_run && !in.self.discard_my_data &&
	    !in.peer.discard_my_data) {
		struct sb_verdict sv;

		if (sb_verdict_ask(p, &in, &sv) == 0) {
			sb_verdict_apply(&sv, &in);
			rc = uuidcmp_handshake(&in, d);
			if (rc < 0)
				return rc;
		}
	}
	log_lines(p, d->outcome == UUIDCMP_DROP ? LOG_ERR : LOG_INFO, d->log);
	if (d->cmp.fix_self) {
		pthread_mutex_lock(&v->lock);
		volume_set_gi(v, &d->cmp.self_gi);
		volume_unlock(v);
	}
	if (d->cmp.fix_peer)
		memcpy(pv->puuids.uuid, d->cmp.peer_gi.uuid, sizeof(pv->puuids.uuid));
	if (d->demote)
		p->sb_demote = true;
	rc = sbsave_run_prepare(p, pv, d->split_brain, d->outcome == UUIDCMP_SYNC_TARGET);
	if (rc < 0) {
		d->outcome = UUIDCMP_DROP;
		return 0;
	}
	if (pv->sb_path[0])
		snprintf(p->r->sb_save, sizeof(p->r->sb_save), "%s", pv->sb_path);
	run_handlers(p, d->handlers, v->vnr);
	return 0;
}

/* ---------------------------------------------------------------- bitmaps */

static int send_bitmap(struct peer *p, struct volume *v)
{
	uint8_t *buf = malloc(WIRE_BM_MAX_CHUNK);
	struct bmx_enc *enc = NULL;
	struct wire_pkt pkt;
	enum bmx_kind kind;
	size_t len;
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = bmx_enc_new(v->bm,
			 conf_res_bool(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_NET, "use-rle"), &enc);
	while (rc == 0) {
		/* new writes wait while the volume is frozen for the handshake;
		 * the lock keeps out those already past that point */
		pthread_mutex_lock(&v->lock);
		rc = bmx_enc_next(enc, buf, WIRE_BM_MAX_CHUNK, &len, &kind);
		pthread_mutex_unlock(&v->lock);
		if (rc <= 0)
			break;
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = kind == BMX_PLAIN ? WIRE_P_BITMAP : WIRE_P_COMPRESSED_BITMAP;
		pkt.volume = (uint16_t)v->vnr;
		pkt.data = buf;
		pkt.data_len = (uint32_t)len;
		rc = peer_send(p, &pkt);
	}
	if (rc == 0) {
		struct bmx_stats st;
		char line[200];

		bmx_enc_stats(enc, &st);
		bmx_stats_format(&st, line, sizeof(line));
		log_res(LOG_INFO, p->r->name, "volume %u: send bitmap stats [Bytes(packets)]: %s",
			v->vnr, line);
	}
	bmx_enc_free(enc);
	free(buf);
	if (rc < 0)
		return rc;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = WIRE_P_BITMAP_DONE;
	pkt.volume = (uint16_t)v->vnr;
	pkt.u.bitmap_done.bits = bitmap_bits(v->bm);
	pkt.u.bitmap_done.weight = bitmap_weight(v->bm);
	return peer_send(p, &pkt);
}

static int recv_bitmap(struct peer *p, struct volume *v)
{
	char why[WIRE_REASON_MAX], line[200];
	struct bmx_stats st;
	struct wire_pkt pkt;
	uint64_t pos = 0;
	int rc;

	bmx_stats_init(&st, bitmap_bits(v->bm));
	for (;;) {
		rc = pktio_recv(p->data, p->timeout_ms * 4, &pkt, why, sizeof(why));
		if (rc < 0)
			return rc;
		if (pkt.volume != v->vnr)
			return -EPROTO;
		if (pkt.type == WIRE_P_BITMAP_DONE)
			break;
		if (pkt.type != WIRE_P_BITMAP && pkt.type != WIRE_P_COMPRESSED_BITMAP) {
			log_res(LOG_ERR, p->r->name, "protocol error: %s during the bitmap exchange",
				wire_type_name(pkt.type));
			return -EPROTO;
		}
		pthread_mutex_lock(&v->lock);
		rc = bmx_dec_apply(v->bm, &pos,
				   pkt.type == WIRE_P_BITMAP ? BMX_PLAIN : BMX_RLE, pkt.data,
				   pkt.data_len);
		pthread_mutex_unlock(&v->lock);
		if (rc < 0) {
			log_res(LOG_ERR, p->r->name, "protocol error: bad bitmap chunk: %s",
				strerror(-rc));
			return -EPROTO;
		}
		bmx_stats_add(&st, pkt.type == WIRE_P_BITMAP ? BMX_PLAIN : BMX_RLE, pkt.data_len);
	}
	bmx_stats_format(&st, line, sizeof(line));
	log_res(LOG_INFO, p->r->name, "volume %u: receive bitmap stats [Bytes(packets)]: %s",
		v->vnr, line);
	return 0;
}

/* ---------------------------------------------------------------- the handshake */

static bool stopping_cb(void *arg)
{
	struct peer *p = arg;

	return __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE);
}

/* Does the target ask by checksum in this resync (§9.1)? "After a
 * Primary crash": either node's UUIDs carry the crashed-primary flag. */
static bool use_csums(struct peer *p, bool crashed)
{
	if (!p->cs_alg)
		return false;
	if (!(p->agreed.features & WIRE_F_CSUMS)) {
		log_res(LOG_WARNING, p->r->name,
			"csums-alg %s ignored: the peer does not do checksum-based resync; every "
			"marked block is copied",
			digest_name(p->cs_alg));
		return false;
	}
	if (!crashed &&
	    conf_res_bool(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_NET, "csums-after-crash-only")) {
		log_res(LOG_INFO, p->r->name,
			"csums-after-crash-only: no Primary crashed, every marked block is copied");
		return false;
	}
	return true;
}

static int start_resync(struct peer *p, unsigned int vi, bool source, bool full)
{
	struct peer_vol *pv = &p->pv[vi];
	struct volume *v = pv->v;
	bool crashed =
	    (volume_flags(v) & MDF_CRASHED_PRIMARY) || (pv->puuids.flags & WIRE_UF_CRASHED_PRIMARY);
	struct wire_pkt pkt;
	struct gi g;
	int rc;

	if (full) {
		pthread_mutex_lock(&v->lock);
		bitmap_set_all(v->bm);
		pthread_mutex_unlock(&v->lock);
	}
	if (source) {
		rc = send_bitmap(p, v);
		if (rc == 0)
			rc = recv_bitmap(p, v);
	} else {
		rc = recv_bitmap(p, v);
		if (rc == 0)
			rc = send_bitmap(p, v);
	}
	if (rc < 0)
		return rc;
	if (source) {
		if (conf_res_text(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_HANDLERS, "before-resync-source"))
			p->r->d->up->handler_run(p->r, "before-resync-source", (int)v->vnr, NULL, NULL);
		pthread_mutex_lock(&v->lock);
		volume_gi(v, &g);
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = WIRE_P_SYNC_UUID;
		pkt.volume = (uint16_t)v->vnr;
		pkt.u.sync_uuid.uuid = gi_start_sync_source(&g, gi_entropy());
		volume_set_gi(v, &g);
		volume_unlock(v);
		rc = peer_send(p, &pkt);
		pv->rs_total = bitmap_weight(v->bm);
		pv->rs_start_ms = peer_now_ms();
		state_change_repl(v->st, CONN_SYNCSOURCE, "handshake");
		/* DRBD's sanitize_state: a SyncSource is UpToDate. A node that
		 * attached Consistent (a crashed or fenced Primary) and won the
		 * handshake is the source of the data: its disk says so now */
		pthread_mutex_lock(&v->lock);
		if (v->md &&
		    (volume_disk(v) == DISK_CONSISTENT || volume_disk(v) == DISK_OUTDATED)) {
			state_change_disk(v->st, DISK_UPTODATE, "becoming SyncSource");
			volume_set_flags(v, MDF_CONSISTENT | MDF_WAS_UP_TO_DATE, 0);
			volume_sync_sb(v);
		}
		volume_unlock(v);
	} else {
		rc = expect(p, WIRE_P_SYNC_UUID, (uint16_t)v->vnr, &pkt);
		if (rc < 0)
			return rc;
		/* DRBD: a non-zero exit of before-resync-target refuses the resync */
		rc = p->r->d->up->handler_run_wait(p->r, "before-resync-target", (int)v->vnr, stopping_cb, p);
		if (rc != 0) {
			if (rc > 0)
				log_res(LOG_ERR, p->r->name,
					"volume %u: before-resync-target exited with %d: no resync, "
					"disconnecting; fix what it checks, then 'tandemadm connect %s'",
					v->vnr, rc, p->r->name);
			return rc > 0 ? -EACCES : rc;
		}
		if (sbsave_run_save(p, pv) < 0)
			return -EACCES;
		pthread_mutex_lock(&v->lock);
		volume_gi(v, &g);
		gi_sync_target_receive(&g, pkt.u.sync_uuid.uuid,
				       resource_state(p->r).role == ROLE_PRIMARY);
		volume_set_gi(v, &g);
		pv->rs_total = bitmap_weight(v->bm);
		if (pv->rs_total) { /* nothing to copy: the data are already the peer's */
			volume_set_flags(v, 0, MDF_CONSISTENT | MDF_WAS_UP_TO_DATE);
			state_change_disk(v->st, DISK_INCONSISTENT, "resync as SyncTarget");
		}
		volume_sync_sb(v);
		volume_unlock(v);
		pv->rs_pos = 0;
		pv->rs_done = 0;
		pv->rs_start_ms = peer_now_ms();
		pv->rs_csums = use_csums(p, crashed);
		state_change_repl(v->st, CONN_SYNCTARGET, "handshake");
	}
	pv->cs_req = pv->cs_same = 0;
	log_res(LOG_NOTICE, p->r->name, "volume %u: resync as %s: %llu KiB to copy%s%s%s", v->vnr,
		source ? "SyncSource" : "SyncTarget", (unsigned long long)bitmap_weight(v->bm) * 4,
		full ? " (full sync)" : "", pv->rs_csums ? ", checksum-based with " : "",
		pv->rs_csums ? digest_name(p->cs_alg) : "");
	return rc;
}

int sync_handshake(struct peer *p)
{
	struct resource *r = p->r;
	struct uuidcmp_decision *d;
	struct wire_pkt pkt;
	unsigned int i;
	int rc;

	/* P_PROTOCOL both ways before anything else: a node that refuses the
	 * settings closes the connection, and the other must have its
	 * P_PROTOCOL by then to refuse as well (StandAlone on both sides),
	 * not take the close for a network error and retry */
	rc = send_protocol(p);
	if (rc == 0)
		rc = expect(p, WIRE_P_PROTOCOL, WIRE_VOL_NONE, &pkt);
	if (rc == 0)
		rc = check_protocol(p, &pkt.u.protocol);
	if (rc == 0)
		rc = session_alg(p, "data-integrity-alg", integrity_alg(p), &p->di_alg);
	for (i = 0; i < r->n_vols && rc == 0; i++)
		rc = send_volume(p, i);
	for (i = 0; i < r->n_vols && rc == 0; i++) {
		struct peer_vol *pv = &p->pv[i];
		uint16_t vnr = (uint16_t)pv->v->vnr;

		rc = expect(p, WIRE_P_SYNC_PARAM, vnr, &pkt);
		if (rc == 0)
			rc = check_sync_param(p, &pkt.u.sync_param);
		if (rc == 0 && i == 0)
			rc = session_alg(p, "csums-alg", pkt.u.sync_param.csums_alg, &p->cs_alg);
		if (rc == 0)
			rc = expect(p, WIRE_P_SIZES, vnr, &pkt);
		if (rc == 0) {
			pv->psize = pkt.u.sizes.c_size ? pkt.u.sizes.c_size : pkt.u.sizes.d_size;
			if (pv->psize < pv->v->size_sect) {
				log_res(LOG_ERR, r->name,
					"volume %u: the peer's disk (%llu KiB) is smaller than ours "
					"(%llu KiB) and the data uses it; grow the peer's disk or "
					"recreate its metadata",
					vnr, (unsigned long long)pv->psize / 2,
					(unsigned long long)pv->v->size_sect / 2);
				rc = -EACCES;
			}
		}
		if (rc == 0)
			rc = expect(p, WIRE_P_UUIDS, vnr, &pkt);
		if (rc == 0) {
			pv->puuids = pkt.u.uuids;
			rc = expect(p, WIRE_P_STATE, vnr, &pkt);
		}
		if (rc == 0) {
			pv->pstate = pkt.u.state;
			__atomic_store_n(&pv->pisp, pkt.u.state.isp, __ATOMIC_RELEASE);
		}
	}
	if (rc < 0)
		return rc;
	d = malloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (i = 0; i < r->n_vols && rc == 0; i++) {
		struct peer_vol *pv = &p->pv[i];

		rc = decide(p, i, d);
		if (rc < 0)
			break;
		if (d->outcome == UUIDCMP_DROP) {
			rc = -EACCES;
			break;
		}
		if (d->outcome == UUIDCMP_NO_SYNC) {
			uint64_t bits;

			pthread_mutex_lock(&pv->v->lock);
			bits = pv->v->bm ? bitmap_weight(pv->v->bm) : 0;
			pthread_mutex_unlock(&pv->v->lock);
			if (bits)
				log_res(LOG_WARNING, r->name,
					"volume %u: No resync, but %llu bits in bitmap! (same data "
					"generation on both nodes; 'tandemadm resync-oos %s' on the "
					"node whose data is right copies them)",
					pv->v->vnr, (unsigned long long)bits, r->name);
			state_change_repl(pv->v->st, CONN_CONNECTED, "handshake");
			/* the same data on both nodes: Consistent or Outdated data
			 * are UpToDate now (DRBD's implicit adjustment; with
			 * fencing both disks attach Consistent) */
			pthread_mutex_lock(&pv->v->lock);
			if (pv->v->md &&
			    (volume_disk(pv->v) == DISK_CONSISTENT || volume_disk(pv->v) == DISK_OUTDATED) &&
			    pv->pstate.disk >= DISK_OUTDATED) {
				state_change_disk(pv->v->st, DISK_UPTODATE,
						  "the same data generation on both nodes");
				volume_set_flags(pv->v, MDF_CONSISTENT | MDF_WAS_UP_TO_DATE, 0);
				volume_sync_sb(pv->v);
			}
			volume_unlock(pv->v);
			continue;
		}
		rc = start_resync(p, i, d->outcome == UUIDCMP_SYNC_SOURCE, d->full_sync);
	}
	free(d);
	p->discard_my_data = false; /* one-shot */
	return rc;
}

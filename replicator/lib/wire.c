/*
 * wire: the packet table of the replication protocol
 * (doc/wire-protocol.md), the header, type names and the negotiation of
 * two P_HELLO packets.
 *
 * One table row per packet type says where the type may appear (stream,
 * volume scope, feature), how long its payload may be, lists its fields
 * in wire order with the rule each one must meet, and names the check of
 * the rules that span fields. wire-pkt.c decodes and encodes any row.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "nbd-request.h"
#include "state.h"
#include "wire-int.h"
#include "wire.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* The wire numbers of doc/wire-protocol.md §7.8 are state.h's. */
_Static_assert(ROLE_SECONDARY == 2, "wire role numbers");
_Static_assert(DISK_UPTODATE == 8, "wire disk numbers");
_Static_assert(CONN_BEHIND == 23, "wire conn numbers");
_Static_assert(WIRE_MAX_DATA == NBD_REQUEST_MAX_PAYLOAD, "one NBD request per P_DATA");

/* ---------------------------------------------------------------- the table */

/* clang-format off */
#define MEMB(s, m) sizeof(((s *)0)->m), offsetof(s, m)
#define NUM(s, m, lo, hi) {#m, FK_NUM, MEMB(s, m), lo, hi, 0}
#define NUMA(s, m, lo, hi, al) {#m, FK_NUM, MEMB(s, m), lo, hi, al}
#define NUMN(nm, s, m, lo, hi) {nm, FK_NUM, MEMB(s, m), lo, hi, 0}
#define SNUM(s, m, lo, hi) {#m, FK_SNUM, MEMB(s, m), (uint64_t)(lo), (uint64_t)(hi), 0}
#define SET(s, m, set) {#m, FK_SET, MEMB(s, m), set, 0, 0}
#define FLAGS(s, m, mask) {#m, FK_FLAGS, MEMB(s, m), mask, 0, 0}
#define FLAGSN(nm, s, m, mask) {nm, FK_FLAGS, MEMB(s, m), mask, 0, 0}
#define STR(s, m, min) {#m, FK_STR, sizeof(((s *)0)->m) - 1, offsetof(s, m), min, 0, 0}
#define BYTES(s, m) {#m, FK_BYTES, MEMB(s, m), 0, 0, 0}
#define ZERO(n) {"reserved", FK_ZERO, n, 0, 0, 0, 0}
#define DLEN {"digest_len", FK_DLEN, 1, 0, 0, WIRE_MAX_DIGEST, 0}
#define BIT(v) (1ULL << (v))

#define SECTORS (WIRE_MAX_SECTORS)
#define SECT_MAX (UINT32_MAX & ~511u)
#define DP_ALL 0x1fu

static const struct wire_field f_hello[] = {
	NUM(struct wire_hello, proto_min, 1, UINT16_MAX),
	NUM(struct wire_hello, proto_max, 1, UINT16_MAX),
	SET(struct wire_hello, stream, BIT(WIRE_STREAM_DATA) | BIT(WIRE_STREAM_META)),
	FLAGS(struct wire_hello, flags, WIRE_HELLO_AUTH | WIRE_HELLO_DUPLICATE | WIRE_HELLO_AUTH_V2),
	ZERO(2),
	NUM(struct wire_hello, features, 0, UINT64_MAX),
	NUM(struct wire_hello, conn_id, 0, UINT64_MAX),
	STR(struct wire_hello, node, 1),
	STR(struct wire_hello, res, 1),
};

static const struct wire_field f_challenge[] = {
	STR(struct wire_auth_challenge, alg, 1),
	BYTES(struct wire_auth_challenge, challenge),
};

static const struct wire_field f_protocol[] = {
	SET(struct wire_protocol, protocol, BIT(1) | BIT(2) | BIT(3)),
	NUM(struct wire_protocol, after_sb_0pri, 0, WIRE_ASB_DISCARD_REMOTE),
	SET(struct wire_protocol, after_sb_1pri,
	    BIT(WIRE_ASB_DISCONNECT) | BIT(WIRE_ASB_CONSENSUS) | BIT(WIRE_ASB_DISCARD_SECONDARY) |
		    BIT(WIRE_ASB_CALL_HELPER) | BIT(WIRE_ASB_VIOLENTLY)),
	SET(struct wire_protocol, after_sb_2pri,
	    BIT(WIRE_ASB_DISCONNECT) | BIT(WIRE_ASB_CALL_HELPER) | BIT(WIRE_ASB_VIOLENTLY)),
	FLAGS(struct wire_protocol, flags, 0xf),
	STR(struct wire_protocol, integrity_alg, 0),
	BYTES(struct wire_protocol, config_digest),
};

static const struct wire_field f_sync_param[] = {
	NUM(struct wire_sync_param, resync_rate, 1, 4194304),
	NUM(struct wire_sync_param, c_plan_ahead, 0, 300),
	NUM(struct wire_sync_param, c_delay_target, 1, 100),
	NUM(struct wire_sync_param, c_fill_target, 0, 1048576),
	NUM(struct wire_sync_param, c_max_rate, 250, 4194304),
	NUM(struct wire_sync_param, c_min_rate, 0, 4194304),
	STR(struct wire_sync_param, verify_alg, 0),
	STR(struct wire_sync_param, csums_alg, 0),
};

static const struct wire_field f_sizes[] = {
	NUM(struct wire_sizes, d_size, 0, SECTORS),
	NUM(struct wire_sizes, u_size, 0, SECTORS),
	NUM(struct wire_sizes, c_size, 0, SECTORS),
	NUMA(struct wire_sizes, max_req, 512, WIRE_MAX_DATA, 512),
	FLAGS(struct wire_sizes, flags, WIRE_SF_RESIZE_FORCED | WIRE_SF_RESIZE_NO_RESYNC),
};

static const struct wire_field f_uuids[] = {
	NUMN("current", struct wire_uuids, uuid[0], 0, UINT64_MAX),
	NUMN("bitmap", struct wire_uuids, uuid[1], 0, UINT64_MAX),
	NUMN("history0", struct wire_uuids, uuid[2], 0, UINT64_MAX),
	NUMN("history1", struct wire_uuids, uuid[3], 0, UINT64_MAX),
	NUM(struct wire_uuids, weight, 0, WIRE_MAX_BM_BITS),
	FLAGS(struct wire_uuids, flags, 0xf),
};

#define STATE_FIELDS(s, pre, lo)                                                             \
	NUMN(pre "role", s, lo role, 0, ROLE_SECONDARY),                                     \
	NUMN(pre "peer", s, lo peer, 0, ROLE_SECONDARY),                                     \
	NUMN(pre "disk", s, lo disk, 0, DISK_UPTODATE),                                      \
	NUMN(pre "pdsk", s, lo pdsk, 0, DISK_UPTODATE),                                      \
	NUMN(pre "conn", s, lo conn, 0, CONN_BEHIND),                                        \
	FLAGSN(pre "susp", s, lo susp, 7), FLAGSN(pre "isp", s, lo isp, 7), ZERO(1)

static const struct wire_field f_state[] = {STATE_FIELDS(struct wire_state, "", )};

/* Ranges of the value depend on the mask: checked by check_state_chg(). */
#define CHG_FIELDS(pre, lo)                                                                  \
	NUMN(pre "role", struct wire_state_chg, lo.role, 0, 255),                            \
	NUMN(pre "peer", struct wire_state_chg, lo.peer, 0, 255),                            \
	NUMN(pre "disk", struct wire_state_chg, lo.disk, 0, 255),                            \
	NUMN(pre "pdsk", struct wire_state_chg, lo.pdsk, 0, 255),                            \
	NUMN(pre "conn", struct wire_state_chg, lo.conn, 0, 255),                            \
	FLAGSN(pre "susp", struct wire_state_chg, lo.susp, 7),                               \
	FLAGSN(pre "isp", struct wire_state_chg, lo.isp, 7), ZERO(1)

static const struct wire_field f_state_chg[] = {CHG_FIELDS("mask.", mask),
						CHG_FIELDS("value.", val)};

static const struct wire_field f_state_reply[] = {
	SNUM(struct wire_state_reply, result, -32, 1),
};

static const struct wire_field f_sync_uuid[] = {
	NUM(struct wire_sync_uuid, uuid, 0, UINT64_MAX),
};

static const struct wire_field f_bitmap_done[] = {
	NUM(struct wire_bitmap_done, bits, 0, WIRE_MAX_BM_BITS),
	NUM(struct wire_bitmap_done, weight, 0, WIRE_MAX_BM_BITS),
};

static const struct wire_field f_data[] = {
	NUM(struct wire_data, sector, 0, SECTORS),
	NUM(struct wire_data, id, 0, UINT64_MAX),
	NUM(struct wire_data, seq, 0, UINT32_MAX),
	FLAGS(struct wire_data, dp_flags, DP_ALL),
	DLEN,
	ZERO(3),
};

/* Replies: no sequence number, no flags. */
static const struct wire_field f_reply[] = {
	NUM(struct wire_data, sector, 0, SECTORS),
	NUM(struct wire_data, id, 0, UINT64_MAX),
	NUM(struct wire_data, seq, 0, 0),
	FLAGS(struct wire_data, dp_flags, 0),
	DLEN,
	ZERO(3),
};

static const struct wire_field f_zeroes[] = {
	NUM(struct wire_zeroes, sector, 0, SECTORS),
	NUM(struct wire_zeroes, id, 0, UINT64_MAX),
	NUM(struct wire_zeroes, seq, 0, UINT32_MAX),
	FLAGS(struct wire_zeroes, dp_flags, DP_ALL),
	NUMA(struct wire_zeroes, size, 512, SECT_MAX, 512),
	ZERO(4),
};

static const struct wire_field f_barrier[] = {
	NUM(struct wire_barrier, barrier, 0, UINT32_MAX),
	FLAGS(struct wire_barrier, flags, WIRE_BF_FLUSH),
};

static const struct wire_field f_barrier_ack[] = {
	NUM(struct wire_barrier, barrier, 0, UINT32_MAX),
	NUM(struct wire_barrier, set_size, 0, UINT32_MAX),
};

static const struct wire_field f_oos[] = {
	NUM(struct wire_oos, sector, 0, SECTORS),
	NUMA(struct wire_oos, size, 512, SECT_MAX, 512),
	ZERO(4),
};

static const struct wire_field f_req[] = {
	NUM(struct wire_req, sector, 0, SECTORS),
	NUM(struct wire_req, id, 0, UINT64_MAX),
	NUMA(struct wire_req, size, 512, WIRE_MAX_DATA, 512),
	ZERO(4),
};

static const struct wire_field f_ack[] = {
	NUM(struct wire_ack, sector, 0, SECTORS),
	NUM(struct wire_ack, id, 0, UINT64_MAX),
	NUMA(struct wire_ack, size, 512, SECT_MAX, 512),
	NUM(struct wire_ack, seq, 0, UINT32_MAX),
};

static const struct wire_field f_ov_result[] = {
	NUM(struct wire_ack, sector, 0, SECTORS),
	NUM(struct wire_ack, id, 0, UINT64_MAX),
	NUMA(struct wire_ack, size, 512, SECT_MAX, 512),
	NUMN("result", struct wire_ack, seq, WIRE_OV_IN_SYNC, WIRE_OV_OUT_OF_SYNC),
};

/* The rules that span fields, one per layout that has any. */
#define CHECK(fn) static int fn(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
CHECK(check_hello);
CHECK(check_state_chg);
CHECK(check_state_reply);
CHECK(check_bm_plain);
CHECK(check_bm_rle);
CHECK(check_bitmap_done);
CHECK(check_data);
CHECK(check_zeroes);
CHECK(check_oos);
CHECK(check_req);
CHECK(check_ack);

#define D WIRE_STREAM_DATA
#define M WIRE_STREAM_META
#define DMAX (WIRE_DATA_FIXED + WIRE_MAX_DIGEST + WIRE_MAX_DATA)
#define ROW(t, st, sc, fx, mn, mx, feat, fl, tl, ck)                                         \
	[WIRE_P_##t] = {WIRE_P_##t, "P_" #t, st, SCOPE_##sc, fx, mn, mx, feat,              \
			fl, N_ELEMS(fl), tl, ck}
/* A type without fields: its payload is all tail. */
#define ROW0(t, st, sc, mn, mx, feat, tl, ck)                                                \
	[WIRE_P_##t] = {WIRE_P_##t, "P_" #t, st, SCOPE_##sc, 0, mn, mx, feat, NULL, 0, tl, ck}

/* doc/wire-protocol.md §7.1 */
static const struct wire_row rows[WIRE_P_COUNT] = {
	ROW(HELLO, 0, CONN, 280, 280, 280, 0, f_hello, TAIL_NONE, check_hello),
	ROW(AUTH_CHALLENGE, 0, CONN, 128, 128, 128, 0, f_challenge, TAIL_NONE, NULL),
	ROW0(AUTH_RESPONSE, 0, CONN, 1, 64, 0, TAIL_DIGEST, NULL),
	ROW(PROTOCOL, D, CONN, 104, 104, 104, 0, f_protocol, TAIL_NONE, NULL),
	ROW(SYNC_PARAM, D, VOL, 152, 152, 152, 0, f_sync_param, TAIL_NONE, NULL),
	ROW(SIZES, D, VOL, 32, 32, 32, 0, f_sizes, TAIL_NONE, NULL),
	ROW(UUIDS, D, VOL, 48, 48, 48, 0, f_uuids, TAIL_NONE, NULL),
	ROW(STATE, D, VOL, 8, 8, 8, 0, f_state, TAIL_NONE, NULL),
	ROW(STATE_CHG_REQ, D, ANY, 16, 16, 16, 0, f_state_chg, TAIL_NONE, check_state_chg),
	ROW(STATE_CHG_REPLY, M, ANY, 4, 4, 4, 0, f_state_reply, TAIL_NONE, check_state_reply),
	ROW(SYNC_UUID, D, VOL, 8, 8, 8, 0, f_sync_uuid, TAIL_NONE, NULL),
	ROW0(BITMAP, D, VOL, 16, WIRE_BM_MAX_CHUNK, 0, TAIL_CHUNK, check_bm_plain),
	ROW0(COMPRESSED_BITMAP, D, VOL, 2, WIRE_BM_MAX_CHUNK, WIRE_F_RLE_BITMAP, TAIL_CHUNK,
	     check_bm_rle),
	ROW(BITMAP_DONE, D, VOL, 16, 16, 16, 0, f_bitmap_done, TAIL_NONE, check_bitmap_done),
	ROW(DATA, D, VOL, 28, 540, DMAX, 0, f_data, TAIL_DATA, check_data),
	ROW(TRIM, D, VOL, 32, 32, 32, WIRE_F_TRIM, f_zeroes, TAIL_NONE, check_zeroes),
	ROW(WRITE_ZEROES, D, VOL, 32, 32, 32, WIRE_F_WRITE_ZEROES, f_zeroes, TAIL_NONE,
	    check_zeroes),
	ROW(BARRIER, D, CONN, 8, 8, 8, 0, f_barrier, TAIL_NONE, NULL),
	ROW(OUT_OF_SYNC, D, VOL, 16, 16, 16, 0, f_oos, TAIL_NONE, check_oos),
	ROW(DATA_REQUEST, D, VOL, 24, 24, 24, WIRE_F_REMOTE_READ, f_req, TAIL_NONE, check_req),
	ROW(DATA_REPLY, D, VOL, 28, 540, DMAX, WIRE_F_REMOTE_READ, f_reply, TAIL_DATA,
	    check_data),
	ROW(RS_DATA_REQUEST, D, VOL, 24, 24, 24, 0, f_req, TAIL_NONE, check_req),
	ROW(RS_DATA_REPLY, D, VOL, 28, 540, DMAX, 0, f_reply, TAIL_DATA, check_data),
	ROW(CSUM_RS_REQUEST, D, VOL, 24, 25, 88, WIRE_F_CSUMS, f_req, TAIL_DIGEST, check_req),
	ROW(OV_REQUEST, D, VOL, 24, 24, 24, WIRE_F_VERIFY, f_req, TAIL_NONE, check_req),
	ROW(OV_REPLY, D, VOL, 24, 25, 88, WIRE_F_VERIFY, f_req, TAIL_DIGEST, check_req),
	ROW0(PING, M, CONN, 0, 0, 0, TAIL_NONE, NULL),
	ROW0(PING_ACK, M, CONN, 0, 0, 0, TAIL_NONE, NULL),
	ROW(RECV_ACK, M, VOL, 24, 24, 24, 0, f_ack, TAIL_NONE, check_ack),
	ROW(WRITE_ACK, M, VOL, 24, 24, 24, 0, f_ack, TAIL_NONE, check_ack),
	ROW(RS_WRITE_ACK, M, VOL, 24, 24, 24, 0, f_ack, TAIL_NONE, check_ack),
	ROW(NEG_ACK, M, VOL, 24, 24, 24, 0, f_ack, TAIL_NONE, check_ack),
	ROW(NEG_DREPLY, M, VOL, 24, 24, 24, WIRE_F_REMOTE_READ, f_ack, TAIL_NONE, check_ack),
	ROW(NEG_RS_DREPLY, M, VOL, 24, 24, 24, 0, f_ack, TAIL_NONE, check_ack),
	ROW(RS_IS_IN_SYNC, M, VOL, 24, 24, 24, WIRE_F_CSUMS, f_ack, TAIL_NONE, check_ack),
	ROW(RS_CANCEL, M, VOL, 24, 24, 24, WIRE_F_AHEAD, f_ack, TAIL_NONE, check_ack),
	ROW(BARRIER_ACK, M, CONN, 8, 8, 8, 0, f_barrier_ack, TAIL_NONE, NULL),
	ROW(OV_RESULT, M, VOL, 24, 24, 24, WIRE_F_VERIFY, f_ov_result, TAIL_NONE, check_ack),
	ROW(SUPERSEDED, M, VOL, 24, 24, 24, WIRE_F_TWO_PRIMARIES, f_ack, TAIL_NONE, check_ack),
	ROW(RETRY_WRITE, M, VOL, 24, 24, 24, WIRE_F_TWO_PRIMARIES, f_ack, TAIL_NONE, check_ack),
};

static const char *const feature_names[] = {
	"TRIM", "WRITE_ZEROES", "RLE_BITMAP", "CSUMS", "VERIFY", "REMOTE_READ",
	"TWO_PRIMARIES", "AHEAD",
};
/* clang-format on */

/* ---------------------------------------------------------------- helpers */

int wire_fail(struct why *w, int err, const char *fmt, ...)
{
	va_list ap;

	if (w && w->s && w->n) {
		va_start(ap, fmt);
		vsnprintf(w->s, w->n, fmt, ap);
		va_end(ap);
	}
	return err;
}

const struct wire_row *wire_row_of(uint16_t type)
{
	if (type == 0 || type >= WIRE_P_COUNT)
		return NULL;
	return &rows[type];
}

const char *wire_type_name(uint16_t type)
{
	const struct wire_row *r = wire_row_of(type);

	return r ? r->name : "P_UNKNOWN";
}

int wire_type_stream(uint16_t type)
{
	const struct wire_row *r = wire_row_of(type);

	return r ? r->stream : 0;
}

const char *wire_feature_name(uint64_t f)
{
	unsigned int i;

	for (i = 0; i < N_ELEMS(feature_names); i++)
		if (f == BIT(i))
			return feature_names[i];
	return "?";
}

const char *wire_stream_name(int s)
{
	return s == WIRE_STREAM_DATA ? "data" : s == WIRE_STREAM_META ? "meta" : "setup";
}

/* ---------------------------------------------------------------- cross-field checks */

static int check_range(const struct wire_row *r, uint64_t sector, uint64_t size, struct why *w)
{
	if (sector > WIRE_MAX_SECTORS - size / 512)
		return wire_fail(w, -EBADMSG,
				 "%s: sector %" PRIu64 " + %" PRIu64
				 " bytes is beyond the largest device",
				 r->name, sector, size);
	return 0;
}

static int check_dp(const struct wire_row *r, uint32_t dp, struct why *w)
{
	if ((dp & WIRE_DP_SEND_RECV_ACK) && (dp & WIRE_DP_SEND_WRITE_ACK))
		return wire_fail(w, -EBADMSG, "%s: dp_flags ask for both a receive and a write ack",
				 r->name);
	return 0;
}

static int check_hello(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
{
	const struct wire_hello *h = &pkt->u.hello;

	if (h->proto_max < h->proto_min)
		return wire_fail(w, -EBADMSG, "%s: proto_max %u is below proto_min %u", r->name,
				 h->proto_max, h->proto_min);
	return 0;
}

static int check_state_chg(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
{
	const struct wire_state *m = &pkt->u.state_chg.mask, *v = &pkt->u.state_chg.val;
	const struct {
		const char *name;
		uint8_t mask, val, max;
	} e[] = {
	    {"role", m->role, v->role, ROLE_SECONDARY}, {"peer", m->peer, v->peer, ROLE_SECONDARY},
	    {"disk", m->disk, v->disk, DISK_UPTODATE},	{"pdsk", m->pdsk, v->pdsk, DISK_UPTODATE},
	    {"conn", m->conn, v->conn, CONN_BEHIND},
	};
	bool any = m->susp || m->isp;
	size_t i;

	for (i = 0; i < N_ELEMS(e); i++) {
		if (e[i].mask != 0 && e[i].mask != 0xff)
			return wire_fail(w, -EBADMSG, "%s: mask.%s 0x%02x is neither 0x00 nor 0xff",
					 r->name, e[i].name, e[i].mask);
		if (e[i].val > (e[i].mask ? e[i].max : 0))
			return wire_fail(w, -EBADMSG, "%s: value.%s %u %s", r->name, e[i].name,
					 e[i].val, e[i].mask ? "out of range" : "outside the mask");
		any = any || e[i].mask;
	}
	if ((v->susp & ~m->susp) || (v->isp & ~m->isp))
		return wire_fail(w, -EBADMSG, "%s: value flags outside the mask", r->name);
	if (!any)
		return wire_fail(w, -EBADMSG, "%s: the mask is empty", r->name);
	return 0;
}

/* 1 (SS_SUCCESS) or a refusal; 0 is not a result. */
static int check_state_reply(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
{
	if (pkt->u.state_reply.result == 0)
		return wire_fail(w, -EBADMSG, "%s: result 0 is neither success nor a refusal",
				 r->name);
	return 0;
}

/* The chunks are bmx.h's, which validates them against the bitmap. */
static int check_bm_plain(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
{
	if (pkt->data_len % 8)
		return wire_fail(w, -EBADMSG, "%s: %u bytes, not a word offset and whole words",
				 r->name, pkt->data_len);
	return 0;
}

static int check_bm_rle(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
{
	if (pkt->data[0] & ~1u)
		return wire_fail(w, -EBADMSG, "%s: flags 0x%02x have unknown bits", r->name,
				 pkt->data[0]);
	return 0;
}

static int check_bitmap_done(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
{
	if (pkt->u.bitmap_done.weight > pkt->u.bitmap_done.bits)
		return wire_fail(w, -EBADMSG, "%s: weight %" PRIu64 " above bits %" PRIu64, r->name,
				 pkt->u.bitmap_done.weight, pkt->u.bitmap_done.bits);
	return 0;
}

static int check_data(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
{
	int rc = check_dp(r, pkt->u.data.dp_flags, w);

	return rc ? rc : check_range(r, pkt->u.data.sector, pkt->data_len, w);
}

static int check_zeroes(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
{
	int rc = check_dp(r, pkt->u.zeroes.dp_flags, w);

	return rc ? rc : check_range(r, pkt->u.zeroes.sector, pkt->u.zeroes.size, w);
}

static int check_oos(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
{
	return check_range(r, pkt->u.oos.sector, pkt->u.oos.size, w);
}

static int check_req(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
{
	return check_range(r, pkt->u.req.sector, pkt->u.req.size, w);
}

static int check_ack(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w)
{
	return check_range(r, pkt->u.ack.sector, pkt->u.ack.size, w);
}

/* ---------------------------------------------------------------- header */

int wire_hdr_decode(const void *buf, struct wire_hdr *hdr, char *reason, size_t n)
{
	struct why w = {reason, n};
	const uint8_t *p = buf;
	uint32_t magic = wire_get32(p);

	if (magic != WIRE_MAGIC)
		return wire_fail(&w, -EPROTO, "bad magic 0x%08x (expected 0x%08x)", magic,
				 WIRE_MAGIC);
	hdr->type = wire_get16(p + 4);
	hdr->volume = wire_get16(p + 6);
	hdr->len = wire_get32(p + 8);
	hdr->flags = wire_get32(p + 12);
	if (hdr->flags & ~WIRE_HF_ALL)
		return wire_fail(&w, -EPROTO, "%s: header flags 0x%08x have unknown bits",
				 wire_type_name(hdr->type), hdr->flags);
	if (hdr->len > WIRE_MAX_PAYLOAD)
		return wire_fail(&w, -E2BIG, "%s: payload %u bytes, above the maximum %u",
				 wire_type_name(hdr->type), hdr->len, WIRE_MAX_PAYLOAD);
	return 0;
}

void wire_hdr_encode(const struct wire_hdr *hdr, void *buf)
{
	uint8_t *p = buf;

	wire_put32(p, WIRE_MAGIC);
	wire_put16(p + 4, hdr->type);
	wire_put16(p + 6, hdr->volume);
	wire_put32(p + 8, hdr->len);
	wire_put32(p + 12, hdr->flags);
}

/* ---------------------------------------------------------------- negotiation */

int wire_negotiate(const struct wire_hello *own, const struct wire_hello *peer,
		   struct wire_agreed *agreed, char *reason, size_t n)
{
	struct why w = {reason, n};
	uint16_t lo = own->proto_min > peer->proto_min ? own->proto_min : peer->proto_min;
	uint16_t hi = own->proto_max < peer->proto_max ? own->proto_max : peer->proto_max;

	memset(agreed, 0, sizeof(*agreed));
	if (own->stream != peer->stream)
		return wire_fail(&w, -EPROTO,
				 "peer's P_HELLO is for the %s stream, this is the %s "
				 "stream",
				 wire_stream_name(peer->stream), wire_stream_name(own->stream));
	if (!peer->conn_id || own->conn_id != peer->conn_id)
		return wire_fail(&w, -EPROTO,
				 "peer's connection id 0x%016" PRIx64 " is not ours "
				 "(0x%016" PRIx64 ")",
				 peer->conn_id, own->conn_id);
	if (strcmp(own->res, peer->res) != 0)
		return wire_fail(&w, -EPROTO, "peer connects for resource %s, this is %s",
				 peer->res, own->res);
	if (strcmp(own->node, peer->node) == 0)
		return wire_fail(&w, -EPROTO, "peer has our node name %s", peer->node);
	if (lo > hi)
		return wire_fail(&w, -EPROTONOSUPPORT,
				 "no common protocol version: we speak %u..%u, "
				 "peer speaks %u..%u",
				 own->proto_min, own->proto_max, peer->proto_min, peer->proto_max);
	if ((own->flags ^ peer->flags) & WIRE_HELLO_AUTH)
		return wire_fail(&w, -EACCES, "%s",
				 (own->flags & WIRE_HELLO_AUTH)
				     ? "we require authentication (cram-hmac-alg), peer has "
				       "none configured"
				     : "peer requires authentication (cram-hmac-alg), we have "
				       "none configured");
	if ((own->flags & WIRE_HELLO_AUTH) && ((own->flags ^ peer->flags) & WIRE_HELLO_AUTH_V2))
		return wire_fail(&w, -EACCES,
				 "peer authenticates with cram-hmac-version %d, we with %d; "
				 "configure the same on both nodes",
				 peer->flags & WIRE_HELLO_AUTH_V2 ? 2 : 1,
				 own->flags & WIRE_HELLO_AUTH_V2 ? 2 : 1);
	if (peer->flags & WIRE_HELLO_DUPLICATE)
		return wire_fail(&w, -EALREADY,
				 "peer keeps its own simultaneous connection attempt");
	agreed->proto = hi;
	agreed->features = own->features & peer->features;
	agreed->auth = own->flags & WIRE_HELLO_AUTH;
	agreed->auth_v2 = agreed->auth && (own->flags & WIRE_HELLO_AUTH_V2);
	agreed->conn_id = own->conn_id;
	return 0;
}

/* ---------------------------------------------------------------- self-check */

/* Payload bytes after the fields; TAIL_CHUNK's bounds are the row's. */
static uint32_t tail_min(uint8_t tail)
{
	return tail == TAIL_DATA ? 512 : tail == TAIL_NONE ? 0 : 1;
}

static uint32_t tail_max(uint8_t tail)
{
	switch (tail) {
	case TAIL_DATA:
		return WIRE_MAX_DIGEST + WIRE_MAX_DATA;
	case TAIL_DIGEST:
		return WIRE_MAX_DIGEST;
	case TAIL_CHUNK:
		return WIRE_BM_MAX_CHUNK;
	default:
		return 0;
	}
}

int wire_req_check(const struct wire_req *q, uint64_t size_sect, uint32_t max)
{
	if (!q->size || q->size > max || q->size % 512)
		return -EPROTO;
	/* no sum that could wrap: a sector near 2^64 is refused too */
	if (q->sector > size_sect || q->size / 512 > size_sect - q->sector)
		return -EPROTO;
	return 0;
}

int wire_table_check(char *reason, size_t n)
{
	struct why w = {reason, n};
	const struct wire_field *f;
	size_t j;
	uint16_t t;

	for (t = 1; t < WIRE_P_COUNT; t++) {
		const struct wire_row *r = &rows[t];
		uint32_t sum = 0;

		if (r->type != t || !r->name)
			return wire_fail(&w, -EINVAL, "row %u is missing", t);
		for (j = 0; j < r->n_fields; j++) {
			f = &r->fields[j];
			if (f->kind <= FK_FLAGS && f->width != 1 && f->width != 2 &&
			    f->width != 4 && f->width != 8)
				return wire_fail(&w, -EINVAL, "%s: %s has width %u", r->name,
						 f->name, f->width);
			if (f->kind != FK_ZERO && f->kind != FK_DLEN &&
			    f->off + f->width > sizeof(((struct wire_pkt *)0)->u))
				return wire_fail(&w, -EINVAL, "%s: %s is outside the union",
						 r->name, f->name);
			sum += f->width;
		}
		if (sum != r->fixed)
			return wire_fail(&w, -EINVAL, "%s: fields are %u bytes, fixed says %u",
					 r->name, sum, r->fixed);
		if (r->tail == TAIL_CHUNK ? r->min < r->fixed + 1
					  : r->min != r->fixed + tail_min(r->tail))
			return wire_fail(&w, -EINVAL, "%s: minimum %u does not fit its tail",
					 r->name, r->min);
		if (r->max != r->fixed + tail_max(r->tail))
			return wire_fail(&w, -EINVAL, "%s: maximum %u does not fit its tail",
					 r->name, r->max);
		if (r->max > WIRE_MAX_PAYLOAD)
			return wire_fail(&w, -EINVAL, "%s: maximum above WIRE_MAX_PAYLOAD",
					 r->name);
	}
	return 0;
}

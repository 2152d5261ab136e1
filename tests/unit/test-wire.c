/*
 * Unit tests for wire: the packet table against doc/wire-protocol.md §7.1,
 * a round trip of one sample packet per type (decoded from an exactly
 * sized heap copy, so that ASan sees any read past the payload), golden
 * bytes of a few layouts, every kind of field rule broken once, header
 * limits, stream/feature/scope checks, encoder errors, the version
 * and feature negotiation table, and the packets of checksum-based resync
 * and data-integrity-alg with real digests (§7.13, §7.17, §9.1).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "digest.h"
#include "wire.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))
#define NONE WIRE_VOL_NONE
#define DMAX (28u + 64u + WIRE_MAX_DATA)

static uint8_t data4k[4096];
static uint8_t dig64[64];
static const uint8_t plain_chunk[24] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0x0f, 0, 0,
					0, 0, 0, 0x80, 1, 0, 0, 0, 0, 0, 0, 0};
static const uint8_t rle_chunk[4] = {0x01, 0x80, 0x01, 0x05};

/* One packet per type; len: its payload; min, max: doc §7.1. */
struct sample {
	struct wire_pkt pkt;
	uint32_t len, min, max;
	int stream;
};

#define ACK(t, v, seq) \
	{{.type = t, .volume = v, .u.ack = {0x123456789aULL, 0xfeedface00000001ULL, 8192, seq}}, \
	 24, 24, 24, WIRE_STREAM_META}

static const struct sample samples[] = {
	{{.type = WIRE_P_HELLO, .volume = NONE,
	  .u.hello = {1, 3, WIRE_STREAM_META, WIRE_HELLO_AUTH, 0x8000000000000081ULL,
		      0x0123456789abcdefULL, "alpha", "r0"}},
	 280, 280, 280, 0},
	{{.type = WIRE_P_AUTH_CHALLENGE, .volume = NONE,
	  .u.challenge = {"sha256", {1, 2, 3, 4, 5, 6, 7, 8, [63] = 0xff}}},
	 128, 128, 128, 0},
	{{.type = WIRE_P_AUTH_RESPONSE, .volume = NONE, .digest = dig64, .digest_len = 32},
	 32, 1, 64, 0},
	{{.type = WIRE_P_PROTOCOL, .volume = NONE,
	  .u.protocol = {WIRE_PROTO_C, WIRE_ASB_DISCARD_LEAST_CHG, WIRE_ASB_CONSENSUS,
			 WIRE_ASB_CALL_HELPER, WIRE_PF_TWO_PRIMARIES | WIRE_PF_ALWAYS_ASBP,
			 "crc32c", {0xaa, 0xbb, [31] = 0xcc}}},
	 104, 104, 104, WIRE_STREAM_DATA},
	{{.type = WIRE_P_SYNC_PARAM, .volume = 0,
	  .u.sync_param = {250, 20, 10, 100, 102400, 250, "sha1", "md5"}},
	 152, 152, 152, WIRE_STREAM_DATA},
	{{.type = WIRE_P_SIZES, .volume = 1,
	  .u.sizes = {2097152, 0, 2097144, 1u << 20, WIRE_SF_RESIZE_FORCED}},
	 32, 32, 32, WIRE_STREAM_DATA},
	{{.type = WIRE_P_UUIDS, .volume = 0,
	  .u.uuids = {{0x1122334455667789ULL, 0x4, 0, 0xfffffffffffffffeULL}, 42,
		      WIRE_UF_CRASHED_PRIMARY | WIRE_UF_SKIP_INITIAL_SYNC}},
	 48, 48, 48, WIRE_STREAM_DATA},
	{{.type = WIRE_P_STATE, .volume = 0,
	  .u.state = {1, 2, 8, 6, 23, WIRE_SUSP_FEN, WIRE_ISP_USER | WIRE_ISP_AFTR}},
	 8, 8, 8, WIRE_STREAM_DATA},
	{{.type = WIRE_P_STATE_CHG_REQ, .volume = NONE,
	  .u.state_chg = {.mask = {.role = 0xff, .conn = 0xff, .susp = 1},
			  .val = {.role = 1, .conn = 18, .susp = 1}}},
	 16, 16, 16, WIRE_STREAM_DATA},
	{{.type = WIRE_P_STATE_CHG_REPLY, .volume = 2, .u.state_reply = {-12}},
	 4, 4, 4, WIRE_STREAM_META},
	{{.type = WIRE_P_SYNC_UUID, .volume = 0, .u.sync_uuid = {0xdeadbeef00010000ULL}},
	 8, 8, 8, WIRE_STREAM_DATA},
	{{.type = WIRE_P_BITMAP, .volume = 0, .data = plain_chunk, .data_len = 24},
	 24, 16, 32776, WIRE_STREAM_DATA},
	{{.type = WIRE_P_COMPRESSED_BITMAP, .volume = 0, .data = rle_chunk, .data_len = 4},
	 4, 2, 32776, WIRE_STREAM_DATA},
	{{.type = WIRE_P_BITMAP_DONE, .volume = 0, .u.bitmap_done = {1000, 3}},
	 16, 16, 16, WIRE_STREAM_DATA},
	{{.type = WIRE_P_DATA, .volume = 0, .digest = dig64, .digest_len = 32, .data = data4k,
	  .data_len = 4096,
	  .u.data = {2048, 77, 5, WIRE_DP_FUA | WIRE_DP_FLUSH | WIRE_DP_SEND_WRITE_ACK}},
	 28 + 32 + 4096, 540, DMAX, WIRE_STREAM_DATA},
	{{.type = WIRE_P_TRIM, .volume = 3, .u.zeroes = {8, 9, 6, 0, 1u << 20}},
	 32, 32, 32, WIRE_STREAM_DATA},
	{{.type = WIRE_P_WRITE_ZEROES, .volume = 3,
	  .u.zeroes = {16, 10, 7, WIRE_DP_SEND_RECV_ACK, 0xfffffe00u}},
	 32, 32, 32, WIRE_STREAM_DATA},
	{{.type = WIRE_P_BARRIER, .volume = NONE, .u.barrier = {17, 0, WIRE_BF_FLUSH}}, 8, 8, 8, WIRE_STREAM_DATA},
	{{.type = WIRE_P_OUT_OF_SYNC, .volume = 0, .u.oos = {100, 4096}},
	 16, 16, 16, WIRE_STREAM_DATA},
	{{.type = WIRE_P_DATA_REQUEST, .volume = 0, .u.req = {64, 1, 4096}},
	 24, 24, 24, WIRE_STREAM_DATA},
	{{.type = WIRE_P_DATA_REPLY, .volume = 0, .data = data4k, .data_len = 512,
	  .u.data = {64, 1, 0, 0}},
	 28 + 512, 540, DMAX, WIRE_STREAM_DATA},
	{{.type = WIRE_P_RS_DATA_REQUEST, .volume = 0, .u.req = {72, 2, WIRE_MAX_DATA}},
	 24, 24, 24, WIRE_STREAM_DATA},
	{{.type = WIRE_P_RS_DATA_REPLY, .volume = 0, .digest = dig64, .digest_len = 20,
	  .data = data4k, .data_len = 4096, .u.data = {72, 2, 0, 0}},
	 28 + 20 + 4096, 540, DMAX, WIRE_STREAM_DATA},
	{{.type = WIRE_P_CSUM_RS_REQUEST, .volume = 0, .digest = dig64, .digest_len = 20,
	  .u.req = {80, 3, 4096}},
	 44, 25, 88, WIRE_STREAM_DATA},
	{{.type = WIRE_P_OV_REQUEST, .volume = 0, .u.req = {88, 4, 4096}},
	 24, 24, 24, WIRE_STREAM_DATA},
	{{.type = WIRE_P_OV_REPLY, .volume = 0, .digest = dig64, .digest_len = 64,
	  .u.req = {88, 4, 4096}},
	 88, 25, 88, WIRE_STREAM_DATA},
	{{.type = WIRE_P_PING, .volume = NONE}, 0, 0, 0, WIRE_STREAM_META},
	{{.type = WIRE_P_PING_ACK, .volume = NONE}, 0, 0, 0, WIRE_STREAM_META},
	ACK(WIRE_P_RECV_ACK, 0, 5),
	ACK(WIRE_P_WRITE_ACK, 1, 6),
	ACK(WIRE_P_RS_WRITE_ACK, 0, 0),
	ACK(WIRE_P_NEG_ACK, 0, 7),
	ACK(WIRE_P_NEG_DREPLY, 0, 0),
	ACK(WIRE_P_NEG_RS_DREPLY, 0, 0),
	ACK(WIRE_P_RS_IS_IN_SYNC, 0, 0),
	ACK(WIRE_P_RS_CANCEL, 0, 0),
	{{.type = WIRE_P_BARRIER_ACK, .volume = NONE, .u.barrier = {17, 123}},
	 8, 8, 8, WIRE_STREAM_META},
	ACK(WIRE_P_OV_RESULT, 0, WIRE_OV_OUT_OF_SYNC),
	ACK(WIRE_P_SUPERSEDED, 0, 8),
	ACK(WIRE_P_RETRY_WRITE, 0, 9),
};

static const struct sample *sample_of(uint16_t type)
{
	size_t i;

	for (i = 0; i < N_ELEMS(samples); i++)
		if (samples[i].pkt.type == type)
			return &samples[i];
	fail_msg("no sample for type %u", type);
	return NULL;
}

static int group_setup(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(data4k); i++)
		data4k[i] = (uint8_t)(i * 7 + 1);
	for (i = 0; i < sizeof(dig64); i++)
		dig64[i] = (uint8_t)(0xa0 + i);
	return 0;
}

/* Encode s into a fresh buffer of exactly its size. */
static uint8_t *encode_sample(const struct wire_pkt *pkt, uint32_t len)
{
	uint8_t *buf = malloc(WIRE_HDR_SIZE + len);

	assert_non_null(buf);
	assert_int_equal(wire_pkt_encode(pkt, buf, WIRE_HDR_SIZE + len), WIRE_HDR_SIZE + len);
	return buf;
}

/* Header and payload of buf decoded from an exact heap copy of the payload. */
static int decode_copy(const uint8_t *buf, size_t len, struct wire_pkt *pkt, uint8_t **copy,
		       char *why)
{
	struct wire_hdr hdr;
	int rc;

	rc = wire_hdr_decode(buf, &hdr, why, WIRE_REASON_MAX);
	if (rc)
		return rc;
	*copy = malloc(len ? len : 1);
	assert_non_null(*copy);
	memcpy(*copy, buf + WIRE_HDR_SIZE, len);
	hdr.len = (uint32_t)len;
	return wire_pkt_decode(&hdr, *copy, len, pkt, why, WIRE_REASON_MAX);
}

static void assert_same_pkt(const struct wire_pkt *a, const struct wire_pkt *b)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->volume, b->volume);
	assert_int_equal(a->hflags, b->hflags);
	assert_int_equal(a->digest_len, b->digest_len);
	assert_int_equal(a->data_len, b->data_len);
	if (a->digest_len)
		assert_memory_equal(a->digest, b->digest, a->digest_len);
	if (a->data_len)
		assert_memory_equal(a->data, b->data, a->data_len);
	assert_memory_equal(&a->u, &b->u, sizeof(a->u));
}

/* ---------------------------------------------------------------- tests */

/* Block requests from the peer: whole sectors inside the device (2048
 * sectors), at most 1 MiB. */
static void test_req_check(void **state)
{
	static const struct {
		uint64_t sector;
		uint32_t size;
		int rc;
	} rows[] = {
		{0, 4096, 0},
		{2040, 4096, 0}, /* the last 4 KiB */
		{2047, 512, 0},
		{2041, 4096, -EPROTO}, /* one sector past the end */
		{2048, 512, -EPROTO},
		{0, 0, -EPROTO},
		{0, 4097, -EPROTO}, /* not whole sectors */
		{2040, 4095, -EPROTO},
		{0, 1u << 20, 0}, /* the limit */
		{0, (1u << 20) + 512, -EPROTO},
		{UINT64_MAX - 3, 4096, -EPROTO}, /* sector + size would wrap */
		{UINT64_MAX, 512, -EPROTO},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct wire_req q = {rows[i].sector, 7, rows[i].size};

		assert_int_equal(wire_req_check(&q, 2048, 1u << 20), rows[i].rc);
	}
}

static void test_table(void **state)
{
	char why[WIRE_REASON_MAX] = "";
	uint16_t t;

	assert_int_equal(wire_table_check(why, sizeof(why)), 0);
	assert_int_equal(N_ELEMS(samples), WIRE_P_COUNT - 1);
	for (t = 1; t < WIRE_P_COUNT; t++) {
		const struct sample *s = sample_of(t);

		assert_int_equal(wire_type_stream(t), s->stream);
		assert_int_equal(wire_type_name(t)[0], 'P');
	}
	assert_string_equal(wire_type_name(WIRE_P_SIZES), "P_SIZES");
	assert_string_equal(wire_type_name(WIRE_P_COMPRESSED_BITMAP), "P_COMPRESSED_BITMAP");
	assert_string_equal(wire_type_name(WIRE_P_RETRY_WRITE), "P_RETRY_WRITE");
	assert_string_equal(wire_type_name(0), "P_UNKNOWN");
	assert_string_equal(wire_type_name(WIRE_P_COUNT), "P_UNKNOWN");
	assert_int_equal(WIRE_P_RETRY_WRITE, 40); /* doc §7.1 numbers */
	assert_int_equal(WIRE_P_DATA, 15);
	assert_int_equal(WIRE_P_PING, 27);
	assert_int_equal(WIRE_MAX_PAYLOAD, 33554524);
}

static void test_roundtrip(void **state)
{
	size_t i;

	for (i = 0; i < N_ELEMS(samples); i++) {
		const struct sample *s = &samples[i];
		char why[WIRE_REASON_MAX] = "";
		struct wire_pkt out;
		uint8_t *buf, *copy = NULL, *again;
		int rc;

		assert_int_equal(wire_pkt_len(&s->pkt), s->len);
		buf = encode_sample(&s->pkt, s->len);
		assert_int_equal(wire_get32(buf), WIRE_MAGIC);
		assert_int_equal(wire_get16(buf + 4), s->pkt.type);
		assert_int_equal(wire_get16(buf + 6), s->pkt.volume);
		assert_int_equal(wire_get32(buf + 8), s->len);
		assert_int_equal(wire_get32(buf + 12), 0);
		rc = decode_copy(buf, s->len, &out, &copy, why);
		if (rc)
			fail_msg("%s: %d %s", wire_type_name(s->pkt.type), rc, why);
		assert_same_pkt(&s->pkt, &out);
		/* re-encoding the decoded packet gives the same bytes */
		again = malloc(WIRE_HDR_SIZE + s->len);
		assert_non_null(again);
		assert_int_equal(wire_pkt_encode(&out, again, WIRE_HDR_SIZE + s->len),
				 WIRE_HDR_SIZE + s->len);
		assert_memory_equal(buf, again, WIRE_HDR_SIZE + s->len);
		/* one byte short of room */
		assert_int_equal(wire_pkt_encode(&s->pkt, again, WIRE_HDR_SIZE + s->len - 1),
				 -ENOSPC);
		free(again);
		free(copy);
		free(buf);
	}
}

/* Byte layouts written out from the doc, not from the code. */
static void test_golden(void **state)
{
	static const uint8_t sizes[] = {
		0x54, 0x4e, 0x44, 0x4d, 0, 6, 0, 1, 0, 0, 0, 32, 0, 0, 0, 0, /* header */
		0, 0, 0, 0, 0, 0x20, 0, 0,          /* d_size 2097152 */
		0, 0, 0, 0, 0, 0, 0, 0,             /* u_size */
		0, 0, 0, 0, 0, 0x1f, 0xff, 0xf8,    /* c_size 2097144 */
		0, 0x10, 0, 0, 0, 0, 0, 1,          /* max_req 1 MiB, flags */
	};
	static const uint8_t ack[] = {
		0x54, 0x4e, 0x44, 0x4d, 0, 38, 0, 0, 0, 0, 0, 24, 0, 0, 0, 0,
		0, 0, 0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xfe, 0xed, 0xfa, 0xce, 0, 0, 0, 1,
		0, 0, 0x20, 0, 0, 0, 0, 1,
	};
	uint8_t buf[512];
	int n;

	n = wire_pkt_encode(&sample_of(WIRE_P_SIZES)->pkt, buf, sizeof(buf));
	assert_int_equal(n, sizeof(sizes));
	assert_memory_equal(buf, sizes, sizeof(sizes));
	n = wire_pkt_encode(&sample_of(WIRE_P_OV_RESULT)->pkt, buf, sizeof(buf));
	assert_int_equal(n, sizeof(ack));
	assert_memory_equal(buf, ack, sizeof(ack));

	/* P_HELLO: node at 24, resource at 152, zero padded, stream at 4 */
	n = wire_pkt_encode(&sample_of(WIRE_P_HELLO)->pkt, buf, sizeof(buf));
	assert_int_equal(n, 16 + 280);
	assert_int_equal(buf[16 + 4], WIRE_STREAM_META);
	assert_int_equal(buf[16 + 5], WIRE_HELLO_AUTH);
	assert_int_equal(wire_get64(buf + 16 + 8), 0x8000000000000081ULL);
	assert_memory_equal(buf + 16 + 24, "alpha\0\0", 7);
	assert_int_equal(buf[16 + 151], 0);
	assert_memory_equal(buf + 16 + 152, "r0\0", 3);

	/* P_DATA: digest_len at 24, digest at 28, data after it */
	n = wire_pkt_encode(&sample_of(WIRE_P_DATA)->pkt, buf, sizeof(buf));
	assert_int_equal(n, -ENOSPC);
	{
		uint8_t *big = malloc(16 + 28 + 32 + 4096);

		assert_non_null(big);
		n = wire_pkt_encode(&sample_of(WIRE_P_DATA)->pkt, big, 16 + 28 + 32 + 4096);
		assert_int_equal(n, 16 + 28 + 32 + 4096);
		assert_int_equal(wire_get64(big + 16), 2048);
		assert_int_equal(wire_get32(big + 16 + 20), 0x13);
		assert_int_equal(big[16 + 24], 32);
		assert_memory_equal(big + 16 + 28, dig64, 32);
		assert_memory_equal(big + 16 + 60, data4k, 4096);
		free(big);
	}
}

/* Every row rejects one byte too few and one too many. */
static void test_lengths(void **state)
{
	size_t i;

	for (i = 0; i < N_ELEMS(samples); i++) {
		const struct sample *s = &samples[i];
		int stream = s->stream ? s->stream : WIRE_STREAM_DATA;
		struct wire_hdr h = {s->pkt.type, s->pkt.volume, 0, 0};
		char why[WIRE_REASON_MAX] = "";
		struct wire_pkt out;
		uint8_t *buf;

		h.len = s->min;
		assert_int_equal(wire_pkt_check(&h, stream, WIRE_F_ALL, why, sizeof(why)), 0);
		h.len = s->max;
		assert_int_equal(wire_pkt_check(&h, stream, WIRE_F_ALL, why, sizeof(why)), 0);
		h.len = s->max + 1;
		assert_int_equal(wire_pkt_check(&h, stream, WIRE_F_ALL, why, sizeof(why)), -E2BIG);
		assert_non_null(strstr(why, wire_type_name(s->pkt.type)));
		if (s->min > 0) {
			h.len = s->min - 1;
			assert_int_equal(wire_pkt_check(&h, stream, WIRE_F_ALL, why, sizeof(why)),
					 -EBADMSG);
			assert_non_null(strstr(why, "payload"));
			buf = calloc(1, s->min);
			assert_non_null(buf);
			assert_int_equal(wire_pkt_decode(&h, buf, h.len, &out, why, sizeof(why)),
					 -EBADMSG);
			free(buf);
		}
		if (s->min == s->max) {
			h.len = s->max + 1;
			buf = calloc(1, h.len);
			assert_non_null(buf);
			assert_int_equal(wire_pkt_decode(&h, buf, h.len, &out, why, sizeof(why)),
					 -E2BIG);
			free(buf);
		}
	}
	{
		struct wire_hdr h = {WIRE_P_SIZES, 0, 12, 0};
		char why[WIRE_REASON_MAX];
		uint8_t b[12] = {0};
		struct wire_pkt out;

		assert_int_equal(wire_pkt_decode(&h, b, 12, &out, why, sizeof(why)), -EBADMSG);
		assert_string_equal(why, "P_SIZES: payload 12 bytes, expected 32");
		assert_int_equal(wire_pkt_decode(&h, b, 11, &out, why, sizeof(why)), -EBADMSG);
	}
}

/* A field broken in an otherwise valid sample. */
struct mutation {
	uint16_t type;
	uint32_t off;  /* in the payload */
	uint8_t width; /* bytes written, big-endian */
	uint64_t value;
	const char *why; /* part of the reason */
};

static const struct mutation mutations[] = {
	{WIRE_P_HELLO, 0, 2, 0, "proto_min 0 out of range"},
	{WIRE_P_HELLO, 2, 2, 0, "proto_max 0 out of range"},
	{WIRE_P_HELLO, 0, 2, 4, "proto_max 3 is below proto_min 4"},
	{WIRE_P_HELLO, 4, 1, 3, "stream 3 is not a valid value"},
	{WIRE_P_HELLO, 4, 1, 0, "stream 0 is not a valid value"},
	{WIRE_P_HELLO, 5, 1, 8, "flags 0x8 has unknown bits"},
	{WIRE_P_HELLO, 7, 1, 1, "reserved byte at offset 7"},
	{WIRE_P_HELLO, 24, 1, 0, "node: byte 0x6c at 1 after the end"},
	{WIRE_P_HELLO, 24 + 2, 1, '\n', "node: byte 0x0a at 2 is not printable"},
	{WIRE_P_HELLO, 24 + 1, 1, ' ', "node: byte 0x20 at 1 is not printable"},
	{WIRE_P_HELLO, 24 + 1, 1, 0xe9, "not printable"},
	{WIRE_P_HELLO, 24 + 127, 1, 'x', "node: byte 0x78 at 127 after the end"},
	{WIRE_P_HELLO, 152, 2, 0, "res is empty"},
	{WIRE_P_AUTH_CHALLENGE, 0, 1, 0, "alg: byte 0x68 at 1 after the end"},
	{WIRE_P_AUTH_CHALLENGE, 0, 6, 0, "alg is empty"},
	{WIRE_P_PROTOCOL, 0, 1, 0, "protocol 0 is not a valid value"},
	{WIRE_P_PROTOCOL, 0, 1, 4, "protocol 4 is not a valid value"},
	{WIRE_P_PROTOCOL, 1, 1, 7, "after_sb_0pri 7 out of range"},
	{WIRE_P_PROTOCOL, 2, 1, 1, "after_sb_1pri 1 is not a valid value"},
	{WIRE_P_PROTOCOL, 3, 1, 8, "after_sb_2pri 8 is not a valid value"},
	{WIRE_P_PROTOCOL, 3, 1, 200, "after_sb_2pri 200 is not a valid value"},
	{WIRE_P_PROTOCOL, 4, 4, 0x10, "flags 0x10 has unknown bits"},
	{WIRE_P_PROTOCOL, 8 + 63, 1, 'z', "integrity_alg: byte 0x7a at 63 after the end"},
	{WIRE_P_SYNC_PARAM, 0, 4, 0, "resync_rate 0 out of range 1..4194304"},
	{WIRE_P_SYNC_PARAM, 4, 4, 301, "c_plan_ahead 301 out of range"},
	{WIRE_P_SYNC_PARAM, 8, 4, 0, "c_delay_target 0 out of range"},
	{WIRE_P_SYNC_PARAM, 12, 4, 1048577, "c_fill_target 1048577 out of range"},
	{WIRE_P_SYNC_PARAM, 16, 4, 249, "c_max_rate 249 out of range"},
	{WIRE_P_SYNC_PARAM, 20, 4, 4194305, "c_min_rate 4194305 out of range"},
	{WIRE_P_SYNC_PARAM, 88, 1, 0x7f, "csums_alg: byte 0x7f at 0 is not printable"},
	{WIRE_P_SIZES, 0, 8, WIRE_MAX_SECTORS + 1, "d_size 18014398509481985 out of range"},
	{WIRE_P_SIZES, 24, 4, 100, "max_req 100 out of range"},
	{WIRE_P_SIZES, 24, 4, 1000, "max_req 1000 is not a multiple of 512"},
	{WIRE_P_SIZES, 24, 4, WIRE_MAX_DATA + 512, "max_req 33554944 out of range"},
	{WIRE_P_SIZES, 28, 4, 4, "flags 0x4 has unknown bits"},
	{WIRE_P_UUIDS, 32, 8, WIRE_MAX_BM_BITS + 1, "weight 2251799813685249 out of range"},
	{WIRE_P_UUIDS, 40, 8, 0x10, "flags 0x10 has unknown bits"},
	{WIRE_P_STATE, 0, 1, 3, "role 3 out of range 0..2"},
	{WIRE_P_STATE, 1, 1, 9, "peer 9 out of range"},
	{WIRE_P_STATE, 2, 1, 9, "disk 9 out of range 0..8"},
	{WIRE_P_STATE, 3, 1, 0xff, "pdsk 255 out of range"},
	{WIRE_P_STATE, 4, 1, 24, "conn 24 out of range 0..23"},
	{WIRE_P_STATE, 5, 1, 8, "susp 0x8 has unknown bits"},
	{WIRE_P_STATE, 6, 1, 0x80, "isp 0x80 has unknown bits"},
	{WIRE_P_STATE, 7, 1, 1, "reserved byte at offset 7"},
	{WIRE_P_STATE_CHG_REQ, 0, 1, 0x0f, "mask.role 0x0f is neither"},
	{WIRE_P_STATE_CHG_REQ, 8, 1, 3, "value.role 3 out of range"},
	{WIRE_P_STATE_CHG_REQ, 10, 1, 1, "value.disk 1 outside the mask"},
	{WIRE_P_STATE_CHG_REQ, 13, 1, 3, "value flags outside the mask"},
	{WIRE_P_STATE_CHG_REQ, 5, 1, 0x10, "mask.susp 0x10 has unknown bits"},
	{WIRE_P_STATE_CHG_REQ, 15, 1, 1, "reserved byte at offset 15"},
	{WIRE_P_STATE_CHG_REPLY, 0, 4, 0, "result 0 is neither success nor a refusal"},
	{WIRE_P_STATE_CHG_REPLY, 0, 4, 0xffffffe0u + 64, "result 32 out of range -32..1"},
	{WIRE_P_STATE_CHG_REPLY, 0, 4, 2, "result 2 out of range"},
	{WIRE_P_STATE_CHG_REPLY, 0, 4, 0xffffffdfu, "result -33 out of range"},
	{WIRE_P_COMPRESSED_BITMAP, 0, 1, 3, "flags 0x03 have unknown bits"},
	{WIRE_P_BITMAP_DONE, 8, 8, 1001, "weight 1001 above bits 1000"},
	{WIRE_P_BITMAP_DONE, 0, 8, WIRE_MAX_BM_BITS + 1, "bits 2251799813685249 out of range"},
	{WIRE_P_DATA, 20, 4, 0x20, "dp_flags 0x20 has unknown bits"},
	{WIRE_P_DATA, 20, 4, WIRE_DP_SEND_RECV_ACK | WIRE_DP_SEND_WRITE_ACK, "both a receive"},
	{WIRE_P_DATA, 24, 1, 65, "digest_len 65 out of range 0..64"},
	{WIRE_P_DATA, 24, 1, 33, "4095 bytes of data, expected a multiple of 512"},
	{WIRE_P_DATA, 24, 1, 0, "4128 bytes of data"},
	{WIRE_P_DATA, 26, 1, 1, "reserved byte at offset 26"},
	{WIRE_P_DATA, 0, 8, WIRE_MAX_SECTORS - 7, "beyond the largest device"},
	{WIRE_P_DATA, 0, 8, WIRE_MAX_SECTORS + 1, "sector 18014398509481985 out of range"},
	{WIRE_P_DATA_REPLY, 16, 4, 1, "seq 1 out of range 0..0"},
	{WIRE_P_DATA_REPLY, 20, 4, WIRE_DP_FUA, "dp_flags 0x1 has unknown bits"},
	{WIRE_P_RS_DATA_REPLY, 20, 4, WIRE_DP_SEND_WRITE_ACK, "dp_flags 0x10 has unknown bits"},
	{WIRE_P_TRIM, 24, 4, 0, "size 0 out of range"},
	{WIRE_P_TRIM, 24, 4, 513, "size 513 is not a multiple of 512"},
	{WIRE_P_TRIM, 28, 4, 1, "reserved byte at offset 31"},
	{WIRE_P_WRITE_ZEROES, 20, 4, 0x18, "both a receive"},
	{WIRE_P_BARRIER, 4, 4, 0x100, "flags 0x100 has unknown bits"},
	{WIRE_P_OUT_OF_SYNC, 8, 4, 0, "size 0 out of range"},
	{WIRE_P_OUT_OF_SYNC, 12, 4, 1, "reserved byte at offset 15"},
	{WIRE_P_DATA_REQUEST, 16, 4, WIRE_MAX_DATA + 512, "size 33554944 out of range"},
	{WIRE_P_RS_DATA_REQUEST, 16, 4, 4095, "not a multiple of 512"},
	{WIRE_P_OV_REQUEST, 20, 4, 1, "reserved byte at offset 23"},
	{WIRE_P_CSUM_RS_REQUEST, 0, 8, WIRE_MAX_SECTORS, "beyond the largest device"},
	{WIRE_P_WRITE_ACK, 16, 4, 0, "size 0 out of range"},
	{WIRE_P_NEG_ACK, 16, 4, 100, "size 100 out of range"},
	{WIRE_P_OV_RESULT, 20, 4, 2, "result 2 out of range 0..1"},
};

static void test_fields(void **state)
{
	size_t i;

	for (i = 0; i < N_ELEMS(mutations); i++) {
		const struct mutation *m = &mutations[i];
		const struct sample *s = sample_of(m->type);
		char why[WIRE_REASON_MAX] = "";
		struct wire_pkt out;
		uint8_t *buf = encode_sample(&s->pkt, s->len), *copy = NULL;
		uint8_t *p = buf + WIRE_HDR_SIZE + m->off;
		unsigned int k;
		int rc;

		assert_true(m->off + m->width <= s->len);
		for (k = 0; k < m->width; k++)
			p[k] = (uint8_t)(m->value >> (8 * (m->width - 1 - k)));
		rc = decode_copy(buf, s->len, &out, &copy, why);
		if (rc != -EBADMSG || !strstr(why, m->why))
			fail_msg("mutation %zu (%s): rc %d, reason '%s', expected '%s'", i,
				 wire_type_name(m->type), rc, why, m->why);
		assert_non_null(strstr(why, wire_type_name(m->type)));
		free(copy);
		free(buf);
	}
}

static void test_chunks(void **state)
{
	static const uint8_t odd[20] = {0};
	struct wire_hdr h = {WIRE_P_BITMAP, 0, 20, 0};
	char why[WIRE_REASON_MAX] = "";
	struct wire_pkt out;

	assert_int_equal(wire_pkt_decode(&h, odd, 20, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "whole words"));
	h.len = 16;
	assert_int_equal(wire_pkt_decode(&h, odd, 16, &out, why, sizeof(why)), 0);
	assert_ptr_equal(out.data, odd);
	assert_int_equal(out.data_len, 16);
	h.type = WIRE_P_COMPRESSED_BITMAP;
	h.len = 2;
	assert_int_equal(wire_pkt_decode(&h, odd, 2, &out, why, sizeof(why)), 0);
	assert_ptr_equal(out.data, odd); /* the whole chunk, flags byte included */
	h.len = 1;
	assert_int_equal(wire_pkt_decode(&h, odd, 1, &out, why, sizeof(why)), -EBADMSG);
}

static void test_header(void **state)
{
	struct wire_hdr h = {WIRE_P_DATA, 7, WIRE_MAX_PAYLOAD, WIRE_HF_IGNORABLE}, back;
	char why[WIRE_REASON_MAX] = "";
	uint8_t b[WIRE_HDR_SIZE];

	wire_hdr_encode(&h, b);
	assert_int_equal(wire_hdr_decode(b, &back, why, sizeof(why)), 0);
	assert_int_equal(back.type, h.type);
	assert_int_equal(back.volume, 7);
	assert_int_equal(back.len, WIRE_MAX_PAYLOAD);
	assert_int_equal(back.flags, WIRE_HF_IGNORABLE);

	wire_put32(b + 8, WIRE_MAX_PAYLOAD + 1);
	assert_int_equal(wire_hdr_decode(b, &back, why, sizeof(why)), -E2BIG);
	assert_non_null(strstr(why, "P_DATA: payload 33554525 bytes, above the maximum"));
	wire_put32(b + 8, 0xffffffffu);
	assert_int_equal(wire_hdr_decode(b, &back, why, sizeof(why)), -E2BIG);
	wire_put32(b + 8, 0);
	wire_put32(b + 12, 2);
	assert_int_equal(wire_hdr_decode(b, &back, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "unknown bits"));
	wire_put32(b + 12, 0x80000000u);
	assert_int_equal(wire_hdr_decode(b, &back, why, sizeof(why)), -EPROTO);
	wire_put32(b + 12, 0);
	b[3] ^= 1;
	assert_int_equal(wire_hdr_decode(b, &back, why, sizeof(why)), -EPROTO);
	assert_string_equal(why, "bad magic 0x544e444c (expected 0x544e444d)");
	/* reason may be NULL */
	assert_int_equal(wire_hdr_decode(b, &back, NULL, 0), -EPROTO);
}

struct check_row {
	uint16_t type, volume;
	uint32_t len, flags;
	int stream;
	uint64_t features;
	int want;
	const char *why;
};

static const struct check_row check_rows[] = {
	{WIRE_P_HELLO, NONE, 280, 0, WIRE_STREAM_DATA, 0, 0, NULL},
	{WIRE_P_HELLO, NONE, 280, 0, WIRE_STREAM_META, 0, 0, NULL},
	{WIRE_P_HELLO, 0, 280, 0, WIRE_STREAM_DATA, 0, -EPROTO, "volume 0 on a connection-wide"},
	{WIRE_P_SIZES, NONE, 32, 0, WIRE_STREAM_DATA, 0, -EPROTO, "P_SIZES: no volume number"},
	{WIRE_P_STATE_CHG_REQ, NONE, 16, 0, WIRE_STREAM_DATA, 0, 0, NULL},
	{WIRE_P_STATE_CHG_REQ, 4, 16, 0, WIRE_STREAM_DATA, 0, 0, NULL},
	{WIRE_P_WRITE_ACK, 0, 24, 0, WIRE_STREAM_DATA, 0, -EPROTO,
	 "P_WRITE_ACK on the data stream, belongs on meta"},
	{WIRE_P_DATA, 0, 540, 0, WIRE_STREAM_META, 0, -EPROTO, "belongs on data"},
	{WIRE_P_PING, NONE, 0, 0, WIRE_STREAM_META, 0, 0, NULL},
	{WIRE_P_PING, NONE, 1, 0, WIRE_STREAM_META, 0, -E2BIG, "P_PING: payload 1 bytes"},
	{WIRE_P_TRIM, 0, 32, 0, WIRE_STREAM_DATA, WIRE_F_ALL & ~WIRE_F_TRIM, -EPROTO,
	 "P_TRIM: feature TRIM was not agreed"},
	{WIRE_P_TRIM, 0, 32, WIRE_HF_IGNORABLE, WIRE_STREAM_DATA, 0, -ENOMSG, "skipped"},
	{WIRE_P_TRIM, 0, 32, 0, WIRE_STREAM_DATA, WIRE_F_TRIM, 0, NULL},
	{WIRE_P_OV_RESULT, 0, 24, 0, WIRE_STREAM_META, WIRE_F_CSUMS, -EPROTO, "VERIFY"},
	{WIRE_P_COMPRESSED_BITMAP, 0, 2, 0, WIRE_STREAM_DATA, 0, -EPROTO, "RLE_BITMAP"},
	{0, NONE, 0, 0, WIRE_STREAM_DATA, WIRE_F_ALL, -EPROTO, "unknown packet type 0"},
	{99, 0, 10, 0, WIRE_STREAM_DATA, WIRE_F_ALL, -EPROTO, "unknown packet type 99"},
	{99, 0, 10, WIRE_HF_IGNORABLE, WIRE_STREAM_META, 0, -ENOMSG, "(ignorable), skipped"},
};

static void test_check(void **state)
{
	size_t i;

	for (i = 0; i < N_ELEMS(check_rows); i++) {
		const struct check_row *c = &check_rows[i];
		struct wire_hdr h = {c->type, c->volume, c->len, c->flags};
		char why[WIRE_REASON_MAX] = "";
		int rc = wire_pkt_check(&h, c->stream, c->features, why, sizeof(why));

		if (rc != c->want || (c->why && !strstr(why, c->why)))
			fail_msg("check row %zu: rc %d '%s', expected %d '%s'", i, rc, why, c->want,
				 c->why ? c->why : "");
	}
	/* the decoder skips unknown ignorable types too */
	{
		struct wire_hdr h = {200, 0, 3, WIRE_HF_IGNORABLE};
		char why[WIRE_REASON_MAX];
		struct wire_pkt out;

		assert_int_equal(wire_pkt_decode(&h, "abc", 3, &out, why, sizeof(why)), -ENOMSG);
		h.flags = 0;
		assert_int_equal(wire_pkt_decode(&h, "abc", 3, &out, why, sizeof(why)), -EPROTO);
	}
}

static void test_encode_errors(void **state)
{
	uint8_t buf[1024], *big;
	struct wire_pkt p;
	int n;

	p = sample_of(WIRE_P_PROTOCOL)->pkt;
	p.u.protocol.protocol = 0;
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	p = sample_of(WIRE_P_HELLO)->pkt;
	memset(p.u.hello.node, 'a', sizeof(p.u.hello.node)); /* no terminator */
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	p.u.hello.node[WIRE_NAME_MAX] = '\0'; /* exactly 128 characters: fine */
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), 16 + 280);
	p.u.hello.node[3] = ' ';
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	p = sample_of(WIRE_P_HELLO)->pkt;
	p.hflags = 2;
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	p.hflags = WIRE_HF_IGNORABLE;
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), 16 + 280);
	p.volume = 0; /* connection-wide */
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	p = sample_of(WIRE_P_SIZES)->pkt;
	p.data = data4k;
	p.data_len = 8; /* a tail on a fixed-size type */
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	p.type = 0;
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(wire_pkt_len(&p), 0);

	p = sample_of(WIRE_P_DATA)->pkt;
	p.digest_len = 65;
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	p.digest_len = 32;
	p.digest = NULL;
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	p = sample_of(WIRE_P_DATA)->pkt;
	p.data_len = 1000;
	assert_int_equal(wire_pkt_encode_head(&p, buf, sizeof(buf)), -EINVAL);
	p.data_len = WIRE_MAX_DATA + 512;
	assert_int_equal(wire_pkt_encode_head(&p, buf, sizeof(buf)), -EINVAL);
	p.data_len = 0;
	assert_int_equal(wire_pkt_encode_head(&p, buf, sizeof(buf)), -EINVAL);

	/* the head of a 32 MiB write, data sent separately */
	p = sample_of(WIRE_P_DATA)->pkt;
	p.data = NULL;
	p.data_len = WIRE_MAX_DATA;
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);
	n = wire_pkt_encode_head(&p, buf, sizeof(buf));
	assert_int_equal(n, 16 + 28 + 32);
	assert_int_equal(wire_get32(buf + 8), 28 + 32 + WIRE_MAX_DATA);
	assert_int_equal(wire_pkt_encode_head(&p, buf, 16 + 28 + 31), -ENOSPC);

	/* head + data equals the whole packet */
	p = sample_of(WIRE_P_RS_DATA_REPLY)->pkt;
	big = malloc(16 + 28 + 20 + 4096);
	assert_non_null(big);
	assert_int_equal(wire_pkt_encode(&p, big, 16 + 28 + 20 + 4096), 16 + 28 + 20 + 4096);
	n = wire_pkt_encode_head(&p, buf, sizeof(buf));
	assert_int_equal(n, 16 + 28 + 20);
	assert_memory_equal(big, buf, (size_t)n);
	free(big);

	/* heads of other types are whole packets */
	p = sample_of(WIRE_P_BITMAP)->pkt;
	assert_int_equal(wire_pkt_encode_head(&p, buf, sizeof(buf)), 16 + 24);
	p.data = NULL;
	assert_int_equal(wire_pkt_encode_head(&p, buf, sizeof(buf)), -EINVAL);
}

/* ---------------------------------------------------------------- negotiation */

struct nego_row {
	uint16_t own_min, own_max, peer_min, peer_max;
	uint64_t own_f, peer_f;
	int want;
	uint16_t proto;
	uint64_t features;
};

static const struct nego_row nego_rows[] = {
	{1, 1, 1, 1, WIRE_F_ALL, WIRE_F_ALL, 0, 1, WIRE_F_ALL},
	{1, 3, 2, 5, 0xff, 0x05, 0, 3, 0x05},
	{2, 5, 1, 3, 0x05, 0xff, 0, 3, 0x05},
	{1, 4, 4, 9, 0xff, 0x100000000000000fULL, 0, 4, 0x0f},
	{3, 3, 1, 9, 0, 0xff, 0, 3, 0},
	{1, 1, 2, 3, 0xff, 0xff, -EPROTONOSUPPORT, 0, 0},
	{3, 4, 1, 2, 0xff, 0xff, -EPROTONOSUPPORT, 0, 0},
};

static struct wire_hello hello(uint16_t lo, uint16_t hi, uint64_t f, const char *node)
{
	struct wire_hello h = {lo, hi, WIRE_STREAM_DATA, 0, f, 0x42, "", "r0"};

	strcpy(h.node, node);
	return h;
}

static void test_negotiate(void **state)
{
	struct wire_hello a, b;
	struct wire_agreed ag;
	char why[WIRE_REASON_MAX] = "";
	size_t i;

	for (i = 0; i < N_ELEMS(nego_rows); i++) {
		const struct nego_row *r = &nego_rows[i];
		int rc;

		a = hello(r->own_min, r->own_max, r->own_f, "alpha");
		b = hello(r->peer_min, r->peer_max, r->peer_f, "beta");
		rc = wire_negotiate(&a, &b, &ag, why, sizeof(why));
		if (rc != r->want)
			fail_msg("negotiation row %zu: rc %d (%s)", i, rc, why);
		/* symmetric: the peer reaches the same result */
		assert_int_equal(wire_negotiate(&b, &a, &ag, NULL, 0), r->want);
		if (rc == 0) {
			assert_int_equal(ag.proto, r->proto);
			assert_int_equal(ag.features, r->features);
			assert_false(ag.auth);
			assert_int_equal(ag.conn_id, 0x42);
		}
	}
	a = hello(1, 1, 0xff, "alpha");
	b = hello(2, 3, 0xff, "beta");
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), -EPROTONOSUPPORT);
	assert_string_equal(why, "no common protocol version: we speak 1..1, peer speaks 2..3");

	b = hello(1, 1, 0xff, "beta");
	b.flags = WIRE_HELLO_AUTH;
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), -EACCES);
	assert_non_null(strstr(why, "peer requires authentication"));
	assert_int_equal(wire_negotiate(&b, &a, &ag, why, sizeof(why)), -EACCES);
	assert_non_null(strstr(why, "we require authentication"));
	a.flags = WIRE_HELLO_AUTH;
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), 0);
	assert_true(ag.auth);
	assert_false(ag.auth_v2);
	/* the auth versions must match (doc/wire-protocol.md §5.4) */
	a.flags = WIRE_HELLO_AUTH | WIRE_HELLO_AUTH_V2;
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), -EACCES);
	assert_string_equal(why, "peer authenticates with cram-hmac-version 1, we with 2; configure "
				 "the same on both nodes");
	assert_int_equal(wire_negotiate(&b, &a, &ag, why, sizeof(why)), -EACCES);
	assert_non_null(strstr(why, "with cram-hmac-version 2, we with 1"));
	b.flags = a.flags;
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), 0);
	assert_true(ag.auth && ag.auth_v2);
	/* without authentication the version bit means nothing */
	a.flags = b.flags = WIRE_HELLO_AUTH_V2;
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), 0);
	assert_false(ag.auth || ag.auth_v2);
	a.flags = b.flags = WIRE_HELLO_AUTH;

	b.flags |= WIRE_HELLO_DUPLICATE;
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), -EALREADY);
	b.flags = a.flags;

	b.stream = WIRE_STREAM_META;
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "meta stream"));
	b.stream = WIRE_STREAM_DATA;
	b.conn_id = 0x43;
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "connection id"));
	a.conn_id = b.conn_id = 0;
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), -EPROTO);
	a.conn_id = b.conn_id = 0x43;
	strcpy(b.res, "r1");
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), -EPROTO);
	assert_string_equal(why, "peer connects for resource r1, this is r0");
	strcpy(b.res, "r0");
	strcpy(b.node, "alpha");
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "our node name alpha"));
	strcpy(b.node, "beta");
	assert_int_equal(wire_negotiate(&a, &b, &ag, why, sizeof(why)), 0);
	assert_int_equal(ag.conn_id, 0x43);
}

/* decode buf (a whole packet of n bytes) as if it arrived on stream */
static int decode_as(const uint8_t *buf, size_t n, int stream, uint64_t features,
		     struct wire_pkt *out, char *why)
{
	struct wire_hdr h;
	int rc = wire_hdr_decode(buf, &h, why, WIRE_REASON_MAX);

	if (rc == 0)
		rc = wire_pkt_check(&h, stream, features, why, WIRE_REASON_MAX);
	if (rc == 0)
		rc = wire_pkt_decode(&h, buf + WIRE_HDR_SIZE, n - WIRE_HDR_SIZE, out, why,
				     WIRE_REASON_MAX);
	return rc;
}

/*
 * P_CSUM_RS_REQUEST carries the target's digest after a block request;
 * P_RS_IS_IN_SYNC is a block ack on the meta stream; both need
 * WIRE_F_CSUMS. A data packet's data-integrity-alg digest sits between
 * the fixed part and the data, and a byte changed in the data after
 * digesting is what the receiver's comparison catches.
 */
static void test_csums_integrity(void **state)
{
	const struct digest_alg *crc, *sha;
	uint8_t buf[16 + 28 + 64 + 4096], d[DIGEST_MAX_SIZE], d2[DIGEST_MAX_SIZE];
	char why[WIRE_REASON_MAX] = "";
	struct wire_pkt p, out;
	int n;

	assert_int_equal(digest_lookup("crc32c", &crc), 0);
	assert_int_equal(digest_lookup("sha512", &sha), 0);
	assert_int_equal(digest_buf(crc, data4k, sizeof(data4k), d), 0);

	/* the request: sector, id, size, reserved, then 4 digest bytes */
	memset(&p, 0, sizeof(p));
	p.type = WIRE_P_CSUM_RS_REQUEST;
	p.volume = 3;
	p.u.req = (struct wire_req){4096, 512, 128 * 1024};
	p.digest = d;
	p.digest_len = (uint32_t)digest_size(crc);
	n = wire_pkt_encode(&p, buf, sizeof(buf));
	assert_int_equal(n, 16 + 24 + 4);
	assert_int_equal(wire_get32(buf + 8), 28);
	assert_int_equal(wire_get32(buf + 16 + 16), 128 * 1024);
	assert_int_equal(wire_get32(buf + 16 + 20), 0);
	assert_memory_equal(buf + 16 + 24, d, 4);
	assert_int_equal(decode_as(buf, (size_t)n, WIRE_STREAM_DATA, WIRE_F_CSUMS, &out, why), 0);
	assert_int_equal(out.digest_len, 4);
	assert_memory_equal(out.digest, d, 4);
	assert_int_equal(out.u.req.size, 128 * 1024);
	assert_int_equal(decode_as(buf, (size_t)n, WIRE_STREAM_DATA, WIRE_F_ALL & ~WIRE_F_CSUMS,
				   &out, why), -EPROTO);
	assert_non_null(strstr(why, "CSUMS"));
	assert_int_equal(decode_as(buf, (size_t)n, WIRE_STREAM_META, WIRE_F_ALL, &out, why),
			 -EPROTO);
	p.digest_len = 0; /* a checksum request without a checksum */
	p.digest = NULL;
	assert_int_equal(wire_pkt_encode(&p, buf, sizeof(buf)), -EINVAL);

	/* the answer: a block ack on meta */
	memset(&p, 0, sizeof(p));
	p.type = WIRE_P_RS_IS_IN_SYNC;
	p.volume = 3;
	p.u.ack = (struct wire_ack){4096, 512, 128 * 1024, 0};
	n = wire_pkt_encode(&p, buf, sizeof(buf));
	assert_int_equal(n, 16 + 24);
	assert_int_equal(decode_as(buf, (size_t)n, WIRE_STREAM_META, WIRE_F_CSUMS, &out, why), 0);
	assert_int_equal(out.u.ack.sector, 4096);
	assert_int_equal(out.u.ack.id, 512);
	assert_int_equal(decode_as(buf, (size_t)n, WIRE_STREAM_META, 0, &out, why), -EPROTO);
	assert_int_equal(decode_as(buf, (size_t)n, WIRE_STREAM_DATA, WIRE_F_CSUMS, &out, why),
			 -EPROTO);

	/* P_DATA with a sha512 integrity digest; corruption after digesting */
	assert_int_equal(digest_buf(sha, data4k, sizeof(data4k), d), 0);
	memset(&p, 0, sizeof(p));
	p.type = WIRE_P_DATA;
	p.volume = 0;
	p.u.data = (struct wire_data){8, 7, 1, WIRE_DP_SEND_WRITE_ACK};
	p.digest = d;
	p.digest_len = (uint32_t)digest_size(sha);
	p.data = data4k;
	p.data_len = sizeof(data4k);
	n = wire_pkt_encode(&p, buf, sizeof(buf));
	assert_int_equal(n, 16 + 28 + 64 + 4096);
	assert_int_equal(buf[16 + 24], 64);
	assert_memory_equal(buf + 16 + 28, d, 64);
	assert_int_equal(decode_as(buf, (size_t)n, WIRE_STREAM_DATA, 0, &out, why), 0);
	assert_int_equal(out.digest_len, 64);
	assert_int_equal(out.data_len, 4096);
	assert_int_equal(digest_buf(sha, out.data, out.data_len, d2), 0);
	assert_memory_equal(d2, out.digest, 64);
	buf[16 + 28 + 64 + 2048] ^= 0x5a;
	assert_int_equal(decode_as(buf, (size_t)n, WIRE_STREAM_DATA, 0, &out, why), 0);
	assert_int_equal(digest_buf(sha, out.data, out.data_len, d2), 0);
	assert_memory_not_equal(d2, out.digest, 64);
	/* the resync's data reply carries it the same way */
	p.type = WIRE_P_RS_DATA_REPLY;
	p.u.data = (struct wire_data){8, 7, 0, 0};
	n = wire_pkt_encode(&p, buf, sizeof(buf));
	assert_int_equal(n, 16 + 28 + 64 + 4096);
	assert_int_equal(decode_as(buf, (size_t)n, WIRE_STREAM_DATA, 0, &out, why), 0);
	assert_memory_equal(out.digest, d, 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_chunks),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_negotiate),
		cmocka_unit_test(test_csums_integrity),
		cmocka_unit_test(test_req_check),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}

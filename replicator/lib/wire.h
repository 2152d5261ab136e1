/*
 * wire: the codec of tandem's replication protocol (doc/wire-protocol.md):
 * the 16-byte header, one decoded struct per packet layout, validation of
 * every field before use, encoding, and version/feature negotiation of
 * two P_HELLO packets. Pure functions: no I/O, no state.
 *
 * Everything on the wire is big-endian; the get/put helpers below are the
 * only byte-order conversions of the replication modules.
 */
#ifndef TANDEM_WIRE_H
#define TANDEM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_MAGIC     0x544e444du /* "TNDM" */
#define WIRE_HDR_SIZE  16u
#define WIRE_PROTO_MIN 1u
#define WIRE_PROTO_MAX 1u
#define WIRE_VOL_NONE  0xffffu /* connection-wide packets */

#define WIRE_MAX_DATA      (32u << 20) /* = NBD_REQUEST_MAX_PAYLOAD */
#define WIRE_MAX_DIGEST    64u
#define WIRE_DATA_FIXED    28u /* fixed part of P_DATA and the data replies */
#define WIRE_MAX_PAYLOAD   (WIRE_DATA_FIXED + WIRE_MAX_DIGEST + WIRE_MAX_DATA)
#define WIRE_MAX_SECTORS   (1ULL << 54) /* 2^63 bytes */
#define WIRE_MAX_BM_BITS   (WIRE_MAX_SECTORS / 8)
#define WIRE_BM_MAX_CHUNK  32776u /* bmx chunk in P_BITMAP, P_COMPRESSED_BITMAP */
#define WIRE_NAME_MAX      128u   /* node and resource names */
#define WIRE_ALG_MAX       64u    /* algorithm names */
#define WIRE_CHALLENGE     64u    /* P_AUTH_CHALLENGE random bytes */
#define WIRE_CONFIG_DIGEST 32u    /* P_PROTOCOL config_digest (SHA-256) */
#define WIRE_REASON_MAX    192u   /* enough for any reason string */

enum wire_stream {
	WIRE_STREAM_DATA = 1,
	WIRE_STREAM_META = 2,
};

/* Header flags. */
#define WIRE_HF_IGNORABLE (1u << 0)
#define WIRE_HF_ALL       WIRE_HF_IGNORABLE

/* Feature bits (P_HELLO.features). */
#define WIRE_F_TRIM          (1ULL << 0)
#define WIRE_F_WRITE_ZEROES  (1ULL << 1)
#define WIRE_F_RLE_BITMAP    (1ULL << 2)
#define WIRE_F_CSUMS         (1ULL << 3)
#define WIRE_F_VERIFY        (1ULL << 4)
#define WIRE_F_REMOTE_READ   (1ULL << 5)
#define WIRE_F_TWO_PRIMARIES (1ULL << 6)
#define WIRE_F_AHEAD         (1ULL << 7)
#define WIRE_F_BARRIER_FLUSH (1ULL << 8) /* P_BARRIER may carry WIRE_BF_FLUSH */
#define WIRE_F_ALL           0x1ffULL

enum wire_type {
	WIRE_P_HELLO = 1,
	WIRE_P_AUTH_CHALLENGE,
	WIRE_P_AUTH_RESPONSE,
	WIRE_P_PROTOCOL,
	WIRE_P_SYNC_PARAM,
	WIRE_P_SIZES,
	WIRE_P_UUIDS,
	WIRE_P_STATE,
	WIRE_P_STATE_CHG_REQ,
	WIRE_P_STATE_CHG_REPLY, /* 10 */
	WIRE_P_SYNC_UUID,
	WIRE_P_BITMAP,
	WIRE_P_COMPRESSED_BITMAP,
	WIRE_P_BITMAP_DONE,
	WIRE_P_DATA,
	WIRE_P_TRIM,
	WIRE_P_WRITE_ZEROES,
	WIRE_P_BARRIER,
	WIRE_P_OUT_OF_SYNC,
	WIRE_P_DATA_REQUEST, /* 20 */
	WIRE_P_DATA_REPLY,
	WIRE_P_RS_DATA_REQUEST,
	WIRE_P_RS_DATA_REPLY,
	WIRE_P_CSUM_RS_REQUEST,
	WIRE_P_OV_REQUEST,
	WIRE_P_OV_REPLY,
	WIRE_P_PING,
	WIRE_P_PING_ACK,
	WIRE_P_RECV_ACK,
	WIRE_P_WRITE_ACK, /* 30 */
	WIRE_P_RS_WRITE_ACK,
	WIRE_P_NEG_ACK,
	WIRE_P_NEG_DREPLY,
	WIRE_P_NEG_RS_DREPLY,
	WIRE_P_RS_IS_IN_SYNC,
	WIRE_P_RS_CANCEL,
	WIRE_P_BARRIER_ACK,
	WIRE_P_OV_RESULT,
	WIRE_P_SUPERSEDED,
	WIRE_P_RETRY_WRITE, /* 40 */
	WIRE_P_COUNT,       /* one past the last type */
};

/* P_HELLO.flags */
#define WIRE_HELLO_AUTH      (1u << 0) /* the sender requires cram-hmac auth */
#define WIRE_HELLO_DUPLICATE (1u << 1) /* acceptor: this attempt is closed */
#define WIRE_HELLO_AUTH_V2   (1u << 2) /* with AUTH: version 2 of §5.4 */
/* P_PROTOCOL.protocol */
#define WIRE_PROTO_A 1u
#define WIRE_PROTO_B 2u
#define WIRE_PROTO_C 3u
/* P_PROTOCOL after-sb policies (DRBD's ASB_*; sbpolicy.h has the same numbers) */
enum wire_asb {
	WIRE_ASB_DISCONNECT,
	WIRE_ASB_DISCARD_YOUNGER_PRI,
	WIRE_ASB_DISCARD_OLDER_PRI,
	WIRE_ASB_DISCARD_ZERO_CHG,
	WIRE_ASB_DISCARD_LEAST_CHG,
	WIRE_ASB_DISCARD_LOCAL,
	WIRE_ASB_DISCARD_REMOTE,
	WIRE_ASB_CONSENSUS,
	WIRE_ASB_DISCARD_SECONDARY,
	WIRE_ASB_CALL_HELPER,
	WIRE_ASB_VIOLENTLY,
};
/* P_PROTOCOL.flags */
#define WIRE_PF_TWO_PRIMARIES   (1u << 0)
#define WIRE_PF_DISCARD_MY_DATA (1u << 1)
#define WIRE_PF_DRY_RUN         (1u << 2)
#define WIRE_PF_ALWAYS_ASBP     (1u << 3)
/* P_SIZES.flags */
#define WIRE_SF_RESIZE_FORCED    (1u << 0)
#define WIRE_SF_RESIZE_NO_RESYNC (1u << 1)
/* P_UUIDS.flags */
#define WIRE_UF_DISCARD_MY_DATA   (1u << 0)
#define WIRE_UF_CRASHED_PRIMARY   (1u << 1)
#define WIRE_UF_INCONSISTENT      (1u << 2)
#define WIRE_UF_SKIP_INITIAL_SYNC (1u << 3)
/* P_STATE.susp and .isp */
#define WIRE_SUSP_USER (1u << 0)
#define WIRE_SUSP_NOD  (1u << 1)
#define WIRE_SUSP_FEN  (1u << 2)
#define WIRE_ISP_USER  (1u << 0)
#define WIRE_ISP_PEER  (1u << 1)
#define WIRE_ISP_AFTR  (1u << 2)
/* dp_flags of P_DATA, P_TRIM, P_WRITE_ZEROES */
#define WIRE_DP_FUA             (1u << 0)
#define WIRE_DP_FLUSH           (1u << 1)
#define WIRE_DP_MAY_SET_IN_SYNC (1u << 2)
#define WIRE_DP_SEND_RECV_ACK   (1u << 3)
#define WIRE_DP_SEND_WRITE_ACK  (1u << 4)
/* P_OV_RESULT (in the seq field) */
#define WIRE_OV_IN_SYNC     0u
#define WIRE_OV_OUT_OF_SYNC 1u

struct wire_hdr {
	uint16_t type;
	uint16_t volume;
	uint32_t len;	/* payload bytes */
	uint32_t flags; /* WIRE_HF_* */
};

/* Strings are NUL-terminated here, NUL-padded on the wire. */
struct wire_hello {
	uint16_t proto_min, proto_max;
	uint8_t stream; /* enum wire_stream */
	uint8_t flags;	/* WIRE_HELLO_* */
	uint64_t features;
	uint64_t conn_id;
	char node[WIRE_NAME_MAX + 1];
	char res[WIRE_NAME_MAX + 1];
};

struct wire_auth_challenge {
	char alg[WIRE_ALG_MAX + 1];
	uint8_t challenge[WIRE_CHALLENGE];
};

struct wire_protocol {
	uint8_t protocol;				     /* WIRE_PROTO_A..C */
	uint8_t after_sb_0pri, after_sb_1pri, after_sb_2pri; /* enum wire_asb */
	uint32_t flags;					     /* WIRE_PF_* */
	char integrity_alg[WIRE_ALG_MAX + 1];
	uint8_t config_digest[WIRE_CONFIG_DIGEST];
};

struct wire_sync_param {
	uint32_t resync_rate, c_plan_ahead, c_delay_target;
	uint32_t c_fill_target, c_max_rate, c_min_rate;
	char verify_alg[WIRE_ALG_MAX + 1];
	char csums_alg[WIRE_ALG_MAX + 1];
};

struct wire_sizes {
	uint64_t d_size, u_size, c_size; /* sectors */
	uint32_t max_req;		 /* bytes */
	uint32_t flags;			 /* WIRE_SF_* */
};

struct wire_uuids {
	uint64_t uuid[4]; /* current, bitmap, history0, history1 (gi.h order) */
	uint64_t weight;
	uint64_t flags; /* WIRE_UF_* */
};

/* state.h's numbers: enum state_role, state_disk, state_conn. */
struct wire_state {
	uint8_t role, peer, disk, pdsk, conn;
	uint8_t susp; /* WIRE_SUSP_* */
	uint8_t isp;  /* WIRE_ISP_* */
};

struct wire_state_chg {
	struct wire_state mask, val;
};

struct wire_state_reply {
	int32_t result; /* SS_SUCCESS or a refusal (enum state_result) */
};

struct wire_sync_uuid {
	uint64_t uuid;
};

struct wire_bitmap_done {
	uint64_t bits, weight;
};

/* P_DATA, P_DATA_REPLY, P_RS_DATA_REPLY: digest and data in wire_pkt. */
struct wire_data {
	uint64_t sector, id;
	uint32_t seq, dp_flags;
};

/* P_TRIM, P_WRITE_ZEROES */
struct wire_zeroes {
	uint64_t sector, id;
	uint32_t seq, dp_flags, size;
};

/* P_BARRIER flags (WIRE_F_BARRIER_FLUSH) */
#define WIRE_BF_FLUSH 0x1u /* a FLUSH waits for this barrier's ack: flush at once */

/* P_BARRIER, P_BARRIER_ACK (set_size only in the ack, flags only in the
 * barrier) */
struct wire_barrier {
	uint32_t barrier, set_size, flags;
};

/* P_OUT_OF_SYNC */
struct wire_oos {
	uint64_t sector;
	uint32_t size;
};

/* Requests; P_CSUM_RS_REQUEST and P_OV_REPLY: digest in wire_pkt. */
struct wire_req {
	uint64_t sector, id;
	uint32_t size;
};

/* Every ack; P_OV_RESULT: seq is WIRE_OV_IN_SYNC or WIRE_OV_OUT_OF_SYNC. */
struct wire_ack {
	uint64_t sector, id;
	uint32_t size, seq;
};

/*
 * A decoded packet. digest and data point into the decoded payload
 * (never copied): the integrity digest or checksum (P_DATA, replies,
 * P_CSUM_RS_REQUEST, P_OV_REPLY) or the HMAC (P_AUTH_RESPONSE); the data
 * of data packets, the whole payload of P_BITMAP and P_COMPRESSED_BITMAP
 * (a bmx.h chunk, BMX_PLAIN and BMX_RLE). For encoding the caller points
 * them at its bytes.
 */
struct wire_pkt {
	uint16_t type;	 /* enum wire_type */
	uint16_t volume; /* or WIRE_VOL_NONE */
	uint32_t hflags; /* WIRE_HF_* */
	const uint8_t *digest;
	uint32_t digest_len;
	const uint8_t *data;
	uint32_t data_len;
	union {
		struct wire_hello hello;
		struct wire_auth_challenge challenge;
		struct wire_protocol protocol;
		struct wire_sync_param sync_param;
		struct wire_sizes sizes;
		struct wire_uuids uuids;
		struct wire_state state;
		struct wire_state_chg state_chg;
		struct wire_state_reply state_reply;
		struct wire_sync_uuid sync_uuid;
		struct wire_bitmap_done bitmap_done;
		struct wire_data data;
		struct wire_zeroes zeroes;
		struct wire_barrier barrier;
		struct wire_oos oos;
		struct wire_req req;
		struct wire_ack ack;
	} u;
};

/* What two P_HELLO packets agree on. */
struct wire_agreed {
	uint16_t proto;
	uint64_t features;
	bool auth;
	bool auth_v2; /* with auth: version 2 of §5.4, else DRBD's */
	uint64_t conn_id;
};

/*
 * Every function that can fail returns a negative errno and writes one
 * line for the log into reason (n bytes, WIRE_REASON_MAX is enough;
 * reason may be NULL).
 */

/* buf: WIRE_HDR_SIZE bytes. -EPROTO (magic, flags), -E2BIG (length). */
int wire_hdr_decode(const void *buf, struct wire_hdr *hdr, char *reason, size_t n);
void wire_hdr_encode(const struct wire_hdr *hdr, void *buf);

/*
 * Before reading the payload: may a packet with this header arrive on
 * stream with the agreed features? 0; -ENOMSG: skip its payload (unknown
 * type or feature not agreed, and WIRE_HF_IGNORABLE); -EPROTO (unknown,
 * wrong stream, feature, volume scope); -EBADMSG (too short); -E2BIG.
 */
int wire_pkt_check(const struct wire_hdr *hdr, enum wire_stream stream, uint64_t features,
		   char *reason, size_t n);

/*
 * Validate and decode hdr's payload (len must be hdr->len). 0, or as
 * wire_pkt_check() but without the stream and feature checks, or
 * -EBADMSG for a bad field. pkt is undefined on failure.
 */
int wire_pkt_decode(const struct wire_hdr *hdr, const void *payload, size_t len,
		    struct wire_pkt *pkt, char *reason, size_t n);

/*
 * Header and payload into buf (cap bytes): the length, -ENOSPC, or
 * -EINVAL for a packet that wire_pkt_decode() would refuse.
 */
int wire_pkt_encode(const struct wire_pkt *pkt, void *buf, size_t cap);
/* The same without the data of P_DATA and the data replies (its length
 * is counted in the header): send it and then pkt->data with writev(). */
int wire_pkt_encode_head(const struct wire_pkt *pkt, void *buf, size_t cap);
/*
 * A block request (P_DATA_REQUEST, P_RS_DATA_REQUEST, P_CSUM_RS_REQUEST,
 * P_OV_REQUEST) names whole sectors, 1 to max bytes, inside a device of
 * size_sect sectors: 0, or -EPROTO.
 */
int wire_req_check(const struct wire_req *q, uint64_t size_sect, uint32_t max);
/* Payload length of pkt as encoded (0 for an unknown type). */
uint32_t wire_pkt_len(const struct wire_pkt *pkt);

/*
 * Agree on version and features from our P_HELLO and the peer's on the
 * same socket. 0; -EPROTONOSUPPORT (no common version); -EACCES (only
 * one side requires authentication); -EALREADY (the peer closes this
 * attempt as a duplicate); -EPROTO (stream, connection id, resource or
 * node names do not fit).
 */
int wire_negotiate(const struct wire_hello *own, const struct wire_hello *peer,
		   struct wire_agreed *agreed, char *reason, size_t n);

/* "P_DATA"; "P_UNKNOWN" for an unknown type. */
const char *wire_type_name(uint16_t type);
/* The stream a type belongs on (0 for either, or unknown). */
int wire_type_stream(uint16_t type);
/* Check the packet table's own consistency (for the unit tests). */
int wire_table_check(char *reason, size_t n);

static inline uint16_t wire_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t wire_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t wire_get64(const uint8_t *p)
{
	return (uint64_t)wire_get32(p) << 32 | wire_get32(p + 4);
}

static inline void wire_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void wire_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void wire_put64(uint8_t *p, uint64_t v)
{
	wire_put32(p, (uint32_t)(v >> 32));
	wire_put32(p + 4, (uint32_t)v);
}

#endif

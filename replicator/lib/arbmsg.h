/*
 * arbmsg: the codec of the CPG arbiter's messages (doc/arbiter.md §3-§5):
 * the 32-byte header, one decoded struct per message type, validation of
 * every length and field before it is read, encoding, and the version
 * rules. Pure functions: no I/O, no state.
 *
 * Everything on the wire is little-endian; the codec converts byte by
 * byte, whatever the host's order.
 *
 * Not done here, because it needs state: the check that seq is larger
 * than the last one of the sender's incarnation (§3), and logging "once
 * per sender" (§4.2, §5). The caller does both.
 */
#ifndef TANDEM_ARBMSG_H
#define TANDEM_ARBMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARBMSG_MAGIC    0x42524154u /* the bytes "TARB" */
#define ARBMSG_MAJOR    1u
#define ARBMSG_MINOR    0u
#define ARBMSG_HDR_SIZE 32u
#define ARBMSG_MAX_LEN  4096u /* a whole message, header included */
#define ARBMSG_NAME_MAX 128u  /* str[128]: resource and node names */
#define ARBMSG_WHY_MAX  144u  /* str[144]: SB_VERDICT.reason */
#define ARBMSG_ERR_MAX  160u  /* enough for any err line of arbmsg_decode() */

enum arbmsg_type {
	ARBMSG_HELLO = 1,
	ARBMSG_FACTS,
	ARBMSG_GONE,
	ARBMSG_OUTDATE_REQ,
	ARBMSG_OUTDATE_ACK,
	ARBMSG_FENCED,
	ARBMSG_SB_VERDICT,
	ARBMSG_TYPE_COUNT, /* one past the last type */
};

/* Body sizes of minor 0 (§4). */
#define ARBMSG_HELLO_SIZE       16u
#define ARBMSG_FACTS_SIZE       304u
#define ARBMSG_GONE_SIZE        128u
#define ARBMSG_OUTDATE_REQ_SIZE 280u
#define ARBMSG_OUTDATE_ACK_SIZE 152u
#define ARBMSG_FENCED_SIZE      144u
#define ARBMSG_SB_VERDICT_SIZE  312u

/* HELLO.flags */
#define ARBMSG_HELLO_QUORATE (1u << 0)
/* FACTS.susp */
#define ARBMSG_SUSP_USER   (1u << 0)
#define ARBMSG_SUSP_NOD    (1u << 1)
#define ARBMSG_SUSP_FEN    (1u << 2)
#define ARBMSG_SUSP_QUORUM (1u << 3)
/* FENCED.how */
#define ARBMSG_HOW_STONITH    1u /* the fencer confirmed; resource is empty */
#define ARBMSG_HOW_CONSTRAINT 2u /* a resource constraint was placed */

/*
 * Strings are NUL-terminated here, NUL-padded on the wire. role, disk,
 * pdsk and conn are the numbers of state.h (enum state_role, state_disk,
 * state_conn).
 */
struct arbmsg_hello {
	uint64_t ring;	   /* the ring sequence the sender was in */
	uint32_t token_ms; /* the sender's totem.token */
	uint32_t flags;	   /* ARBMSG_HELLO_* */
};

struct arbmsg_facts {
	char resource[ARBMSG_NAME_MAX + 1]; /* non-empty */
	char peer[ARBMSG_NAME_MAX + 1];	    /* non-empty: the peer's on HOST name */
	uint8_t role, disk, conn, pdsk;
	uint8_t susp;	      /* ARBMSG_SUSP_* */
	uint8_t fencing;      /* 0 dont-care, 1 resource-only, 2 resource-and-stonith */
	uint8_t quorum;	      /* 0 off, 1 majority */
	uint8_t on_no_quorum; /* 0 suspend-io, 1 io-error */
	uint64_t current, bitmap;
	/* primary_since (§2): the ring sequence and the wall clock (s); (0, 0) while Secondary */
	uint64_t since_ring;
	uint32_t since_s;
	uint32_t up; /* 0 or 1 */
	uint64_t changes;
};

struct arbmsg_gone {
	char resource[ARBMSG_NAME_MAX + 1];
};

struct arbmsg_outdate_req {
	uint64_t req;
	char resource[ARBMSG_NAME_MAX + 1];
	uint32_t target; /* node id */
	uint32_t deadline_ms;
	uint64_t current;
	char requester[ARBMSG_NAME_MAX + 1];
};

struct arbmsg_outdate_ack {
	uint64_t req;
	uint32_t requester; /* node id */
	uint8_t result;	    /* fence-peer exit code: 3, 4 or 6 */
	uint8_t disk;
	char resource[ARBMSG_NAME_MAX + 1];
	uint64_t current;
};

struct arbmsg_fenced {
	uint32_t node;
	uint8_t how;   /* ARBMSG_HOW_* */
	uint64_t when; /* ms since the epoch, for the log */
	char resource[ARBMSG_NAME_MAX + 1];
};

struct arbmsg_sb_verdict {
	uint32_t decider; /* node id: the sender (= the header's nodeid) */
	uint64_t id;	  /* the header's seq */
	char resource[ARBMSG_NAME_MAX + 1];
	uint32_t loser;	   /* node id, 0: disconnect */
	uint8_t policy;	   /* the after-sb option that decided (not checked) */
	uint8_t primaries; /* 0, 1 or 2 */
	uint64_t uuid_a, uuid_b;
	char reason[ARBMSG_WHY_MAX + 1];
};

struct arbmsg {
	uint16_t type; /* enum arbmsg_type */
	uint8_t major, minor;
	uint32_t nodeid;
	uint64_t incarnation;
	uint64_t seq;
	/*
	 * Set by the decoder: a state enum above the values this version
	 * knows was taken as Unknown, DUnknown or StandAlone (§4.2); err
	 * then names the first such field. Log it once per sender.
	 */
	bool clamped;
	union {
		struct arbmsg_hello hello;
		struct arbmsg_facts facts;
		struct arbmsg_gone gone;
		struct arbmsg_outdate_req outdate_req;
		struct arbmsg_outdate_ack outdate_ack;
		struct arbmsg_fenced fenced;
		struct arbmsg_sb_verdict sb_verdict;
	} u;
};

/* "HELLO", ..., "SB_VERDICT"; "UNKNOWN" for any other type. */
const char *arbmsg_type_name(uint16_t type);

/* The body size of type for minor 0, 0 for an unknown type. */
size_t arbmsg_body_size(uint16_t type);

/*
 * Encode m into buf (buflen bytes) and set *len to the bytes written:
 * the header and the body of ARBMSG_MAJOR.ARBMSG_MINOR (m->major, m->minor
 * and m->clamped are ignored). The encoder decodes its own output, so it
 * never writes what a receiver would refuse. 0; -ENOSPC (buflen too
 * small); -EINVAL (unknown type, a string too long, empty where it must
 * not be or not printable ASCII without space, a field out of its range,
 * a state enum beyond state.h's, seq 0).
 */
int arbmsg_encode(const struct arbmsg *m, void *buf, size_t buflen, size_t *len);

/*
 * Validate and decode the message CPG delivered (len bytes at buf) from
 * node from_nodeid; nothing outside buf[0..len) is read, and no field
 * before its length is known to be there. Returns:
 *   0                 decoded into m (m->clamped: see above)
 *   -EPROTONOSUPPORT  another major version: drop, log once per sender,
 *                     treat the sender's facts as unknown (§5); m holds
 *                     major and minor
 *   -ENOMSG           a type this version does not know, from a newer
 *                     minor: ignore it (log once); m holds the header
 *   -EBADMSG          malformed: drop and log with the sender
 * On every failure err (errlen bytes, ARBMSG_ERR_MAX is enough; may be
 * NULL) gets one line naming the field, e.g. "FACTS: resource: byte 0x20
 * at 3 is not printable". A newer minor's bytes after the known body
 * are ignored. seq is only checked to be nonzero: its order is the
 * caller's.
 */
int arbmsg_decode(const void *buf, size_t len, uint32_t from_nodeid, struct arbmsg *m, char *err,
		  size_t errlen);

#endif

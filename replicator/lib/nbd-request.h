/*
 * nbd-request: the transmission phase of the NBD front end as pure
 * functions (doc/nbd-frontend.md, "Transmission"): decode a 28-byte
 * request header, validate it against the export before acting on it,
 * encode the 16-byte simple reply and the structured reply chunks.
 */
#ifndef TANDEM_NBD_REQUEST_H
#define TANDEM_NBD_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "nbd-proto.h"

/*
 * Largest READ/WRITE when the export advertises no maximum block size,
 * and the largest payload of a refused WRITE that is read and discarded
 * (beyond it the connection is closed): 32 MiB, the spec's limit below
 * which a length "SHOULD NOT be considered a denial of service attack".
 */
#define NBD_REQUEST_MAX_PAYLOAD (32u << 20)

/* A request header in CPU order. */
struct nbd_request {
	uint16_t flags;  /* NBD_CMD_FLAG_* */
	uint16_t type;   /* NBD_CMD_* */
	uint64_t cookie; /* the client's handle, echoed in the reply */
	uint64_t offset;
	uint32_t length;
};

/* What a request is checked against: the export as the client saw it,
 * and what the handshake negotiated for it. */
struct nbd_export_limits {
	uint64_t size;      /* bytes */
	uint16_t eflags;    /* transmission flags as sent (NBD_FLAG_*) */
	uint32_t min_block; /* 0 or 1: no alignment; else offsets and lengths are multiples */
	uint32_t max_block; /* READ/WRITE maximum; 0: NBD_REQUEST_MAX_PAYLOAD */
	bool structured;    /* NBD_OPT_STRUCTURED_REPLY was acknowledged */
	uint32_t meta_alloc; /* context id of base:allocation if the client selected
			      * it for this export (NBD_OPT_SET_META_CONTEXT); 0: none */
};

/* One block status descriptor in CPU order. */
struct nbd_extent {
	uint32_t length; /* bytes, nonzero */
	uint32_t flags;  /* NBD_STATE_* */
};

/*
 * Most descriptors in one NBD_REPLY_TYPE_BLOCK_STATUS chunk (the spec
 * asks for at most 2^20): a longer answer is cut, and the client asks
 * again from where it ends.
 */
#define NBD_REQUEST_MAX_EXTENTS 16384u

/* Longest message of an NBD_REPLY_TYPE_ERROR chunk that the server sends. */
#define NBD_REQUEST_MSG_MAX 160u

/* buf: NBD_REQUEST_SIZE bytes. 0, or -EPROTO on a bad magic (disconnect). */
int nbd_request_decode(const void *buf, struct nbd_request *req);
/* The inverse, for clients and tests: NBD_REQUEST_SIZE bytes into buf. */
void nbd_request_encode(void *buf, const struct nbd_request *req);

/*
 * 0 if the daemon may carry out req on the export described by lim, else
 * the NBD error to reply with (NBD_EINVAL, NBD_EPERM, NBD_ENOSPC), and
 * *why (if why is not NULL) a constant string for the log. NBD_CMD_DISC
 * is validated too, but never answered.
 */
uint32_t nbd_request_validate(const struct nbd_request *req, const struct nbd_export_limits *lim,
			      const char **why);

/* Bytes of payload that follow the header on the wire (WRITE: length). */
uint32_t nbd_request_payload(const struct nbd_request *req);
/*
 * After a refused request: may its payload be read and discarded (true),
 * or must the connection be closed (payload above NBD_REQUEST_MAX_PAYLOAD)?
 */
bool nbd_request_drainable(const struct nbd_request *req);

/* The simple reply: NBD_REPLY_SIZE bytes into buf. */
void nbd_request_encode_reply(void *buf, uint32_t error, uint64_t cookie);

/*
 * Structured reply chunks (only after NBD_OPT_STRUCTURED_REPLY). Each
 * writes the chunk's fixed part into buf and returns its size; the
 * variable part (data, message) is sent right after it.
 *
 * A READ's data as one final NBD_REPLY_TYPE_OFFSET_DATA chunk: 28 bytes,
 * then len bytes of data (len <= 2^32 - 9).
 */
size_t nbd_request_encode_read_chunk(void *buf, uint64_t cookie, uint64_t offset, uint32_t len);
/*
 * A final NBD_REPLY_TYPE_ERROR chunk for a nonzero error, with a message
 * of msglen bytes (at most NBD_REQUEST_MSG_MAX, no NUL) that follows: 26
 * bytes.
 */
size_t nbd_request_encode_error_chunk(void *buf, uint32_t error, uint64_t cookie, size_t msglen);
/*
 * A final NBD_REPLY_TYPE_BLOCK_STATUS chunk of context id with n
 * descriptors (1 <= n <= NBD_REQUEST_MAX_EXTENTS) that follow: 24 bytes.
 */
size_t nbd_request_encode_block_status_chunk(void *buf, uint64_t cookie, uint32_t id, uint32_t n);
/* The n descriptors of that chunk: NBD_EXTENT_SIZE * n bytes into buf. */
size_t nbd_request_encode_extents(void *buf, const struct nbd_extent *e, uint32_t n);

#endif

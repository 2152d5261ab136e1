/*
 * nbd-proto: wire constants of the NBD protocol (NetworkBlockDevice/nbd
 * doc/proto.md), names for logs, and the one mapping of internal errno
 * values to NBD wire errors (doc/nbd-frontend.md).
 *
 * Everything on the wire is big-endian; the get/put helpers below are the
 * only byte-order conversions of the NBD modules.
 */
#ifndef TANDEM_NBD_PROTO_H
#define TANDEM_NBD_PROTO_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Handshake magics. */
#define NBD_MAGIC            0x4e42444d41474943ULL /* "NBDMAGIC" */
#define NBD_OPTS_MAGIC       0x49484156454f5054ULL /* "IHAVEOPT" */
#define NBD_REP_MAGIC        0x0003e889045565a9ULL /* option replies */
/* Transmission magics. */
#define NBD_REQUEST_MAGIC    0x25609513u
#define NBD_SIMPLE_REPLY_MAGIC 0x67446698u
#define NBD_STRUCTURED_REPLY_MAGIC 0x668e33efu

/* Sizes of the fixed parts on the wire. */
#define NBD_OPT_HDR_SIZE     16u /* magic, option, length */
#define NBD_REP_HDR_SIZE     20u /* magic, option, reply type, length */
#define NBD_REQUEST_SIZE     28u
#define NBD_REPLY_SIZE       16u
#define NBD_CHUNK_HDR_SIZE   20u /* structured reply chunk: magic, flags, type, cookie, length */
#define NBD_EXPORT_NAME_PAD  124u /* zeroes after NBD_OPT_EXPORT_NAME */
/* Longest string (export name, description, message) the spec allows. */
#define NBD_MAX_STRING       4096u

/* Handshake flags (server, 16 bits). */
#define NBD_FLAG_FIXED_NEWSTYLE   (1u << 0)
#define NBD_FLAG_NO_ZEROES        (1u << 1)
/* Client flags (32 bits). */
#define NBD_FLAG_C_FIXED_NEWSTYLE (1u << 0)
#define NBD_FLAG_C_NO_ZEROES      (1u << 1)

/* Transmission flags (16 bits). */
#define NBD_FLAG_HAS_FLAGS         (1u << 0)
#define NBD_FLAG_READ_ONLY         (1u << 1)
#define NBD_FLAG_SEND_FLUSH        (1u << 2)
#define NBD_FLAG_SEND_FUA          (1u << 3)
#define NBD_FLAG_ROTATIONAL        (1u << 4)
#define NBD_FLAG_SEND_TRIM         (1u << 5)
#define NBD_FLAG_SEND_WRITE_ZEROES (1u << 6)
#define NBD_FLAG_SEND_DF           (1u << 7)
#define NBD_FLAG_CAN_MULTI_CONN    (1u << 8)
#define NBD_FLAG_SEND_RESIZE       (1u << 9)
#define NBD_FLAG_SEND_CACHE        (1u << 10)
#define NBD_FLAG_SEND_FAST_ZERO    (1u << 11)
#define NBD_FLAG_BLOCK_STAT_PAYLOAD (1u << 12)

/* Options. */
#define NBD_OPT_EXPORT_NAME       1u
#define NBD_OPT_ABORT             2u
#define NBD_OPT_LIST              3u
#define NBD_OPT_PEEK_EXPORT       4u
#define NBD_OPT_STARTTLS          5u
#define NBD_OPT_INFO              6u
#define NBD_OPT_GO                7u
#define NBD_OPT_STRUCTURED_REPLY  8u
#define NBD_OPT_LIST_META_CONTEXT 9u
#define NBD_OPT_SET_META_CONTEXT  10u
#define NBD_OPT_EXTENDED_HEADERS  11u

/* Option reply types; errors have bit 31 set. */
#define NBD_REP_ACK               1u
#define NBD_REP_SERVER            2u
#define NBD_REP_INFO              3u
#define NBD_REP_META_CONTEXT      4u
#define NBD_REP_FLAG_ERROR        (1u << 31)
#define NBD_REP_ERR_UNSUP         (NBD_REP_FLAG_ERROR | 1u)
#define NBD_REP_ERR_POLICY        (NBD_REP_FLAG_ERROR | 2u)
#define NBD_REP_ERR_INVALID       (NBD_REP_FLAG_ERROR | 3u)
#define NBD_REP_ERR_PLATFORM      (NBD_REP_FLAG_ERROR | 4u)
#define NBD_REP_ERR_TLS_REQD      (NBD_REP_FLAG_ERROR | 5u)
#define NBD_REP_ERR_UNKNOWN       (NBD_REP_FLAG_ERROR | 6u)
#define NBD_REP_ERR_SHUTDOWN      (NBD_REP_FLAG_ERROR | 7u)
#define NBD_REP_ERR_BLOCK_SIZE_REQD (NBD_REP_FLAG_ERROR | 8u)
#define NBD_REP_ERR_TOO_BIG       (NBD_REP_FLAG_ERROR | 9u)
#define NBD_REP_ERR_EXT_HEADER_REQD (NBD_REP_FLAG_ERROR | 10u)

/* Information types of NBD_REP_INFO (and requests of INFO/GO). */
#define NBD_INFO_EXPORT           0u
#define NBD_INFO_NAME             1u
#define NBD_INFO_DESCRIPTION      2u
#define NBD_INFO_BLOCK_SIZE       3u

/* Commands. */
#define NBD_CMD_READ              0u
#define NBD_CMD_WRITE             1u
#define NBD_CMD_DISC              2u
#define NBD_CMD_FLUSH             3u
#define NBD_CMD_TRIM              4u
#define NBD_CMD_CACHE             5u
#define NBD_CMD_WRITE_ZEROES      6u
#define NBD_CMD_BLOCK_STATUS      7u
#define NBD_CMD_RESIZE            8u

/* Command flags (16 bits). */
#define NBD_CMD_FLAG_FUA          (1u << 0)
#define NBD_CMD_FLAG_NO_HOLE      (1u << 1)
#define NBD_CMD_FLAG_DF           (1u << 2)
#define NBD_CMD_FLAG_REQ_ONE      (1u << 3)
#define NBD_CMD_FLAG_FAST_ZERO    (1u << 4)
#define NBD_CMD_FLAG_PAYLOAD_LEN  (1u << 5)

/* Structured reply chunks: flags and types; error types have bit 15 set. */
#define NBD_REPLY_FLAG_DONE       (1u << 0)
#define NBD_REPLY_TYPE_NONE       0u
#define NBD_REPLY_TYPE_OFFSET_DATA 1u
#define NBD_REPLY_TYPE_OFFSET_HOLE 2u
#define NBD_REPLY_TYPE_BLOCK_STATUS 5u
#define NBD_REPLY_TYPE_ERROR      ((1u << 15) | 1u)
#define NBD_REPLY_TYPE_ERROR_OFFSET ((1u << 15) | 2u)

/* Block status: the one metadata context served, and its flags. */
#define NBD_META_BASE_ALLOCATION  "base:allocation"
#define NBD_STATE_HOLE            (1u << 0)
#define NBD_STATE_ZERO            (1u << 1)
#define NBD_EXTENT_SIZE           8u /* a descriptor: length, status flags */

/* Wire error values of the reply's error field. */
#define NBD_SUCCESS               0u
#define NBD_EPERM                 1u
#define NBD_EIO                   5u
#define NBD_ENOMEM                12u
#define NBD_EINVAL                22u
#define NBD_ENOSPC                28u
#define NBD_EOVERFLOW             75u
#define NBD_ENOTSUP               95u
#define NBD_ESHUTDOWN             108u

/*
 * Names for logs: "NBD_OPT_GO", "NBD_REP_ERR_UNKNOWN", ...; "unknown" for
 * values the protocol does not define (log the number next to it).
 */
const char *nbd_proto_opt_name(uint32_t opt);
const char *nbd_proto_rep_name(uint32_t rep);
const char *nbd_proto_info_name(uint16_t info);
const char *nbd_proto_cmd_name(uint16_t cmd);
const char *nbd_proto_err_name(uint32_t err);
/*
 * Command or transmission flags as "FUA|NO_HOLE" (unknown bits as hex,
 * "0" for none) into buf; returns buf. When len is too short, the names
 * that do not fit are left out (never half a name).
 */
char *nbd_proto_cmd_flags_str(uint16_t flags, char *buf, size_t len);
char *nbd_proto_eflags_str(uint16_t flags, char *buf, size_t len);

/*
 * The wire error for an internal errno value (negative, as returned by
 * the I/O paths; a positive value is taken as its negation): the single
 * mapping of doc/nbd-frontend.md, "Error mapping".
 */
uint32_t nbd_proto_errno(int err);

/* Big-endian loads and stores at any alignment. */
static inline uint16_t nbd_proto_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

static inline uint32_t nbd_proto_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline uint64_t nbd_proto_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static inline void nbd_proto_put16(uint8_t *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void nbd_proto_put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void nbd_proto_put64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

#endif

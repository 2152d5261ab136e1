/*
 * nbd-request: decode, validate and answer transmission-phase requests.
 *
 * One table row per supported command says what the command needs
 * (its advertising flag), which command flags it takes and how its
 * offset and length are checked; nbd_request_validate() applies the
 * rows in the order of doc/nbd-frontend.md, "Transmission".
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "nbd-request.h"

/* How a command's offset and length are checked. */
enum nbd_request_range {
	RANGE_NONE,    /* offset and length must be 0 (FLUSH, DISC) */
	RANGE_PAYLOAD, /* 1 .. max, in the export (READ, WRITE, CACHE) */
	RANGE_ANY,     /* >= 1, in the export, no maximum (TRIM, WRITE_ZEROES, BLOCK_STATUS) */
};

struct nbd_request_rule {
	uint16_t type;
	uint16_t needs;     /* transmission flag that advertises it, or 0 */
	bool meta;          /* needs a metadata context (BLOCK_STATUS) */
	uint16_t flags;     /* command flags it takes besides FUA */
	bool writes;        /* refused on a read-only export */
	enum nbd_request_range range;
	uint32_t beyond;    /* error for a range past the end (proto.md) */
};

static const struct nbd_request_rule rules[] = {
	{NBD_CMD_READ, 0, false, NBD_CMD_FLAG_DF, false, RANGE_PAYLOAD, NBD_EINVAL},
	{NBD_CMD_WRITE, 0, false, 0, true, RANGE_PAYLOAD, NBD_ENOSPC},
	{NBD_CMD_DISC, 0, false, 0, false, RANGE_NONE, NBD_EINVAL},
	{NBD_CMD_FLUSH, NBD_FLAG_SEND_FLUSH, false, 0, false, RANGE_NONE, NBD_EINVAL},
	{NBD_CMD_TRIM, NBD_FLAG_SEND_TRIM, false, 0, true, RANGE_ANY, NBD_EINVAL},
	/* held to the maximum like a READ: it reads as much into the cache */
	{NBD_CMD_CACHE, NBD_FLAG_SEND_CACHE, false, 0, false, RANGE_PAYLOAD, NBD_EINVAL},
	{NBD_CMD_WRITE_ZEROES, NBD_FLAG_SEND_WRITE_ZEROES, false,
	 NBD_CMD_FLAG_NO_HOLE | NBD_CMD_FLAG_FAST_ZERO, true, RANGE_ANY, NBD_ENOSPC},
	{NBD_CMD_BLOCK_STATUS, 0, true, NBD_CMD_FLAG_REQ_ONE, false, RANGE_ANY, NBD_EINVAL},
};

/* Command flags that may only be used when a transmission flag was sent. */
static const struct {
	uint16_t flag;
	uint16_t needs;
} flag_needs[] = {
	{NBD_CMD_FLAG_FUA, NBD_FLAG_SEND_FUA},
	{NBD_CMD_FLAG_FAST_ZERO, NBD_FLAG_SEND_FAST_ZERO},
	{NBD_CMD_FLAG_DF, NBD_FLAG_SEND_DF}, /* only with structured replies */
};

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

int nbd_request_decode(const void *buf, struct nbd_request *req)
{
	const uint8_t *p = buf;

	if (nbd_proto_get32(p) != NBD_REQUEST_MAGIC)
		return -EPROTO;
	req->flags = nbd_proto_get16(p + 4);
	req->type = nbd_proto_get16(p + 6);
	req->cookie = nbd_proto_get64(p + 8);
	req->offset = nbd_proto_get64(p + 16);
	req->length = nbd_proto_get32(p + 24);
	return 0;
}

void nbd_request_encode(void *buf, const struct nbd_request *req)
{
	uint8_t *p = buf;

	nbd_proto_put32(p, NBD_REQUEST_MAGIC);
	nbd_proto_put16(p + 4, req->flags);
	nbd_proto_put16(p + 6, req->type);
	nbd_proto_put64(p + 8, req->cookie);
	nbd_proto_put64(p + 16, req->offset);
	nbd_proto_put32(p + 24, req->length);
}

void nbd_request_encode_reply(void *buf, uint32_t error, uint64_t cookie)
{
	uint8_t *p = buf;

	nbd_proto_put32(p, NBD_SIMPLE_REPLY_MAGIC);
	nbd_proto_put32(p + 4, error);
	nbd_proto_put64(p + 8, cookie);
}

static void put_chunk(uint8_t *p, uint16_t flags, uint16_t type, uint64_t cookie,
		      uint32_t length)
{
	nbd_proto_put32(p, NBD_STRUCTURED_REPLY_MAGIC);
	nbd_proto_put16(p + 4, flags);
	nbd_proto_put16(p + 6, type);
	nbd_proto_put64(p + 8, cookie);
	nbd_proto_put32(p + 16, length);
}

size_t nbd_request_encode_read_chunk(void *buf, uint64_t cookie, uint64_t offset, uint32_t len)
{
	uint8_t *p = buf;

	put_chunk(p, NBD_REPLY_FLAG_DONE, NBD_REPLY_TYPE_OFFSET_DATA, cookie, 8 + len);
	nbd_proto_put64(p + NBD_CHUNK_HDR_SIZE, offset);
	return NBD_CHUNK_HDR_SIZE + 8;
}

size_t nbd_request_encode_error_chunk(void *buf, uint32_t error, uint64_t cookie, size_t msglen)
{
	uint8_t *p = buf;

	put_chunk(p, NBD_REPLY_FLAG_DONE, NBD_REPLY_TYPE_ERROR, cookie, 6 + (uint32_t)msglen);
	nbd_proto_put32(p + NBD_CHUNK_HDR_SIZE, error);
	nbd_proto_put16(p + NBD_CHUNK_HDR_SIZE + 4, (uint16_t)msglen);
	return NBD_CHUNK_HDR_SIZE + 6;
}

size_t nbd_request_encode_block_status_chunk(void *buf, uint64_t cookie, uint32_t id, uint32_t n)
{
	uint8_t *p = buf;

	put_chunk(p, NBD_REPLY_FLAG_DONE, NBD_REPLY_TYPE_BLOCK_STATUS, cookie,
		  4 + NBD_EXTENT_SIZE * n);
	nbd_proto_put32(p + NBD_CHUNK_HDR_SIZE, id);
	return NBD_CHUNK_HDR_SIZE + 4;
}

size_t nbd_request_encode_extents(void *buf, const struct nbd_extent *e, uint32_t n)
{
	uint8_t *p = buf;
	uint32_t i;

	for (i = 0; i < n; i++) {
		nbd_proto_put32(p + NBD_EXTENT_SIZE * i, e[i].length);
		nbd_proto_put32(p + NBD_EXTENT_SIZE * i + 4, e[i].flags);
	}
	return (size_t)NBD_EXTENT_SIZE * n;
}

uint32_t nbd_request_payload(const struct nbd_request *req)
{
	return req->type == NBD_CMD_WRITE ? req->length : 0;
}

bool nbd_request_drainable(const struct nbd_request *req)
{
	return nbd_request_payload(req) <= NBD_REQUEST_MAX_PAYLOAD;
}

static const struct nbd_request_rule *find_rule(uint16_t type)
{
	size_t i;

	for (i = 0; i < N_ELEMS(rules); i++)
		if (rules[i].type == type)
			return &rules[i];
	return NULL;
}

static uint32_t refuse(const char **why, const char *msg, uint32_t error)
{
	if (why)
		*why = msg;
	return error;
}

/* Check 2: every flag known, allowed for the command and advertised. */
static uint32_t check_flags(const struct nbd_request_rule *r, uint16_t flags, uint16_t eflags,
			    const char **why)
{
	size_t i;

	if (flags & ~(uint16_t)(NBD_CMD_FLAG_FUA | r->flags))
		return refuse(why, "command flag not valid for this command", NBD_EINVAL);
	for (i = 0; i < N_ELEMS(flag_needs); i++)
		if ((flags & flag_needs[i].flag) && !(eflags & flag_needs[i].needs))
			return refuse(why, "command flag not advertised for this export",
				      NBD_EINVAL);
	return 0;
}

/* Checks 5 to 8 for commands with a range. */
static uint32_t check_range(const struct nbd_request_rule *r, const struct nbd_request *req,
			    const struct nbd_export_limits *lim, const char **why)
{
	uint64_t max = UINT32_MAX;

	if (req->length == 0)
		return refuse(why, "length is 0", NBD_EINVAL);
	/*
	 * Only commands with a payload (and CACHE, which reads as much) are
	 * held to the maximum block size. The spec also holds WRITE_ZEROES (without FAST_ZERO) to it, but
	 * clients send larger ones (nbdcopy 1.14 zeroes 55 MiB at once
	 * against a 32 MiB maximum): the daemon splits them instead.
	 */
	if (r->range == RANGE_PAYLOAD)
		max = lim->max_block ? lim->max_block : NBD_REQUEST_MAX_PAYLOAD;
	if (req->length > max)
		return refuse(why, "length is above the maximum block size", NBD_EINVAL);
	/* offset + length > size, written so that it cannot wrap */
	if (req->offset > lim->size || req->length > lim->size - req->offset)
		return refuse(why, "offset + length is beyond the end of the export", r->beyond);
	if (lim->min_block > 1 &&
	    (req->offset % lim->min_block != 0 || req->length % lim->min_block != 0))
		return refuse(why, "offset or length is not a multiple of the minimum block size",
			      NBD_EINVAL);
	return 0;
}

uint32_t nbd_request_validate(const struct nbd_request *req, const struct nbd_export_limits *lim,
			      const char **why)
{
	const struct nbd_request_rule *r = find_rule(req->type);
	uint32_t error;

	if (why)
		*why = NULL;
	if (!r)
		return refuse(why, "unknown or unsupported command", NBD_EINVAL);
	if (r->needs && !(lim->eflags & r->needs))
		return refuse(why, "command not advertised for this export", NBD_EINVAL);
	if (r->meta && (!lim->structured || !lim->meta_alloc))
		return refuse(why, "no metadata context was selected (NBD_OPT_SET_META_CONTEXT)",
			      NBD_EINVAL);
	error = check_flags(r, req->flags, lim->eflags, why);
	if (error)
		return error;
	if (r->writes && (lim->eflags & NBD_FLAG_READ_ONLY))
		return refuse(why, "write to a read-only export", NBD_EPERM);
	if (r->range == RANGE_NONE) {
		if (req->offset != 0 || req->length != 0)
			return refuse(why, "offset and length must be 0", NBD_EINVAL);
		return 0;
	}
	return check_range(r, req, lim, why);
}

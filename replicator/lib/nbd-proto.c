/*
 * nbd-proto: names of the NBD wire constants, and the errno mapping.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "nbd-proto.h"

struct nbd_proto_name {
	uint32_t value;
	const char *name;
};

#define NAME(v) {v, #v}

static const struct nbd_proto_name opt_names[] = {
	NAME(NBD_OPT_EXPORT_NAME),
	NAME(NBD_OPT_ABORT),
	NAME(NBD_OPT_LIST),
	NAME(NBD_OPT_PEEK_EXPORT),
	NAME(NBD_OPT_STARTTLS),
	NAME(NBD_OPT_INFO),
	NAME(NBD_OPT_GO),
	NAME(NBD_OPT_STRUCTURED_REPLY),
	NAME(NBD_OPT_LIST_META_CONTEXT),
	NAME(NBD_OPT_SET_META_CONTEXT),
	NAME(NBD_OPT_EXTENDED_HEADERS),
	{0, NULL},
};

static const struct nbd_proto_name rep_names[] = {
	NAME(NBD_REP_ACK),
	NAME(NBD_REP_SERVER),
	NAME(NBD_REP_INFO),
	NAME(NBD_REP_META_CONTEXT),
	NAME(NBD_REP_ERR_UNSUP),
	NAME(NBD_REP_ERR_POLICY),
	NAME(NBD_REP_ERR_INVALID),
	NAME(NBD_REP_ERR_PLATFORM),
	NAME(NBD_REP_ERR_TLS_REQD),
	NAME(NBD_REP_ERR_UNKNOWN),
	NAME(NBD_REP_ERR_SHUTDOWN),
	NAME(NBD_REP_ERR_BLOCK_SIZE_REQD),
	NAME(NBD_REP_ERR_TOO_BIG),
	NAME(NBD_REP_ERR_EXT_HEADER_REQD),
	{0, NULL},
};

static const struct nbd_proto_name info_names[] = {
	NAME(NBD_INFO_EXPORT),
	NAME(NBD_INFO_NAME),
	NAME(NBD_INFO_DESCRIPTION),
	NAME(NBD_INFO_BLOCK_SIZE),
	{0, NULL},
};

static const struct nbd_proto_name cmd_names[] = {
	NAME(NBD_CMD_READ),
	NAME(NBD_CMD_WRITE),
	NAME(NBD_CMD_DISC),
	NAME(NBD_CMD_FLUSH),
	NAME(NBD_CMD_TRIM),
	NAME(NBD_CMD_CACHE),
	NAME(NBD_CMD_WRITE_ZEROES),
	NAME(NBD_CMD_BLOCK_STATUS),
	NAME(NBD_CMD_RESIZE),
	{0, NULL},
};

static const struct nbd_proto_name err_names[] = {
	NAME(NBD_SUCCESS),
	NAME(NBD_EPERM),
	NAME(NBD_EIO),
	NAME(NBD_ENOMEM),
	NAME(NBD_EINVAL),
	NAME(NBD_ENOSPC),
	NAME(NBD_EOVERFLOW),
	NAME(NBD_ENOTSUP),
	NAME(NBD_ESHUTDOWN),
	{0, NULL},
};

/* Bit names of the flag fields, without their common prefix. */
static const struct nbd_proto_name cmd_flag_names[] = {
	{NBD_CMD_FLAG_FUA, "FUA"},
	{NBD_CMD_FLAG_NO_HOLE, "NO_HOLE"},
	{NBD_CMD_FLAG_DF, "DF"},
	{NBD_CMD_FLAG_REQ_ONE, "REQ_ONE"},
	{NBD_CMD_FLAG_FAST_ZERO, "FAST_ZERO"},
	{NBD_CMD_FLAG_PAYLOAD_LEN, "PAYLOAD_LEN"},
	{0, NULL},
};

static const struct nbd_proto_name eflag_names[] = {
	{NBD_FLAG_HAS_FLAGS, "HAS_FLAGS"},
	{NBD_FLAG_READ_ONLY, "READ_ONLY"},
	{NBD_FLAG_SEND_FLUSH, "SEND_FLUSH"},
	{NBD_FLAG_SEND_FUA, "SEND_FUA"},
	{NBD_FLAG_ROTATIONAL, "ROTATIONAL"},
	{NBD_FLAG_SEND_TRIM, "SEND_TRIM"},
	{NBD_FLAG_SEND_WRITE_ZEROES, "SEND_WRITE_ZEROES"},
	{NBD_FLAG_SEND_DF, "SEND_DF"},
	{NBD_FLAG_CAN_MULTI_CONN, "CAN_MULTI_CONN"},
	{NBD_FLAG_SEND_RESIZE, "SEND_RESIZE"},
	{NBD_FLAG_SEND_CACHE, "SEND_CACHE"},
	{NBD_FLAG_SEND_FAST_ZERO, "SEND_FAST_ZERO"},
	{NBD_FLAG_BLOCK_STAT_PAYLOAD, "BLOCK_STAT_PAYLOAD"},
	{0, NULL},
};

static const char *lookup(const struct nbd_proto_name *t, uint32_t value)
{
	for (; t->name; t++)
		if (t->value == value)
			return t->name;
	return "unknown";
}

const char *nbd_proto_opt_name(uint32_t opt)
{
	return lookup(opt_names, opt);
}

const char *nbd_proto_rep_name(uint32_t rep)
{
	return lookup(rep_names, rep);
}

const char *nbd_proto_info_name(uint16_t info)
{
	return lookup(info_names, info);
}

const char *nbd_proto_cmd_name(uint16_t cmd)
{
	return lookup(cmd_names, cmd);
}

const char *nbd_proto_err_name(uint32_t err)
{
	return lookup(err_names, err);
}

static char *flags_str(const struct nbd_proto_name *t, uint16_t flags, char *buf, size_t len)
{
	size_t used = 0;
	uint16_t rest = flags;
	int n;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (flags == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	for (; t->name; t++) {
		if (!(flags & t->value))
			continue;
		rest &= (uint16_t)~t->value;
		n = snprintf(buf + used, len - used, "%s%s", used ? "|" : "", t->name);
		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0'; /* whole names only */
			return buf;
		}
		used += (size_t)n;
	}
	if (rest) {
		n = snprintf(buf + used, len - used, "%s0x%x", used ? "|" : "", rest);
		if (n < 0 || (size_t)n >= len - used)
			buf[used] = '\0';
	}
	return buf;
}

char *nbd_proto_cmd_flags_str(uint16_t flags, char *buf, size_t len)
{
	return flags_str(cmd_flag_names, flags, buf, len);
}

char *nbd_proto_eflags_str(uint16_t flags, char *buf, size_t len)
{
	return flags_str(eflag_names, flags, buf, len);
}

uint32_t nbd_proto_errno(int err)
{
	/* |err| without overflow for INT_MIN (which maps to NBD_EIO) */
	unsigned int e = err < 0 ? 0u - (unsigned int)err : (unsigned int)err;

	switch (e) {
	case 0:
		return NBD_SUCCESS;
	case EPERM:
	case EACCES:
	case EROFS:
		return NBD_EPERM;
	case ENOMEM:
		return NBD_ENOMEM;
	case EINVAL:
		return NBD_EINVAL;
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return NBD_ENOSPC;
	case EOVERFLOW:
		return NBD_EOVERFLOW;
#if EOPNOTSUPP != ENOTSUP
	case EOPNOTSUPP:
#endif
	case ENOTSUP:
		return NBD_ENOTSUP;
	case ESHUTDOWN:
		return NBD_ESHUTDOWN;
	default:
		return NBD_EIO;
	}
}

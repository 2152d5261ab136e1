/*
 * nbd-handshake: the server side of the NBD fixed newstyle handshake on
 * one connected stream socket (doc/nbd-frontend.md, "Handshake").
 *
 * The daemon runs it in the connection's own thread; it blocks (with a
 * deadline for the whole handshake) and calls back into the daemon to
 * look exports up. On success the transmission phase starts with the
 * export and limits in struct nbd_handshake_result.
 */
#ifndef TANDEM_NBD_HANDSHAKE_H
#define TANDEM_NBD_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nbd-proto.h"
#include "nbd-request.h"

/* Longest error message of a failed handshake (with its NUL). */
#define NBD_HANDSHAKE_ERR_MAX 256

/* An export as find() describes it; the rules are nbd_handshake_check_export()'s. */
struct nbd_export_info {
	const char *name;        /* canonical name (NBD_INFO_NAME), or NULL */
	const char *description; /* for NBD_INFO_DESCRIPTION and NBD_OPT_LIST, or NULL */
	uint64_t size;           /* bytes */
	uint16_t flags;          /* NBD_FLAG_* transmission flags; HAS_FLAGS is added */
	uint32_t min_block;      /* all three 0: no block sizes advertised */
	uint32_t pref_block;
	uint32_t max_block;
	bool block_size_required; /* refuse GO without an NBD_INFO_BLOCK_SIZE request */
	bool base_allocation;     /* answers NBD_CMD_BLOCK_STATUS for base:allocation */
};

struct nbd_handshake_ops {
	/*
	 * Look up export name ("" is the default export) and fill *out (its
	 * strings must stay valid while the caller uses res->info). Return
	 * 0, or -ENOENT (no such export), -EPERM/-EACCES (refused by policy),
	 * -ESHUTDOWN, or any other negative errno for "not available now"
	 * (e.g. -EAGAIN on a Secondary). On an error, msg (msglen bytes,
	 * starts empty) may hold the one-line message for the client; else
	 * one is made up ("no export named ...").
	 */
	int (*find)(void *ctx, const char *name, struct nbd_export_info *out, char *msg,
		    size_t msglen);
	/*
	 * NBD_OPT_LIST: call emit(h, name, description) per export, stop
	 * when it returns nonzero and return that; or return a negative
	 * errno as find() does. NULL: listing is refused (policy).
	 */
	int (*list)(void *ctx, int (*emit)(void *h, const char *name, const char *description),
		    void *h);
	/* Optional: one line per option and answer, for the debug log. */
	void (*trace)(void *ctx, const char *line);
};

struct nbd_handshake_result {
	char name[NBD_MAX_STRING + 1]; /* the export name the client chose */
	struct nbd_export_info info;   /* as find() returned it, HAS_FLAGS (SEND_DF) added */
	struct nbd_export_limits limits; /* for nbd_request_validate() */
	uint32_t client_flags;           /* NBD_FLAG_C_* */
	uint32_t opt;                    /* NBD_OPT_GO or NBD_OPT_EXPORT_NAME */
	bool block_size_agreed;          /* GO requested NBD_INFO_BLOCK_SIZE */
	char err[NBD_HANDSHAKE_ERR_MAX]; /* why nbd_handshake() failed */
};

/*
 * Run the handshake on fd. timeout_ms (> 0) bounds the whole handshake;
 * 0 means no limit. Returns 0 when the transmission phase starts, else a
 * negative errno with res->err set: -ECONNABORTED (NBD_OPT_ABORT),
 * -ECONNRESET/-EPIPE (client went away), -ETIMEDOUT, -EPROTO (protocol
 * violation), -EMSGSIZE (option too long to skip), or find()'s error for
 * NBD_OPT_EXPORT_NAME. The caller closes fd on failure.
 */
int nbd_handshake(int fd, int timeout_ms, const struct nbd_handshake_ops *ops, void *ctx,
		  struct nbd_handshake_result *res);

/* 0 if e is a valid export description, else -EINVAL and *why. */
int nbd_handshake_check_export(const struct nbd_export_info *e, const char **why);

#endif

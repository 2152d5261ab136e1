/*
 * nbd-extents: BLOCK_STATUS, CACHE and fast zero for one connection
 * (nbd-xfer.c calls them), on the volume's backing file.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "nbd-proto.h"
#include "nbd-request.h"
#include "front/nbd-extents.h"
#include "peer/peer.h"
#include "volume/volume.h"

uint32_t nbd_extents_buflen(const struct nbd_request *req)
{
	if (req->type == NBD_CMD_BLOCK_STATUS)
		return NBD_EXTENT_SIZE *
		       ((req->flags & NBD_CMD_FLAG_REQ_ONE) ? 1 : NBD_REQUEST_MAX_EXTENTS);
	return req->type == NBD_CMD_READ || req->type == NBD_CMD_WRITE ? req->length : 0;
}

/*
 * BLOCK_STATUS of base:allocation (doc/nbd-frontend.md, "Block status"):
 * what a READ of the range returns. Reads from the local disk see its
 * holes, which read as zeroes (tandem writes zeroes or punches holes,
 * and never leaves old data in one); reads that go to the peer (no
 * UpToDate disk here) are told "data", status 0, which is always true.
 */
struct bs_fill {
	struct nbd_extent *e;
	uint32_t n, max;
};

static int bs_emit(void *arg, uint64_t len, bool hole)
{
	struct bs_fill *f = arg;
	uint32_t flags = hole ? NBD_STATE_HOLE | NBD_STATE_ZERO : 0;

	/* len <= the request's length, which is 32 bits */
	if (f->n && f->e[f->n - 1].flags == flags) {
		f->e[f->n - 1].length += (uint32_t)len;
		return 0;
	}
	f->e[f->n++] = (struct nbd_extent){(uint32_t)len, flags};
	return f->n == f->max;
}

int nbd_extents_block_status(struct volume *v, const struct nbd_request *req, void *buf,
			     uint32_t max, uint32_t *n)
{
	struct bs_fill f = {calloc(max, sizeof(*f.e)), 0, max};
	int rc = 0;

	if (!f.e)
		return -ENOMEM;
	if (peer_reads_remote(v->res, v))
		bs_emit(&f, req->length, false);
	else
		rc = volume_extents(v, req->offset, req->length, bs_emit, &f);
	if (rc == 0 && f.n == 0)
		rc = -EIO; /* cannot happen: the range is in the export */
	if (rc == 0) {
		nbd_request_encode_extents(buf, f.e, f.n);
		*n = f.n;
	}
	free(f.e);
	return rc;
}

/* Reads that go to the peer are not cached here. */
int nbd_extents_cache(struct volume *v, const struct nbd_request *req)
{
	return peer_reads_remote(v->res, v) ? 0 : volume_cache(v, req->offset, req->length);
}

/*
 * WRITE_ZEROES with FAST_ZERO (doc/nbd-frontend.md, "Fast zero"): done
 * only where zeroing is cheaper than writing, that is on this node's disk
 * with fallocate, no fallback to writes, and no peer connected: the
 * peer zeroes with fallocate too, but falls back to writing zeroes where
 * its disk cannot, and this node cannot tell which. Otherwise NBD_ENOTSUP
 * at once, with nothing changed.
 */
int nbd_extents_fast_zero(struct volume *v, const struct nbd_request *req, char *msg,
			  size_t msglen)
{
	const char *why;
	int rc;

	if (peer_live(v->res)) {
		why = "the peer is connected, whose disk may have to write the zeroes";
		rc = -ENOTSUP;
	} else {
		rc = volume_zero_fast(v, req->offset, req->length,
				      !(req->flags & NBD_CMD_FLAG_NO_HOLE));
		why = "the backing device cannot zero without writing";
	}
	if (rc == -ENOTSUP) {
		snprintf(msg, msglen,
			 "NBD_CMD_WRITE_ZEROES offset %llu length %u with FAST_ZERO: not faster "
			 "than writing: %s",
			 (unsigned long long)req->offset, req->length, why);
		return rc;
	}
	if (rc == 0) /* connected since: the peer zeroes too */
		rc = peer_trim_wait(v->res, v, true, req->offset, req->length);
	if (rc == 0 && (req->flags & NBD_CMD_FLAG_FUA))
		rc = volume_flush(v);
	return rc;
}

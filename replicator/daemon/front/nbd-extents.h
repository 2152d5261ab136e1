/*
 * nbd-extents: private to front/: the NBD requests that ask about or
 * prepare the backing file rather than move data: BLOCK_STATUS, CACHE
 * and WRITE_ZEROES with FAST_ZERO (doc/nbd-frontend.md). Each runs on the
 * connection thread and returns 0 or a negative errno for the reply.
 */
#ifndef TANDEM_NBD_EXTENTS_H
#define TANDEM_NBD_EXTENTS_H

#include <stddef.h>
#include <stdint.h>

struct volume;
struct nbd_request;

/* Bytes of buffer a request needs: READ and WRITE their data,
 * BLOCK_STATUS its descriptors; 0 for the others. */
uint32_t nbd_extents_buflen(const struct nbd_request *req);
/* BLOCK_STATUS of base:allocation: *n (>= 1) descriptors, encoded for the
 * wire, into buf (room for max). */
int nbd_extents_block_status(struct volume *v, const struct nbd_request *req, void *buf,
			     uint32_t max, uint32_t *n);
/* CACHE: the range read ahead into the page cache. */
int nbd_extents_cache(struct volume *v, const struct nbd_request *req);
/* WRITE_ZEROES with FAST_ZERO: done, or -ENOTSUP with nothing changed and
 * the reason for the client in msg. */
int nbd_extents_fast_zero(struct volume *v, const struct nbd_request *req, char *msg,
			  size_t msglen);

#endif

/*
 * nbd-xfer: private to front/: the transmission phase of one NBD
 * connection.
 */
#ifndef TANDEM_NBD_XFER_H
#define TANDEM_NBD_XFER_H

struct volume;
struct nbd_export_limits;
struct ratelimit;

/* How often the export's connections may log what a client caused. */
struct nbd_xfer_log {
	struct ratelimit *bad;    /* requests refused, bad magics */
	struct ratelimit *failed; /* requests that failed here */
};

/* Serve the requests of a connection whose handshake is done,
 * until the client disconnects or breaks the protocol */
void nbd_xfer_serve(int fd, struct volume *v, const char *res,
		    const struct nbd_export_limits *lim, const struct nbd_xfer_log *log);

#endif

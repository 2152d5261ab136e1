/*
 * nbd-xfer: private to front/: the transmission phase of one NBD
 * connection.
 */
#ifndef TANDEM_NBD_XFER_H
#define TANDEM_NBD_XFER_H

struct volume;
/* Serve the requests of a connection whose handshake is done,
 * until the client disconnects or breaks the protocol */
struct nbd_export_limits;
void nbd_xfer_serve(int fd, struct volume *v, const char *res,
		    const struct nbd_export_limits *lim);

#endif

/*
 * front/: the door of the front room: the NBD server of a resource and
 * its kernel nbd device (HACKING.md, "The rooms"). Uses peer/, volume/
 * and state/.
 */
#ifndef TANDEM_NBD_SRV_H
#define TANDEM_NBD_SRV_H

#include "tandemd.h"

struct reply_err;

int nbd_srv_start(struct resource *r, struct reply_err *e);
void nbd_srv_stop(struct nbd_srv *s);
unsigned int nbd_srv_clients(const struct nbd_srv *s);
bool nbd_srv_kernel_in_use(const struct nbd_srv *s);
const char *nbd_srv_path(const struct nbd_srv *s);

#endif

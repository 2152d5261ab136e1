/*
 * epoch: the epoch (write barrier) bookkeeping of the node that sends
 * writes (ref/drbd-semantics.md §3, doc/wire-protocol.md §8.1).
 *
 * Writes sent to the peer are grouped into numbered epochs. The current
 * epoch is closed, and P_BARRIER(nr) sent before the next write, when a
 * write of it has completed to the application (a later write may depend
 * on it), when it holds max-epoch-size writes, and on a flush (then even
 * an empty epoch is closed). The peer answers P_BARRIER_ACK(nr, set_size)
 * once every write of the epoch is on its stable storage; acks come in
 * order and set_size must be the number of writes in that epoch. Only
 * then are the epoch's writes done on the network side (protocols A and
 * B keep them in the transfer log until this point).
 *
 * Pure bookkeeping; the caller serialises calls and sends the packets.
 */
#ifndef TANDEM_EPOCH_H
#define TANDEM_EPOCH_H

#include <stdbool.h>
#include <stdint.h>

struct epoch;

/* max_epoch_size: 1..20000 (drbd.conf max-epoch-size); max_open: how many
 * closed epochs may wait for their ack (at least 2). -EINVAL, -ENOMEM. */
int epoch_new(uint32_t max_epoch_size, uint32_t max_open, struct epoch **out);
void epoch_free(struct epoch *e);

/*
 * Before sending a write: if the current epoch must be closed first,
 * returns 1 and sets *barrier to the number to send in P_BARRIER (the
 * caller sends it, then calls epoch_write() again); otherwise returns 0
 * and sets *nr to the epoch the write belongs to (and counts it). -EBUSY:
 * max_open epochs wait for acks (wait for one, then retry).
 */
int epoch_write(struct epoch *e, uint32_t *nr, uint32_t *barrier);
/* A write of epoch nr completed to the application. */
void epoch_completed(struct epoch *e, uint32_t nr);
/*
 * Close the current epoch now if a completion made that due (so that the
 * barrier goes out at once instead of before the next write, and an idle
 * link does not leave writes unacknowledged): 1 and *barrier to send, 0
 * if not due, -EBUSY as epoch_write().
 */
int epoch_close_due(struct epoch *e, uint32_t *barrier);
/*
 * A flush: close the current epoch, even if empty. Returns the barrier
 * number to send and wait for (its ack means every write sent before the
 * flush is stable on the peer); -EBUSY as above.
 */
int epoch_flush(struct epoch *e, uint32_t *barrier);
/*
 * P_BARRIER_ACK(nr, set_size): 0 and *writes = the epoch's writes (now
 * done on the network side); -EPROTO if nr is not the oldest epoch that
 * waits for an ack, or set_size is not its size.
 */
int epoch_ack(struct epoch *e, uint32_t nr, uint32_t set_size, uint32_t *writes);
/* Closed epochs waiting for their ack. */
uint32_t epoch_unacked(const struct epoch *e);
/* The oldest epoch not yet acked (the current one if none waits): writes
 * of epochs >= this are not known to be stable on the peer. */
uint32_t epoch_oldest(const struct epoch *e);
/* The link dropped: start over with epoch 1, nothing waiting. */
void epoch_reset(struct epoch *e);

#endif

/*
 * pktio: framed packets of the replication protocol (wire.h) over a
 * stream socket, with timeouts. One struct pktio per socket: the
 * descriptor, the stream it carries, the agreed features and a receive
 * buffer that grows to the largest packet seen (at most a header plus
 * WIRE_MAX_PAYLOAD). Receiving and sending may happen on different
 * threads; two threads must not receive, or send, at once.
 */
#ifndef TANDEM_PKTIO_H
#define TANDEM_PKTIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct pktio;
struct tls;

/* Takes ownership of fd (closed by pktio_free). */
int pktio_new(int fd, enum wire_stream stream, struct pktio **out);
void pktio_free(struct pktio *io);
int pktio_fd(const struct pktio *io);
void pktio_set_features(struct pktio *io, uint64_t features);
/* An accepted socket learns its stream from its P_HELLO. */
void pktio_set_stream(struct pktio *io, enum wire_stream stream);
/* From now on every byte goes through the TLS session t (lib/tls.h),
 * whose handshake is done; pktio owns it. Receiving and sending may still
 * run on different threads: they take turns on t under a lock that
 * neither holds while it waits for the socket. */
void pktio_set_tls(struct pktio *io, struct tls *t);
/* Make the next receive and any blocked one fail (-ECONNABORTED). */
void pktio_shutdown(struct pktio *io);
/* From now on no pktio_recv() or pktio_send() waits more than ms in all,
 * whatever its own timeout, even inside a packet (-ETIMEDOUT); 0 lifts it.
 * For the phase before authentication (doc/wire-protocol.md §5.5). */
void pktio_set_deadline(struct pktio *io, int ms);

/*
 * Receive one packet within timeout_ms (-1: no limit): 0 and *pkt (its
 * pointers valid until the next receive), -ETIMEDOUT, -ECONNRESET (EOF),
 * a socket errno, or a protocol error (-EPROTO, -EBADMSG, -E2BIG) with
 * reason filled. Ignorable unknown packets are skipped.
 */
int pktio_recv(struct pktio *io, int timeout_ms, struct wire_pkt *pkt, char *reason, size_t n);
/* Send one packet (and its data) within timeout_ms: 0, -ETIMEDOUT, -EPIPE... */
int pktio_send(struct pktio *io, const struct wire_pkt *pkt, int timeout_ms);
/* Send n (1..PKTIO_MAXV) packets in order, in as few system calls as the
 * socket takes: a barrier and the write after it in one. */
#define PKTIO_MAXV 4
int pktio_sendv(struct pktio *io, const struct wire_pkt *pkts, int n, int timeout_ms);
/* Busy-poll up to us µs for something to receive (net { ack-poll-usec }):
 * 1 when a receive would not wait, 0 when nothing came, -ECONNABORTED. */
int pktio_spin(struct pktio *io, unsigned int us);
/* Wait until the socket is readable: 1, 0 on timeout, negative errno. */
int pktio_wait(struct pktio *io, int timeout_ms);
/* The same, or until other_fd is readable: 1 the socket, 2 other_fd
 * (only), 0 on timeout, negative errno. */
int pktio_wait_or(struct pktio *io, int other_fd, int timeout_ms);
/* Whether received bytes wait to be read (buffered or in the socket). */
bool pktio_pending(struct pktio *io);

#endif

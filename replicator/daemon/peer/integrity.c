/*
 * integrity: data-integrity-alg (doc/wire-protocol.md §7.13). The sender of
 * a data packet (P_DATA, P_RS_DATA_REPLY, P_DATA_REPLY) digests its data
 * into the packet; the receiver digests what arrived and compares before
 * it uses the data. A mismatch is counted, logged as DRBD does, and ends
 * the session with -EBADMSG (ProtocolError): the reconnect resyncs what
 * the lost packet carried. Also the test hook that corrupts a packet.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "log.h"
#include "peer/peer-int.h"

/* pkt->data is set; digest: DIGEST_MAX_SIZE bytes that pkt then points to. */
int integrity_sign(struct peer *p, struct wire_pkt *pkt, uint8_t *digest)
{
	int rc;

	pkt->digest = NULL;
	pkt->digest_len = 0;
	if (!p->di_alg)
		return 0;
	rc = digest_buf(p->di_alg, pkt->data, pkt->data_len, digest);
	if (rc < 0)
		return rc;
	pkt->digest = digest;
	pkt->digest_len = (uint32_t)digest_size(p->di_alg);
	return 0;
}

/* 0: the data are what the peer sent; -EPROTO: a digest of the wrong
 * length (or one without data-integrity-alg); -EBADMSG: a mismatch. */
int integrity_check(struct peer *p, const struct wire_pkt *pkt)
{
	uint8_t d[DIGEST_MAX_SIZE];
	size_t n = p->di_alg ? digest_size(p->di_alg) : 0;

	if (pkt->digest_len != n) {
		log_res(LOG_ERR, p->r->name,
			"protocol error: %s with a %u-byte digest, data-integrity-alg %s has %zu",
			wire_type_name(pkt->type), pkt->digest_len,
			p->di_alg ? digest_name(p->di_alg) : "(none)", n);
		return -EPROTO;
	}
	if (!n)
		return 0;
	if (digest_buf(p->di_alg, pkt->data, pkt->data_len, d) == 0 && !memcmp(d, pkt->digest, n))
		return 0;
	__atomic_add_fetch(&p->di_failures, 1, __ATOMIC_RELAXED);
	log_res(LOG_ERR, p->r->name,
		"volume %u: Digest integrity check FAILED: %llus +%u (%s, %s); disconnecting, the "
		"resync after the reconnect repairs it",
		pkt->volume, (unsigned long long)pkt->u.data.sector, pkt->data_len,
		wire_type_name(pkt->type), digest_name(p->di_alg));
	return -EBADMSG;
}

/* Data packets received with a wrong digest since the connection was
 * configured (tandemadm connect/up); main loop. */
uint64_t integrity_failures(struct resource *r)
{
	return r->peer ? __atomic_load_n(&r->peer->di_failures, __ATOMIC_RELAXED) : 0;
}

/*
 * Tests only (TANDEM_FAULT_INJECTION=1 and TANDEM_CORRUPT_DATA=N): the
 * N-th P_DATA this node sends to the peer (counted from the connect,
 * across reconnects; 1 is the first) leaves with one byte of its payload
 * changed after the digest was taken, as a faulty NIC or bus would do it.
 * Returns the corrupted copy that pkt now points to (free it after the
 * send), or NULL.
 */
uint8_t *integrity_fault_corrupt(struct peer *p, struct wire_pkt *pkt)
{
	uint64_t nr = __atomic_add_fetch(&p->fi_data_sent, 1, __ATOMIC_RELAXED);
	uint8_t *copy;

	if (!p->fi_corrupt_at || nr != p->fi_corrupt_at || !pkt->data_len)
		return NULL;
	copy = malloc(pkt->data_len);
	if (!copy)
		return NULL;
	memcpy(copy, pkt->data, pkt->data_len);
	copy[pkt->data_len / 2] ^= 0x5a;
	pkt->data = copy;
	log_res(LOG_WARNING, p->r->name,
		"fault injection: P_DATA #%llu (%llus +%u) leaves with a corrupted payload",
		(unsigned long long)nr, (unsigned long long)pkt->u.data.sector, pkt->data_len);
	return copy;
}

void integrity_fault_load(struct peer *p)
{
	const char *s = getenv("TANDEM_CORRUPT_DATA");

	p->fi_corrupt_at = 0;
	if (p->r->d->fault_injection && s)
		p->fi_corrupt_at = strtoull(s, NULL, 10);
}

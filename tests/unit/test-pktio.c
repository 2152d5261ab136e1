/*
 * test-pktio: framed packets over a socket pair. Several packets sent
 * together arrive in order and whole; a barrier and the write after it go
 * out in one sendmsg (counted through the linker's --wrap); a sender
 * that the socket takes only in pieces still delivers every byte.
 */
#include "unit.h"

#include <pthread.h>
#include <sys/socket.h>

#include "pktio.h"
#include "wire.h"

/* every sendmsg of the library goes through here (-Wl,--wrap=sendmsg) */
ssize_t __real_sendmsg(int fd, const struct msghdr *m, int flags);
ssize_t __wrap_sendmsg(int fd, const struct msghdr *m, int flags);
static int sendmsg_calls;

ssize_t __wrap_sendmsg(int fd, const struct msghdr *m, int flags)
{
	__atomic_add_fetch(&sendmsg_calls, 1, __ATOMIC_RELAXED);
	return __real_sendmsg(fd, m, flags);
}

struct pair {
	struct pktio *tx, *rx;
};

static int pair_setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	int sv[2];

	assert_non_null(p);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pktio_new(sv[0], WIRE_STREAM_DATA, &p->tx), 0);
	assert_int_equal(pktio_new(sv[1], WIRE_STREAM_DATA, &p->rx), 0);
	*state = p;
	return 0;
}

static int pair_teardown(void **state)
{
	struct pair *p = *state;

	pktio_free(p->tx);
	pktio_free(p->rx);
	free(p);
	return 0;
}

static void barrier(struct wire_pkt *b, uint32_t nr)
{
	memset(b, 0, sizeof(*b));
	b->type = WIRE_P_BARRIER;
	b->volume = WIRE_VOL_NONE;
	b->u.barrier.barrier = nr;
}

static void data(struct wire_pkt *d, uint64_t sector, uint64_t id, const uint8_t *buf, uint32_t len)
{
	memset(d, 0, sizeof(*d));
	d->type = WIRE_P_DATA;
	d->volume = 0;
	d->data = buf;
	d->data_len = len;
	d->u.data = (struct wire_data){sector, id, 0, WIRE_DP_SEND_WRITE_ACK};
}

static void expect_barrier(struct pktio *rx, uint32_t nr)
{
	struct wire_pkt got;
	char why[128] = "";

	assert_int_equal(pktio_recv(rx, 5000, &got, why, sizeof(why)), 0);
	assert_int_equal(got.type, WIRE_P_BARRIER);
	assert_int_equal(got.u.barrier.barrier, nr);
}

static void expect_data(struct pktio *rx, uint64_t sector, uint64_t id, const uint8_t *buf, uint32_t len)
{
	struct wire_pkt got;
	char why[128] = "";

	assert_int_equal(pktio_recv(rx, 5000, &got, why, sizeof(why)), 0);
	assert_int_equal(got.type, WIRE_P_DATA);
	assert_int_equal(got.u.data.sector, sector);
	assert_int_equal(got.u.data.id, id);
	assert_int_equal(got.data_len, len);
	assert_memory_equal(got.data, buf, len);
}

static void barrier_and_write_in_one_sendmsg(void **state)
{
	struct pair *p = *state;
	struct wire_pkt pkts[2];
	uint8_t buf[4096];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	barrier(&pkts[0], 41);
	data(&pkts[1], 8, 1234, buf, sizeof(buf));
	sendmsg_calls = 0;
	assert_int_equal(pktio_sendv(p->tx, pkts, 2, 5000), 0);
	assert_int_equal(sendmsg_calls, 1);
	expect_barrier(p->rx, 41);
	expect_data(p->rx, 8, 1234, buf, sizeof(buf));
}

static void packets_in_order(void **state)
{
	struct pair *p = *state;
	struct wire_pkt pkts[PKTIO_MAXV];
	uint8_t a[512], b[1024];

	memset(a, 0xa5, sizeof(a));
	memset(b, 0x5a, sizeof(b));
	data(&pkts[0], 0, 1, a, sizeof(a));
	barrier(&pkts[1], 7);
	barrier(&pkts[2], 8);
	data(&pkts[3], 16, 2, b, sizeof(b));
	assert_int_equal(pktio_sendv(p->tx, pkts, PKTIO_MAXV, 5000), 0);
	expect_data(p->rx, 0, 1, a, sizeof(a));
	expect_barrier(p->rx, 7);
	expect_barrier(p->rx, 8);
	expect_data(p->rx, 16, 2, b, sizeof(b));
	/* and a single packet still goes out alone */
	assert_int_equal(pktio_send(p->tx, &pkts[1], 5000), 0);
	expect_barrier(p->rx, 7);
}

static void count_out_of_range(void **state)
{
	struct pair *p = *state;
	struct wire_pkt pkts[PKTIO_MAXV + 1];

	for (int i = 0; i <= PKTIO_MAXV; i++)
		barrier(&pkts[i], (uint32_t)i + 1);
	assert_int_equal(pktio_sendv(p->tx, pkts, 0, 1000), -EINVAL);
	assert_int_equal(pktio_sendv(p->tx, pkts, PKTIO_MAXV + 1, 1000), -EINVAL);
	/* nothing went out */
	assert_false(pktio_pending(p->rx));
}

struct reader {
	struct pktio *rx;
	const uint8_t *buf;
	uint32_t len;
	int fails;
};

static void *slow_reader(void *arg)
{
	struct reader *r = arg;
	struct wire_pkt got;
	char why[128];

	for (uint32_t nr = 1; nr <= 3; nr++) {
		if (pktio_recv(r->rx, 5000, &got, why, sizeof(why)) != 0 || got.type != WIRE_P_BARRIER ||
		    got.u.barrier.barrier != nr)
			r->fails++;
		if (pktio_recv(r->rx, 5000, &got, why, sizeof(why)) != 0 || got.type != WIRE_P_DATA ||
		    got.data_len != r->len || memcmp(got.data, r->buf, r->len) != 0)
			r->fails++;
	}
	return NULL;
}

/* A socket that takes the packets in many pieces: each iovec boundary is
 * crossed partway at some point, and the bytes still arrive whole. */
static void partial_writes(void **state)
{
	struct pair *p = *state;
	int small = 4096;
	uint32_t len = 256 * 1024;
	uint8_t *buf = malloc(len);
	struct reader r = {p->rx, buf, len, 0};
	struct wire_pkt pkts[2];
	pthread_t t;

	assert_non_null(buf);
	for (uint32_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i ^ (i >> 8));
	assert_int_equal(setsockopt(pktio_fd(p->tx), SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	assert_int_equal(pthread_create(&t, NULL, slow_reader, &r), 0);
	sendmsg_calls = 0;
	for (uint32_t nr = 1; nr <= 3; nr++) {
		barrier(&pkts[0], nr);
		data(&pkts[1], nr * 1024, nr, buf, len);
		assert_int_equal(pktio_sendv(p->tx, pkts, 2, 5000), 0);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(r.fails, 0);
	/* 768 KiB through a 4 KiB send buffer: it did come in pieces */
	assert_true(sendmsg_calls > 3);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(barrier_and_write_in_one_sendmsg, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(packets_in_order, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(count_out_of_range, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(partial_writes, pair_setup, pair_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

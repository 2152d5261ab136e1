/*
 * volume-err: what a local I/O error does to a volume (on-io-error), and
 * the fault injection that tests use to cause one (tandemd started with
 * TANDEM_FAULT_INJECTION set).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "state/state-change.h"
#include "volume/volume.h"

static void failed_cb(void *arg)
{
	struct volume *v = arg;

	v->res->d->up->volume_failed(v);
}

static void passed_cb(void *arg)
{
	struct volume *v = arg;

	v->res->d->up->volume_error_passed(v);
}

/*
 * on-io-error (ref/drbd-semantics.md §10). pass_on: the error goes to the
 * client and the disk becomes Inconsistent (the failed blocks are marked
 * out of sync: every write is marked while no peer is connected). detach
 * and call-local-io-error: new requests fail at once and the main loop
 * detaches the disk (after running local-io-error). Metadata errors always
 * detach. Any thread; the volume lock must not be held.
 */
static void io_error(struct volume *v, enum volume_err kind, const char *what, int rc,
		     bool locked)
{
	const char *policy = conf_res_text(tandemd_conf(v->res->d), resource_cr(v->res), CONF_SECT_DISK,
					   "on-io-error");
	bool pass_on = kind == VOLUME_ERR_DATA && policy && !strcmp(policy, "pass_on");
	bool first;

	if (!locked)
		pthread_mutex_lock(&v->lock);
	if (pass_on) {
		first = !v->io_error_seen;
		v->io_error_seen = true;
	} else {
		first = !v->failing;
		v->failing = true;
		pthread_cond_broadcast(&v->cond);
	}
	if (!locked)
		pthread_mutex_unlock(&v->lock);
	if (!first)
		return;
	log_res(LOG_ERR, v->res->name,
		"volume %u: local I/O error %s the %s: %s; on-io-error %s%s", v->vnr, what,
		kind == VOLUME_ERR_MD ? "metadata" : "backing device", strerror(-rc),
		policy ? policy : "detach",
		pass_on ? ": the error goes to the client and the disk becomes Inconsistent"
			: ": detaching the disk");
	if (defer_call(v->res->d->defer, pass_on ? passed_cb : failed_cb, v) < 0)
		log_res(LOG_ERR, v->res->name, "volume %u: out of memory reporting an I/O error",
			v->vnr);
}

void volume_io_error(struct volume *v, enum volume_err kind, const char *what, int rc)
{
	io_error(v, kind, what, rc, false);
}

void volume_io_error_locked(struct volume *v, enum volume_err kind, const char *what, int rc)
{
	io_error(v, kind, what, rc, true);
}

/* Fault injection for tests: the data area fails with EIO. */
static bool fault_in_data(const struct volume *v, uint64_t off)
{
	return (__atomic_load_n(&v->fault_ops, __ATOMIC_RELAXED) & VOLUME_FAULT_META) ||
	       off < v->size_sect * 512;
}

/* VOLUME_FAULT_HANG: the request does not return until the fault is
 * cleared (two minutes at most), as a dying disk or a lost SAN path. */
static void fault_hang(const struct volume *v, uint64_t off)
{
	int i;

	for (i = 0; i < 12000 && (__atomic_load_n(&v->fault_ops, __ATOMIC_RELAXED) &
				  VOLUME_FAULT_HANG) && fault_in_data(v, off); i++)
		usleep(10000);
}

/* A read or write of the data area fails if its kind (flag) is injected. */
static struct bdev_fault fault_io(const struct volume *v, uint64_t off, size_t len,
				  unsigned int flag)
{
	bool fail;

	fault_hang(v, off);
	fail = (__atomic_load_n(&v->fault_ops, __ATOMIC_RELAXED) & flag) && fault_in_data(v, off);
	return (struct bdev_fault){.len = fail ? 0 : len, .err = fail ? -EIO : 0};
}

static struct bdev_fault fault_write(void *ctx, uint64_t off, size_t len)
{
	return fault_io(ctx, off, len, VOLUME_FAULT_WRITE);
}

static struct bdev_fault fault_read(void *ctx, uint64_t off, size_t len)
{
	return fault_io(ctx, off, len, VOLUME_FAULT_READ);
}

static int fault_flush(void *ctx)
{
	const struct volume *v = ctx;

	fault_hang(v, 0);
	return (__atomic_load_n(&v->fault_ops, __ATOMIC_RELAXED) & VOLUME_FAULT_WRITE) ? -EIO : 0;
}

/* VOLUME_FAULT_FLUSH: flushes fail, writes (also synchronous ones) do not */
static int fault_fsync(void *ctx)
{
	const struct volume *v = ctx;

	return (__atomic_load_n(&v->fault_ops, __ATOMIC_RELAXED) & VOLUME_FAULT_FLUSH) ? -EIO : 0;
}

/* The hooks, set before the backing device is used (attach); they do
 * nothing until volume_set_faults() says which operations fail. */
const struct bdev_faults *volume_fault_hooks(struct volume *v)
{
	v->faults = (struct bdev_faults){
		.on_write = fault_write,
		.on_read = fault_read,
		.on_flush = fault_flush,
		.on_fsync = fault_fsync,
		.ctx = v,
	};
	return &v->faults;
}

int volume_set_faults(struct volume *v, unsigned int ops)
{
	if (!v->res->d->fault_injection)
		return -EPERM;
	__atomic_store_n(&v->fault_ops, ops, __ATOMIC_RELAXED);
	return 0;
}

/*
 * nbdkdev: attach a Linux kernel nbd device (/dev/nbdN) to an NBD
 * connection that the daemon serves itself, through the classic ioctl
 * interface of <linux/nbd.h>, and give it a stable name (/dev/tandem/RES).
 *
 * How the daemon uses it (on promotion, when the host has the nbd module):
 *
 *   1. nbdkdev_probe(dev): is the module loaded, the device there and free?
 *   2. socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv): sv[0] is the
 *      kernel's end, sv[1] the server's end.
 *   3. Serve sv[1] as an ordinary NBD connection, but starting directly in
 *      the transmission phase: no greeting, no options, no export reply.
 *      The ioctl interface skips negotiation, so the parameters a handshake
 *      would carry are given to nbdkdev_attach() instead: the export size,
 *      a block size, and the transmission flags the server would have
 *      advertised (NBD_FLAG_HAS_FLAGS | SEND_FLUSH | SEND_FUA | SEND_TRIM |
 *      SEND_WRITE_ZEROES ...). The flags must match what the server really
 *      implements: the kernel sends FLUSH/FUA only with SEND_FLUSH/SEND_FUA
 *      and TRIM only with SEND_TRIM, makes the device read-only with
 *      READ_ONLY, and ignores flags it does not know. Replies are simple
 *      replies (no structured replies were negotiated). The kernel sends
 *      NBD_CMD_DISC on NBD_DISCONNECT; the server must then close sv[1],
 *      which ends the kernel's side.
 *   4. nbdkdev_attach(dev, sv[0], ...): the kernel takes its own reference
 *      to the socket (it looks the descriptor up and holds the file) when
 *      NBD_SET_SOCK succeeds, so the caller may close sv[0] as soon as
 *      attach returns, whether it succeeded or not, and should (with no
 *      other reference left, the server sees EOF on sv[1] when the kernel
 *      lets go). nbdkdev never closes the caller's descriptor.
 *   5. nbdkdev_link(dev, "/dev/tandem/RES").
 *   6. While attached, nbdkdev_dead() says whether the kernel dropped the
 *      connection (server end closed, I/O timeout), for the log.
 *   7. On demotion: refuse while nbdkdev_in_use(dev) == 1 (a mount, LVM or
 *      md holds it: DRBD's "device held open", exit 11); else
 *      nbdkdev_unlink(), nbdkdev_detach(), and only then stop serving
 *      sv[1] (requests in flight still need their replies, and the kernel
 *      waits for the server to close after NBD_CMD_DISC).
 *
 * Kernel facts relied on (drivers/block/nbd.c): every ioctl needs
 * CAP_SYS_ADMIN; NBD_DO_IT blocks until every connection has ended and
 * returns 0 after NBD_DISCONNECT or a closed connection, -ETIMEDOUT after
 * an I/O timeout; while it runs, /sys/block/nbdN/pid holds the id of the
 * thread that called it, and the file stays until the last opener of the
 * device closes it (so a mounted, dead device cannot be re-attached until
 * it is unmounted). Devices configured over netlink refuse these ioctls.
 *
 * Functions return 0 or a negative errno; where there is a `why` buffer
 * (may be NULL) it receives a sentence saying what went wrong and what to
 * do. One thread calls attach/detach for a given device; nbdkdev_dead()
 * may be called from any thread.
 */
#ifndef TANDEM_NBDKDEV_H
#define TANDEM_NBDKDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nbdkdev;

/* True for "/dev/nbd<digits>" exactly: a decimal index without leading
 * zeros and at most 7 digits (the kernel's minor numbers allow no more). */
bool nbdkdev_is_nbd_path(const char *dev);

/*
 * Can dev be attached now? 0 if so; -EINVAL: not an nbd device name;
 * -ENODEV: the kernel has no nbd module (modprobe nbd); -ENOENT: the module
 * is loaded but has no such device (nbds_max), or the kernel has it but
 * the /dev node is missing; -ENOTBLK: dev exists but is no block device;
 * -EBUSY: already connected (/sys/block/nbdN/pid exists).
 */
int nbdkdev_probe(const char *dev, char *why, size_t len);

/*
 * Configure dev and start serving it from sock (see above): block size,
 * then size in blocks, timeout (0 = none: the kernel then waits for a
 * stuck request forever), flags, NBD_SET_SOCK, then a thread that runs
 * NBD_DO_IT. Returns once /sys/block/nbdN/pid shows the device running.
 * size_bytes must be a nonzero multiple of block_size (a power of two,
 * 512..65536; the kernel may allow less than 65536); nbd_flags are the
 * 16-bit transmission flags. On failure everything done is undone and
 * *out is NULL. -ENOTTY: dev is no nbd device; -EBUSY: in use (nbd-client?);
 * -EOPNOTSUPP: the kernel is too old for NBD_SET_FLAGS; -EPERM: not root.
 */
int nbdkdev_attach(const char *dev, int sock, uint64_t size_bytes, uint32_t block_size,
		   uint32_t nbd_flags, uint32_t timeout_s, struct nbdkdev **out, char *why,
		   size_t len);

/*
 * NBD_DISCONNECT (unless the connection is already dead), wait for
 * NBD_DO_IT to return; if it has not within the stop time (5 s),
 * NBD_CLEAR_SOCK (shuts the socket down) and wait as long again; then
 * NBD_CLEAR_QUE, NBD_CLEAR_SOCK, close, free. NULL is fine. Returns 0, or
 * -ETIMEDOUT if the kernel still did not return: the DO_IT thread is then
 * left to finish and free everything itself, and k must not be used again.
 */
int nbdkdev_detach(struct nbdkdev *k);

/* 1 once NBD_DO_IT has returned (the kernel dropped the connection, or a
 * detach is under way), 0 while it runs; 1 for NULL. */
int nbdkdev_dead(const struct nbdkdev *k);
/* What NBD_DO_IT returned (0 or a negative errno; -ETIMEDOUT: an I/O
 * timeout); 0 while it runs. */
int nbdkdev_result(const struct nbdkdev *k);
const char *nbdkdev_dev(const struct nbdkdev *k);

/*
 * 1 if the block device dev is held open exclusively by someone (open
 * with O_EXCL fails with EBUSY: mounted, an LVM PV or md member, another
 * O_EXCL opener), 0 if not, a negative errno otherwise: -ENOTBLK for
 * anything that is not a block device (a regular file or /dev/null: "in
 * use" has no meaning there), -ENOENT if it does not exist. Plain opens
 * (dd, a database on the raw device) are not exclusive and not seen.
 */
int nbdkdev_in_use(const char *dev);

/*
 * Make link_path a symlink to dev, creating missing parent directories
 * (0755). An existing symlink to dev is left alone; a symlink elsewhere is
 * replaced atomically (a temporary link renamed over it); anything else at
 * link_path is refused with -EEXIST.
 */
int nbdkdev_link(const char *dev, const char *link_path);
/*
 * Remove link_path if it is a symlink to dev. 0 if removed or absent;
 * -EEXIST if something else is there (left alone). Directories stay.
 */
int nbdkdev_unlink(const char *link_path, const char *dev);

/*
 * Test seams (process-wide; set before attaching, not thread-safe). Zero
 * fields take the defaults: sysfs "/sys"; start_ms 2000 (attach waits this
 * long for the pid file, then assumes NBD_DO_IT is running since it has not
 * failed); stop_ms 5000 (each of detach's two waits); ioctl NULL: the real
 * ioctl(2). A hook returns 0 or a negative errno, and is only called with
 * the descriptor nbdkdev opened on dev. NULL restores every default.
 */
struct nbdkdev_env {
	const char *sysfs;
	unsigned int start_ms;
	unsigned int stop_ms;
	int (*ioctl)(void *ctx, int fd, unsigned long req, unsigned long arg);
	void *ctx;
};

void nbdkdev_set_env(const struct nbdkdev_env *env);

#endif

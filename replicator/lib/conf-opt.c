/*
 * conf-opt: the option table and value conversion.
 *
 * Ranges and defaults follow DRBD 8.4's drbd_limits.h, which is what the
 * 8.4 kernel enforces where it and the man page disagree.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf-opt.h"

#define E(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *const bools[] = {"yes", "no", "on", "off", "true", "false", NULL};
const char *const conf_hash_names[] = {"crc32c", "md5", "sha1", "sha224",
				       "sha256", "sha384", "sha512", NULL};

#define NUM(n, s, u, d, lo, hi, h) {n, s, CONF_T_NUM, u, d, lo, hi, NULL, 0, h}
#define NUMF(n, s, u, d, lo, hi, f, h) {n, s, CONF_T_NUM, u, d, lo, hi, NULL, f, h}
#define BOOL(n, s, d, h) {n, s, CONF_T_BOOL, CONF_U_NONE, d, 0, 0, NULL, 0, h}
#define ENUM(n, s, d, e, f, h) {n, s, CONF_T_ENUM, CONF_U_NONE, d, 0, 0, e, f, h}
#define TYPED(n, s, t, d, h) {n, s, t, CONF_U_NONE, d, 0, 0, NULL, 0, h}

#define G CONF_SECT_GLOBAL
#define O CONF_SECT_OPTIONS
#define N CONF_SECT_NET
#define D CONF_SECT_DISK
#define S CONF_SECT_STARTUP
#define H CONF_SECT_HANDLERS

/* Global options are listed in the order `drbdadm dump` prints them. */
const struct conf_opt conf_opts[] = {
	BOOL("disable-ip-verification", G, "no",
	     "Do not check that this host owns the address of its host section."),
	NUM("minor-count", G, CONF_U_NONE, "32", 1, 255,
	    "Number of device minors to reserve (a sizing hint, kept for compatibility)."),
	NUM("dialog-refresh", G, CONF_U_SECONDS, "1", 0, 600,
	    "Seconds between redraws of the wait-for-connection prompt; 0 never redraws."),
	ENUM("usage-count", G, "ask", E("yes", "no", "ask"), 0,
	     "Accepted for compatibility; tandem never reports usage anywhere."),
	BOOL("udev-always-use-vnr", G, "no",
	     "Name the /dev/tandem/RES links with the volume number even for one volume."),
	NUM("cmd-timeout-short", G, CONF_U_SECONDS, "5", 0, 900,
	    "Timeout of short tandemadm requests to the daemon; 0 waits forever."),
	NUM("cmd-timeout-medium", G, CONF_U_SECONDS, "121", 0, 900,
	    "Timeout of medium tandemadm requests (wait-connect and the like)."),
	NUM("cmd-timeout-long", G, CONF_U_SECONDS, "600", 0, 900,
	    "Timeout of long tandemadm requests (resize, create-md)."),

	{"cpu-mask", O, CONF_T_HEX, CONF_U_NONE, "0", 0, 0, NULL, 0,
	 "Hexadecimal mask of the CPUs the resource's threads may run on; 0 = all."},
	ENUM("on-no-data-accessible", O, "io-error", E("io-error", "suspend-io"), 0,
	     "What I/O does when no UpToDate data is reachable: fail, or wait."),
	ENUM("quorum", O, "off", E("off", "majority"), 0,
	     "DRBD 9's quorum, from corosync's votequorum as tandem-arbiterd reports it "
	     "(doc/arbiter.md): with majority, a Secondary in a partition without quorum "
	     "refuses primary (exit 11; primary --force still promotes, and logs why), and a "
	     "Primary that loses quorum applies on-no-quorum (a run as Primary that --force "
	     "started without quorum is spared until quorum came back). off: quorum is not "
	     "looked at. Without an arbiter the partition counts as quorate (tandemd(8), "
	     "Quorum)."),
	ENUM("on-no-quorum", O, "suspend-io", E("suspend-io", "io-error"), 0,
	     "What a Primary's new I/O does while its partition has no quorum (with quorum "
	     "majority): suspend-io holds new reads and writes until quorum returns (status "
	     "susp bit 3, counters.frozen); io-error fails new writes, trims and write-zeroes "
	     "with EIO and still serves reads and flushes from the local disk."),
	TYPED("nbd-allow-group", O, CONF_T_STRING, NULL,
	      "A group whose members may use the resource's NBD export besides root: a "
	      "client whose gid is the group's, or whose user is a member of it in the "
	      "group database (getgrouplist), is served; any other local user is "
	      "refused and closed before the handshake, and logged. The socket then "
	      "gets the group and mode 0660 (tandemd needs CAP_CHOWN for that), and the "
	      "run directory must let the group search it, e.g. mode 0711 "
	      "(doc/nbd-frontend.md, Local clients). The group must exist on the nodes "
	      "of the resource. Unset: root only, socket mode 0600. Applies from the next "
	      "promotion."),

	ENUM("protocol", N, "C", E("A", "B", "C"), 0,
	     "Replication protocol: A completes a write once it is sent, B once the peer "
	     "received it, C once it is on both disks."),
	NUM("timeout", N, CONF_U_DECISEC, "60", 1, 600,
	    "Time the peer has to answer a request before it counts as late (see ko-count); "
	    "must be below connect-int and ping-int."),
	NUM("connect-int", N, CONF_U_SECONDS, "10", 1, 120,
	    "Interval between connection attempts, and the connect timeout."),
	NUM("ping-int", N, CONF_U_SECONDS, "10", 1, 120,
	    "Idle time after which a keep-alive ping is sent."),
	NUM("ping-timeout", N, CONF_U_DECISEC, "5", 1, 300,
	    "Time the peer has to answer a ping."),
	NUM("socket-check-timeout", N, CONF_U_DECISEC, "0", 0, 300,
	    "Time to wait for the second socket of a new connection; 0 = ping-timeout."),
	NUM("ko-count", N, CONF_U_NONE, "7", 0, 200,
	    "Number of late answers after which the peer is dropped; 0 never drops it."),
	NUM("ack-poll-usec", N, CONF_U_NONE, "0", 0, 1000,
	    "Microseconds the thread that waits for the peer's acks busy-polls the meta "
	    "socket before it sleeps, while a write or a flush awaits its ack; the budget "
	    "halves when spinning does not pay and comes back when it does "
	    "(doc/perf-ack-poll.md). Saves a thread wake-up per write at the price of CPU time: "
	    "0 (the default) never spins. Not in DRBD; each node decides for itself."),
	NUM("max-buffers", N, CONF_U_NONE, "2048", 32, 131072,
	    "Pages (4 KiB) the receiver may hold for writes in flight; half of it bounds resync "
	    "requests."),
	NUM("max-epoch-size", N, CONF_U_NONE, "2048", 1, 20000,
	    "Maximum number of writes between two barriers."),
	NUM("sndbuf-size", N, CONF_U_BYTES, "0", 0, 10485760,
	    "TCP send buffer size; 0 lets the kernel tune it."),
	NUM("rcvbuf-size", N, CONF_U_BYTES, "0", 0, 10485760,
	    "TCP receive buffer size; 0 lets the kernel tune it."),
	NUM("unplug-watermark", N, CONF_U_NONE, "128", 1, 131072,
	    "Accepted for compatibility; has no effect."),
	BOOL("allow-two-primaries", N, "no",
	     "Allow both nodes to be Primary at once (needs protocol C and a cluster "
	     "filesystem)."),
	TYPED("cram-hmac-alg", N, CONF_T_HASH, NULL,
	      "Hash used for HMAC challenge/response authentication of the peer."),
	TYPED("shared-secret", N, CONF_T_STRING, NULL,
	      "Secret for cram-hmac-alg authentication, at most 64 characters."),
	BOOL("allow-unauthenticated", N, "no",
	     "Replicate with a peer that is not authenticated (no cram-hmac-alg and "
	     "shared-secret): anything that can connect from the peer's address is taken "
	     "for the peer. Without a secret and without this, tandemd refuses to bring the "
	     "resource up (doc/security.md)."),
	ENUM("cram-hmac-version", N, "2", E("1", "2"), 0,
	     "2: the response binds both challenges, the direction, the resource, both node "
	     "names and the socket, and the connecting side proves first (doc/wire-protocol.md "
	     "5.4). 1: DRBD 8.4's response to the challenge alone, which can be relayed "
	     "between resources that share a secret and between the two sockets; only for a "
	     "peer that speaks nothing else. The same on both nodes."),
	BOOL("tls", N, "no",
	     "Run both sockets of the connection over TLS 1.3 with mutual certificate "
	     "authentication (doc/security.md section 5): encrypted, and the peer must present "
	     "a certificate of tls-ca that names its host. Needs tls-ca, tls-certificate and "
	     "tls-key; the same on both nodes."),
	TYPED("tls-ca", N, CONF_T_STRING, NULL,
	      "Absolute path of a PEM file with the CA certificates the peer's certificate must "
	      "lead to (during a CA rotation, both CAs)."),
	TYPED("tls-certificate", N, CONF_T_STRING, NULL,
	      "Absolute path of a PEM file with this node's certificate, then its chain. It must "
	      "name this node's host name (subjectAltName DNS) and allow TLS server and client "
	      "use; the same path on both nodes, each with its own file."),
	TYPED("tls-key", N, CONF_T_STRING, NULL,
	      "Absolute path of the PEM file with tls-certificate's private key, unencrypted; "
	      "keep it readable by root only."),
	ENUM("after-sb-0pri", N, "disconnect",
	     E("disconnect", "discard-younger-primary", "discard-older-primary",
	       "discard-zero-changes", "discard-least-changes", "discard-local", "discard-remote"),
	     CONF_OPT_ASB, "Split-brain recovery when neither node is Primary."),
	ENUM("after-sb-1pri", N, "disconnect",
	     E("disconnect", "consensus", "discard-secondary", "call-pri-lost-after-sb",
	       "violently-as0p"),
	     0, "Split-brain recovery when one node is Primary."),
	ENUM("after-sb-2pri", N, "disconnect",
	     E("disconnect", "call-pri-lost-after-sb", "violently-as0p"), 0,
	     "Split-brain recovery when both nodes are Primary."),
	BOOL("always-asbp", N, "no",
	     "Apply the after-sb policies also when only the UUID history matches (full sync)."),
	ENUM("rr-conflict", N, "disconnect", E("disconnect", "call-pri-lost", "violently"), 0,
	     "What to do when a resync would make the current Primary its target."),
	TYPED("data-integrity-alg", N, CONF_T_HASH, NULL,
	      "Hash carried with every replicated write, resync and remote-read reply and "
	      "checked by the receiver; a mismatch reconnects and resyncs (counted in status "
	      "as integrity_failures). The same on both nodes."),
	BOOL("tcp-cork", N, "yes", "Let TCP coalesce small packets."),
	ENUM("on-congestion", N, "block", E("block", "pull-ahead", "disconnect"), 0,
	     "What protocol A does when the link cannot keep up."),
	NUM("congestion-fill", N, CONF_U_SECTORS, "0", 0, 20971520,
	    "Data in flight above which on-congestion applies; 0 = off."),
	NUM("congestion-extents", N, CONF_U_NONE, "1237", 67, 65534,
	    "Active activity-log extents above which on-congestion applies."),
	TYPED("verify-alg", N, CONF_T_HASH, NULL,
	      "Hash used by online verify (tandemadm verify); the same on both nodes."),
	TYPED("csums-alg", N, CONF_T_HASH, NULL,
	      "Hash used by checksum-based resync: the target sends digests of its blocks, "
	      "and only differing blocks are sent (the log says how much was equal). The "
	      "same on both nodes."),
	BOOL("csums-after-crash-only", N, "no",
	     "Use checksum-based resync only after a crash of the Primary."),
	BOOL("use-rle", N, "yes", "Run-length encode bitmaps exchanged at connect."),
	TYPED("discard-my-data", N, CONF_T_FLAG, NULL,
	      "One-shot: on the next connect, this node discards its changes after a split "
	      "brain."),

	NUM("size", D, CONF_U_SECTORS, "0", 0, 2199023255552ULL,
	    "Usable size of the device; 0 uses all of the backing device. Give a suffix."),
	ENUM("on-io-error", D, "detach", E("pass_on", "call-local-io-error", "detach"), 0,
	     "What a local I/O error does: report it up, run local-io-error and detach, or "
	     "detach and go diskless."),
	ENUM("fencing", D, "dont-care", E("dont-care", "resource-only", "resource-and-stonith"),
	     0, "Fencing policy when the peer is lost (see fence-peer)."),
	ENUM("io-engine", D, "inline", E("inline", "threads", "io_uring"), 0,
	     "tandem only: where a volume's data I/O runs: on the NBD connection threads "
	     "(inline, the fastest for buffered files in doc/perf-nbd.md), a thread pool, "
	     "or io_uring (falls back to threads where io_uring cannot be set up). The "
	     "environment variable TANDEM_IO overrides it."),
	BOOL("disk-barrier", D, "no", "Use barriers to order writes on the backing device."),
	BOOL("disk-flushes", D, "yes", "Use flushes to order writes on the backing device."),
	BOOL("disk-drain", D, "yes", "Drain in-flight writes at epoch boundaries."),
	BOOL("md-flushes", D, "yes", "Flush metadata writes (disable only with a "
				     "battery-backed cache)."),
	NUM("max-bio-bvecs", D, CONF_U_NONE, "0", 0, 128,
	    "Accepted for compatibility; has no effect in user space."),
	NUM("resync-rate", D, CONF_U_KIB_S, "250", 1, 4194304,
	    "Resync rate, and the starting point of the dynamic controller."),
	TYPED("resync-after", D, CONF_T_RESOURCE, NULL,
	      "Resync this resource only after the named one finished its resync."),
	NUMF("al-extents", D, CONF_U_NONE, "1237", 67, 65534, CONF_OPT_CLAMP,
	     "Size of the activity log's hot set, in 4 MiB extents. As in DRBD 8.4, a value "
	     "outside the range is not an error: it is raised or lowered to the nearest end "
	     "(and above 6433, the most the 32 KiB activity-log ring holds, to 6433), with a "
	     "warning."),
	BOOL("al-updates", D, "yes",
	     "Write activity-log transactions; with no, a crashed Primary needs a full sync."),
	NUM("c-plan-ahead", D, CONF_U_DECISEC, "20", 0, 300,
	    "Planning horizon of the dynamic resync controller; 0 uses the fixed resync-rate."),
	NUM("c-delay-target", D, CONF_U_DECISEC, "10", 1, 100,
	    "Delay target of the resync controller, used when c-fill-target is 0."),
	NUM("c-fill-target", D, CONF_U_SECTORS, "100", 0, 1048576,
	    "Amount of resync data the controller keeps in flight."),
	NUM("c-max-rate", D, CONF_U_KIB_S, "102400", 250, 4194304,
	    "Upper bound of the resync controller."),
	NUM("c-min-rate", D, CONF_U_KIB_S, "250", 0, 4194304,
	    "Resync rate below which resync is not throttled for application I/O; 0 = never "
	    "throttle."),
	NUM("disk-timeout", D, CONF_U_DECISEC, "0", 0, 6000,
	    "Detach when a local request takes longer than this; 0 = never (dangerous)."),
	ENUM("read-balancing", D, "prefer-local",
	     E("prefer-local", "prefer-remote", "round-robin", "least-pending",
	       "when-congested-remote", "32K-striping", "64K-striping", "128K-striping",
	       "256K-striping", "512K-striping", "1M-striping"),
	     0, "Where reads go when both disks are UpToDate."),
	NUM("rs-discard-granularity", D, CONF_U_BYTES, "0", 0, 1048576,
	    "Resync zeroed ranges as discards of this granularity; 0 = off."),
	BOOL("discard-zeroes-if-aligned", D, "yes",
	     "Treat aligned discards as zeroing the range."),
	BOOL("disable-write-same", D, "no", "Accepted for compatibility."),

	NUM("wfc-timeout", S, CONF_U_SECONDS, "0", 0, 300000,
	    "Time start waits for the peer; 0 = forever."),
	NUM("degr-wfc-timeout", S, CONF_U_SECONDS, "0", 0, 300000,
	    "Wait time when this node was a degraded Primary before it went down."),
	NUM("outdated-wfc-timeout", S, CONF_U_SECONDS, "0", 0, 300000,
	    "Wait time when the peer is known to be Outdated."),
	BOOL("wait-after-sb", S, "no", "Keep waiting for the peer after a split brain."),
	TYPED("become-primary-on", S, CONF_T_HOST, NULL,
	      "Host (or both) to promote at start; normally left to Pacemaker."),
	BOOL("stacked-timeouts", S, "no", "Accepted for compatibility (no stacking)."),

	TYPED("pri-on-incon-degr", H, CONF_T_HANDLER, NULL,
	      "Run when a Primary has neither local nor peer UpToDate data."),
	TYPED("pri-lost-after-sb", H, CONF_T_HANDLER, NULL,
	      "Run when a Primary must lose its data after a split brain and cannot demote."),
	TYPED("pri-lost", H, CONF_T_HANDLER, NULL,
	      "Run when the Primary would become a resync target (rr-conflict call-pri-lost)."),
	TYPED("fence-peer", H, CONF_T_HANDLER, NULL,
	      "Run to fence the peer when it is lost; its exit code (3-7) tells the result."),
	TYPED("unfence-peer", H, CONF_T_HANDLER, NULL,
	      "Run to lift the fence once both disks are UpToDate again."),
	TYPED("local-io-error", H, CONF_T_HANDLER, NULL,
	      "Run on a local I/O error under on-io-error call-local-io-error."),
	TYPED("initial-split-brain", H, CONF_T_HANDLER, NULL,
	      "Run on every detected split brain, resolved or not."),
	TYPED("split-brain", H, CONF_T_HANDLER, NULL, "Run on a split brain left unresolved."),
	TYPED("before-resync-target", H, CONF_T_HANDLER, NULL,
	      "Run before this node becomes resync target; non-zero exit cancels."),
	TYPED("after-resync-target", H, CONF_T_HANDLER, NULL,
	      "Run after this node finished a resync as target."),
	TYPED("before-resync-source", H, CONF_T_HANDLER, NULL,
	      "Run before this node becomes resync source."),
	TYPED("out-of-sync", H, CONF_T_HANDLER, NULL,
	      "Run after online verify found blocks out of sync."),
};
const size_t conf_opts_count = sizeof(conf_opts) / sizeof(conf_opts[0]);

const struct conf_legacy conf_legacies[] = {
	{CONF_LSECT_SYNCER, "rate", CONF_LEGACY_MOVE, D, "resync-rate", NULL},
	{CONF_LSECT_SYNCER, "after", CONF_LEGACY_MOVE, D, "resync-after", NULL},
	{CONF_LSECT_SYNCER, "al-extents", CONF_LEGACY_MOVE, D, "al-extents", NULL},
	{CONF_LSECT_SYNCER, "c-plan-ahead", CONF_LEGACY_MOVE, D, "c-plan-ahead", NULL},
	{CONF_LSECT_SYNCER, "c-fill-target", CONF_LEGACY_MOVE, D, "c-fill-target", NULL},
	{CONF_LSECT_SYNCER, "c-delay-target", CONF_LEGACY_MOVE, D, "c-delay-target", NULL},
	{CONF_LSECT_SYNCER, "c-max-rate", CONF_LEGACY_MOVE, D, "c-max-rate", NULL},
	{CONF_LSECT_SYNCER, "c-min-rate", CONF_LEGACY_MOVE, D, "c-min-rate", NULL},
	{CONF_LSECT_SYNCER, "verify-alg", CONF_LEGACY_MOVE, N, "verify-alg", NULL},
	{CONF_LSECT_SYNCER, "csums-alg", CONF_LEGACY_MOVE, N, "csums-alg", NULL},
	{CONF_LSECT_SYNCER, "use-rle", CONF_LEGACY_MOVE, N, "use-rle", NULL},
	{CONF_LSECT_SYNCER, "cpu-mask", CONF_LEGACY_MOVE, O, "cpu-mask", NULL},
	{CONF_LSECT_SYNCER, "on-no-data-accessible", CONF_LEGACY_MOVE, O,
	 "on-no-data-accessible", NULL},
	{CONF_LSECT_SYNCER, "delay-probe-volume", CONF_LEGACY_IGNORED, D, NULL,
	 "has no effect since DRBD 8.4; remove it"},
	{CONF_LSECT_SYNCER, "delay-probe-interval", CONF_LEGACY_IGNORED, D, NULL,
	 "has no effect since DRBD 8.4; remove it"},
	{CONF_LSECT_SYNCER, "throttle-threshold", CONF_LEGACY_IGNORED, D, NULL,
	 "has no effect since DRBD 8.4; use disk { c-min-rate } instead"},
	{CONF_LSECT_SYNCER, "hold-off-threshold", CONF_LEGACY_IGNORED, D, NULL,
	 "has no effect since DRBD 8.4; use disk { c-min-rate } instead"},
	{CONF_LSECT_SYNCER, "group", CONF_LEGACY_OBSOLETE, D, NULL,
	 "is obsolete since DRBD 8.0 and ignored; order resyncs with "
	 "disk { resync-after RES; } instead"},
	{D, "no-disk-barrier", CONF_LEGACY_NEGATE, D, "disk-barrier", NULL},
	{D, "no-disk-flushes", CONF_LEGACY_NEGATE, D, "disk-flushes", NULL},
	{D, "no-disk-drain", CONF_LEGACY_NEGATE, D, "disk-drain", NULL},
	{D, "no-md-flushes", CONF_LEGACY_NEGATE, D, "md-flushes", NULL},
	{D, "use-bmbv", CONF_LEGACY_IGNORED, D, NULL, "has no effect since DRBD 8.4; remove it"},
	{N, "no-tcp-cork", CONF_LEGACY_NEGATE, N, "tcp-cork", NULL},
	{N, "on-disconnect", CONF_LEGACY_OBSOLETE, N, NULL,
	 "is obsolete since DRBD 8.0 and ignored; reconnecting is automatic, and what "
	 "happens to I/O is set by disk { fencing } and the after-sb policies"},
	{H, "outdate-peer", CONF_LEGACY_MOVE, H, "fence-peer", NULL},
	{G, "disable-io-hints", CONF_LEGACY_OBSOLETE, G, NULL,
	 "is obsolete since DRBD 8.0 and ignored; remove it"},
	{CONF_LSECT_RESOURCE, "protocol", CONF_LEGACY_MOVE, N, "protocol", NULL},
	{CONF_LSECT_RESOURCE, "incon-degr-cmd", CONF_LEGACY_OBSOLETE, H, NULL,
	 "is obsolete since DRBD 8.0 and ignored; put the command in "
	 "handlers { pri-on-incon-degr \"...\"; } instead"},
};

const size_t conf_legacies_count = sizeof(conf_legacies) / sizeof(conf_legacies[0]);

const struct conf_legacy *conf_legacy_find(int sect, const char *name)
{
	size_t i;

	for (i = 0; i < conf_legacies_count; i++)
		if (conf_legacies[i].sect == sect && strcmp(conf_legacies[i].name, name) == 0)
			return &conf_legacies[i];
	return NULL;
}

void conf_opt_format_value(const char *v, char *buf, size_t len)
{
	size_t n = 0, i;
	bool clean = *v && strlen(v) <= 80;

	for (i = 0; clean && v[i]; i++)
		clean = strchr("/._-", v[i]) || (v[i] >= 'a' && v[i] <= 'z') ||
			(v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= '0' && v[i] <= '9');
	if (clean) {
		snprintf(buf, len, "%s", v);
		return;
	}
	if (len < 3) {
		if (len)
			buf[0] = '\0';
		return;
	}
	buf[n++] = '"';
	for (i = 0; v[i] && n + 3 < len; i++) {
		if (v[i] == '"' || v[i] == '\\')
			buf[n++] = '\\';
		buf[n++] = v[i];
	}
	buf[n++] = '"';
	buf[n] = '\0';
}

const struct conf_opt *conf_opt_find(enum conf_sect sect, const char *name)
{
	size_t i;

	for (i = 0; i < conf_opts_count; i++)
		if (conf_opts[i].sect == sect && strcmp(conf_opts[i].name, name) == 0)
			return &conf_opts[i];
	return NULL;
}

const char *conf_sect_name(enum conf_sect sect)
{
	static const char *const names[] = {"global", "options", "net",
					    "disk",   "startup", "handlers"};

	return sect < CONF_SECT_COUNT ? names[sect] : "?";
}

const char *conf_unit_name(enum conf_unit unit)
{
	switch (unit) {
	case CONF_U_NONE:
		return "";
	case CONF_U_BYTES:
		return "bytes";
	case CONF_U_SECTORS:
		return "sectors (512 bytes)";
	case CONF_U_KIB:
		return "KiB";
	case CONF_U_SECONDS:
		return "seconds";
	case CONF_U_DECISEC:
		return "0.1 seconds";
	case CONF_U_KIB_S:
		return "KiB/s";
	}
	return "?";
}

const char *conf_type_name(enum conf_type type)
{
	static const char *const names[] = {"number",   "boolean", "enum",     "string",
					    "handler",  "hash",    "resource", "host",
					    "hex mask", "flag"};

	return names[type];
}

/* The binary shift a bare number in `unit` stands for. */
static int unit_shift(enum conf_unit unit)
{
	switch (unit) {
	case CONF_U_SECTORS:
		return 9;
	case CONF_U_KIB:
	case CONF_U_KIB_S:
		return 10;
	default:
		return 0;
	}
}

int conf_opt_parse_num(const char *text, enum conf_unit unit, uint64_t *out, char *err,
		       size_t errlen)
{
	const char *p = text;
	uint64_t v = 0;
	int shift;

	if (*p < '0' || *p > '9') {
		snprintf(err, errlen, "'%s' is not a number", text);
		return -EINVAL;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10) {
			snprintf(err, errlen, "'%s' is too large", text);
			return -ERANGE;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	switch (*p) {
	case '\0':
		*out = v;
		return 0;
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 's':
		shift = 9;
		break;
	default:
		snprintf(err, errlen, "'%s' has an unknown unit suffix '%c' (use K, M, G or s)",
			 text, *p);
		return -EINVAL;
	}
	if (p[1] != '\0') {
		snprintf(err, errlen, "'%s' has trailing characters after the unit suffix", text);
		return -EINVAL;
	}
	shift -= unit_shift(unit);
	if (shift >= 0) {
		if (v > (UINT64_MAX >> shift)) {
			snprintf(err, errlen, "'%s' is too large", text);
			return -ERANGE;
		}
		v <<= shift;
	} else {
		/* Dividing into a larger unit rounds up, as DRBD does. */
		v = (v >> -shift) + ((v & ((1ULL << -shift) - 1)) != 0);
	}
	*out = v;
	return 0;
}

static int enum_index(const char *const *list, const char *text)
{
	int i;

	for (i = 0; list[i]; i++)
		if (strcmp(list[i], text) == 0)
			return i;
	return -1;
}

static void enum_list(const char *const *list, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; list[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", list[i]);
}

int conf_opt_parse(const struct conf_opt *o, const char *text, struct conf_value *out, char *err,
		   size_t errlen)
{
	char list[512];
	int rc, i;

	memset(out, 0, sizeof(*out));
	switch (o->type) {
	case CONF_T_NUM:
		rc = conf_opt_parse_num(text, o->unit, &out->num, err, errlen);
		if (rc < 0)
			return rc;
		if (out->num < o->min || out->num > o->max) {
			char shown[64];

			snprintf(shown, sizeof(shown), "%llu", (unsigned long long)out->num);
			if (strcmp(shown, text) == 0)
				snprintf(err, errlen, "%s is out of range %llu..%llu%s%s%s", text,
					 (unsigned long long)o->min, (unsigned long long)o->max,
					 o->unit != CONF_U_NONE ? " (in " : "", conf_unit_name(o->unit),
					 o->unit != CONF_U_NONE ? ")" : "");
			else
				snprintf(err, errlen, "%s = %s, out of range %llu..%llu%s%s%s", text,
					 shown, (unsigned long long)o->min, (unsigned long long)o->max,
					 o->unit != CONF_U_NONE ? " (in " : "", conf_unit_name(o->unit),
					 o->unit != CONF_U_NONE ? ")" : "");
			return -ERANGE;
		}
		return 0;
	case CONF_T_BOOL:
		i = enum_index(bools, text);
		if (i < 0) {
			snprintf(err, errlen, "'%s' is not a boolean (use yes or no)", text);
			return -EINVAL;
		}
		out->yes = (i % 2) == 0;
		return 0;
	case CONF_T_ENUM:
		i = enum_index(o->enums, text);
		if (i < 0 && (o->flags & CONF_OPT_ASB) && strncmp(text, "discard-node-", 13) == 0 &&
		    text[13] != '\0')
			i = CONF_ASB_DISCARD_NODE; /* the host is checked later */
		if (i < 0) {
			enum_list(o->enums, list, sizeof(list));
			snprintf(err, errlen, "unknown value '%s'; expected one of: %s%s", text, list,
				 (o->flags & CONF_OPT_ASB) ? ", discard-node-NAME" : "");
			return -EINVAL;
		}
		out->idx = i;
		return 0;
	case CONF_T_HASH:
		i = enum_index(conf_hash_names, text);
		if (i < 0) {
			enum_list(conf_hash_names, list, sizeof(list));
			snprintf(err, errlen, "unknown hash algorithm '%s'; tandem supports: %s", text,
				 list);
			return -EINVAL;
		}
		out->idx = i;
		return 0;
	case CONF_T_STRING:
		if (strcmp(o->name, "nbd-allow-group") == 0 &&
		    (!text[0] || text[0] == '-' || strlen(text) > 63 || strpbrk(text, ":/, \t\n"))) {
			snprintf(err, errlen, "a group name is 1 to 63 characters, without ':', "
					      "'/', ',' or blanks, not starting with '-'");
			return -EINVAL;
		}
		if (strcmp(o->name, "shared-secret") == 0 && strlen(text) > 64) {
			snprintf(err, errlen, "the secret is %zu characters long; at most 64 are "
					      "allowed",
				 strlen(text));
			return -ERANGE;
		}
		return 0;
	case CONF_T_HEX:
		for (i = 0; text[i]; i++) {
			char c = text[i];

			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
			      (c >= 'A' && c <= 'F') || (i == 1 && (c == 'x' || c == 'X') &&
							 text[0] == '0') ||
			      c == ','))
				break;
		}
		if (i == 0 || text[i] != '\0') {
			snprintf(err, errlen, "'%s' is not a hexadecimal CPU mask (e.g. 3 or ff)",
				 text);
			return -EINVAL;
		}
		return 0;
	case CONF_T_HANDLER:
	case CONF_T_RESOURCE:
	case CONF_T_HOST:
	case CONF_T_FLAG:
		return 0;
	}
	return -EINVAL;
}

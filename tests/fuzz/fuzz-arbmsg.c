/*
 * fuzz-arbmsg: libFuzzer target for the CPG arbiter's message codec
 * (replicator/lib/arbmsg.c; doc/arbiter.md §3-§5).
 *
 * The input is one message as CPG delivers it, decoded as from the node
 * its header names (bytes 12..15; 0 when it is shorter). Then:
 *  - every failure is -EBADMSG, -EPROTONOSUPPORT (only for a major other
 *    than ARBMSG_MAJOR) or -ENOMSG (only for a type unknown to a newer
 *    minor), with a one-line reason; a success has an empty err unless
 *    an enum was clamped, and then a reason naming it;
 *  - from any other node the message never decodes;
 *  - what decodes encodes again into exactly header + minor-0 body
 *    (-ENOSPC with one byte less), from an exactly sized buffer that
 *    decodes to the same message (the minor and the clamped flag aside);
 *    a minor-0 message without clamped enums encodes to the input's
 *    bytes.
 * Anything else is abort()ed.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void __attribute__((noreturn)) fail(const char *what, int rc, const char *why)
{
	fprintf(stderr, "fuzz-arbmsg: %s (rc %d: %s)\n", what, rc, why ? why : "");
	abort();
}

static void check_reason(int rc, const char *why, const struct arbmsg *m)
{
	size_t n = strnlen(why, ARBMSG_ERR_MAX);

	if (rc != -EBADMSG && rc != -EPROTONOSUPPORT && rc != -ENOMSG)
		fail("unexpected error code", rc, why);
	if (n == 0 || n >= ARBMSG_ERR_MAX - 1 || strchr(why, '\n'))
		fail("reason empty, truncated or multi-line", rc, why);
	if (rc == -EPROTONOSUPPORT && m->major == ARBMSG_MAJOR)
		fail("major refused that is this one", rc, why);
	if (rc == -ENOMSG && (m->minor <= ARBMSG_MINOR || arbmsg_body_size(m->type)))
		fail("ignored a known type or an old minor", rc, why);
}

/* m decoded from data (size bytes): it must encode and decode back. */
static void check_reencode(const struct arbmsg *m, const char *why, const uint8_t *data,
			   size_t size)
{
	size_t total = ARBMSG_HDR_SIZE + arbmsg_body_size(m->type), len = 0;
	char why2[ARBMSG_ERR_MAX] = "";
	struct arbmsg want = *m, again;
	uint8_t *out;
	int rc;

	if (m->clamped ? !strstr(why, "taken as") : why[0] != '\0')
		fail("err does not match the clamped flag", m->clamped, why);
	out = malloc(total);
	if (!out)
		abort();
	rc = arbmsg_encode(m, out, total - 1, &len);
	if (rc != -ENOSPC)
		fail("encoding into one byte less than needed did not fail", rc,
		     arbmsg_type_name(m->type));
	rc = arbmsg_encode(m, out, total, &len);
	if (rc || len != total)
		fail("a decoded message does not encode", rc, arbmsg_type_name(m->type));
	if (m->minor == ARBMSG_MINOR && !m->clamped &&
	    (size != total || memcmp(out, data, total) != 0))
		fail("re-encoding changed the bytes", 0, arbmsg_type_name(m->type));
	rc = arbmsg_decode(out, total, m->nodeid, &again, why2, sizeof(why2));
	if (rc || again.clamped)
		fail("the re-encoded message does not decode cleanly", rc, why2);
	want.minor = ARBMSG_MINOR;
	want.clamped = false;
	if (memcmp(&want, &again, sizeof(want)) != 0)
		fail("the round trip changed the message", 0, arbmsg_type_name(m->type));
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[ARBMSG_ERR_MAX] = "";
	uint32_t from = 0;
	struct arbmsg m;
	int rc;

	if (size >= 16)
		from = (uint32_t)data[12] | (uint32_t)data[13] << 8 | (uint32_t)data[14] << 16 |
		       (uint32_t)data[15] << 24;
	rc = arbmsg_decode(data, size, from, &m, why, sizeof(why));
	if (rc)
		check_reason(rc, why, &m);
	else
		check_reencode(&m, why, data, size);

	/* a forged sender never passes */
	rc = arbmsg_decode(data, size, from ^ 0x80000001u, &m, why, sizeof(why));
	if (rc == 0)
		fail("decoded from a node that is not the header's", 0, why);
	check_reason(rc, why, &m);
	return 0;
}

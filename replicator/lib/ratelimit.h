/*
 * ratelimit: how often a kind of log line may go out, for the lines that a
 * client can cause (bad NBD requests, refused or idle connections): the
 * first `burst` at once, then one every `interval_ms`, each allowed line
 * told how many were left out since the one before it. Safe from any
 * thread.
 */
#ifndef TANDEM_RATELIMIT_H
#define TANDEM_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ratelimit;

/* burst and interval_ms at least 1: -EINVAL; -ENOMEM. */
int ratelimit_new(unsigned int burst, unsigned int interval_ms, struct ratelimit **out);
void ratelimit_free(struct ratelimit *rl);
/* A full bucket again, nothing counted as left out (the total stays): for
 * a new episode, e.g. the refusals after a connection was made. */
void ratelimit_reset(struct ratelimit *rl);
/* The line the last call refused went out after all (another limiter let
 * it): it is not counted among those left out. */
void ratelimit_unrefuse(struct ratelimit *rl);

/*
 * May a line go out at now_ms (a monotonic clock in milliseconds)? When it
 * may and lines were left out since the last one, note (if not NULL) gets
 * " (and N more like it in the last S s)" to append to the line, else "".
 */
bool ratelimit_allow(struct ratelimit *rl, uint64_t now_ms, char *note, size_t len);
/* The same at CLOCK_MONOTONIC's now. */
bool ratelimit_ok(struct ratelimit *rl, char *note, size_t len);
/* How many lines were asked for in all, allowed or not. */
uint64_t ratelimit_total(const struct ratelimit *rl);

#endif

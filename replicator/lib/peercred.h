/*
 * peercred: who is at the other end of a Unix socket (SO_PEERCRED), and
 * the user and group databases' answers about it: a group by name, and
 * whether a user is a member of a group.
 */
#ifndef TANDEM_PEERCRED_H
#define TANDEM_PEERCRED_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

/* The connecting process's pid, uid and gid; -errno. */
int peercred_of(int fd, struct ucred *out);
/* The gid of a group name: 0, -ENOENT (no such group), or the lookup's
 * -errno (NSS unreachable, -ENOMEM). */
int peercred_group(const char *name, gid_t *gid);
/* Is uid a member of gid: its passwd entry's group, or one of its
 * supplementary groups in the group database (getgrouplist)? False when
 * the user is unknown or the lookup fails. */
bool peercred_in_group(uid_t uid, gid_t gid);

#endif

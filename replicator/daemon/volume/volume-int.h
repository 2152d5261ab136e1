/*
 * volume-int: private to the volume room: what volume.c and volume-md.c
 * share. The door is volume/volume.h.
 */
#ifndef TANDEM_VOLUME_INT_H
#define TANDEM_VOLUME_INT_H

struct volume;

/* A user of the volume is done (lock held): detach waits for none. */
void volume_leave(struct volume *v);

#endif

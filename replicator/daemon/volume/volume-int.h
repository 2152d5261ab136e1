/*
 * volume-int: private to the volume room: what volume.c, volume-md.c
 * and volume-extents.c share. The door is volume/volume.h.
 */
#ifndef TANDEM_VOLUME_INT_H
#define TANDEM_VOLUME_INT_H

struct volume;

/* A data request enters the volume (lock held): 0, or -EIO once it
 * failed or while it is detached (it waits while frozen). */
int volume_enter(struct volume *v);
/* A user of the volume is done (lock held): detach waits for none. */
void volume_leave(struct volume *v);

#endif

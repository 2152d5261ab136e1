/*
 * sbsave-int.h: what sbsave.c (writing sets) and sbsave-read.c (reading,
 * listing, discarding them) share. Not for other modules: they use
 * sbsave.h.
 */
#ifndef TANDEM_SBSAVE_INT_H
#define TANDEM_SBSAVE_INT_H

#include "sbsave.h"

/* A manifest being written; renamed to SBSAVE_MANIFEST when complete. */
#define SBSAVE_MANIFEST_TMP SBSAVE_MANIFEST ".tmp"

/* fsync the directory at path: 0 or a negative errno. */
int sbsave_fsync_path(const char *path);

#endif

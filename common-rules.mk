# Included by every Makefile.am: shared flags.
AM_CPPFLAGS = -I$(top_srcdir)/replicator/lib -I$(top_builddir)
AM_CFLAGS = $(WARN_CFLAGS) $(SAN_CFLAGS)
AM_LDFLAGS = $(SAN_LDFLAGS)

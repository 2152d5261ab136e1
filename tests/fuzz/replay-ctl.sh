#!/bin/sh
# make check: replay the seed corpus of fuzz-ctl (see replay-target.sh).
exec "${SHELL:-/bin/sh}" "${srcdir:-.}/replay-target.sh" ctl

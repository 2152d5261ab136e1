#!/bin/sh
# make check: replay the seed corpus of fuzz-md (see replay-target.sh).
exec "${SHELL:-/bin/sh}" "${srcdir:-.}/replay-target.sh" md

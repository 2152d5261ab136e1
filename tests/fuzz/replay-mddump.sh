#!/bin/sh
# make check: replay the seed corpus of fuzz-mddump (see replay-target.sh).
exec "${SHELL:-/bin/sh}" "${srcdir:-.}/replay-target.sh" mddump

#!/bin/sh
# make check: replay the seed corpus of fuzz-setup (see replay-target.sh).
exec "${SHELL:-/bin/sh}" "${srcdir:-.}/replay-target.sh" setup

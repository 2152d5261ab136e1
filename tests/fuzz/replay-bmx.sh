#!/bin/sh
# make check: replay the seed corpus of fuzz-bmx (see replay-target.sh).
exec "${SHELL:-/bin/sh}" "${srcdir:-.}/replay-target.sh" bmx

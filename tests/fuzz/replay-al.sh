#!/bin/sh
# make check: replay the seed corpus of fuzz-al (see replay-target.sh).
exec "${SHELL:-/bin/sh}" "${srcdir:-.}/replay-target.sh" al

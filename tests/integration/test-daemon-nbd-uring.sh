#!/bin/sh
# The same as test-daemon-nbd.sh with the data path through the io_uring
# engine (io-engine io_uring in the disk section) instead of system calls
# on the connection thread; test-daemon-nbd.sh checks that status says
# io_uring is in use (the engine would fall back to threads silently), and
# skips with the reason where io_uring cannot be set up.
IO_ENGINE=io_uring
export IO_ENGINE
unset TANDEM_IO
exec sh "$(dirname "$0")/test-daemon-nbd.sh"

#!/bin/sh
# The same as test-daemon-nbd.sh with the data path through the io_uring
# engine (TANDEM_IO=io_uring) instead of system calls on the connection
# thread.
TANDEM_IO=io_uring
export TANDEM_IO
exec sh "$(dirname "$0")/test-daemon-nbd.sh"

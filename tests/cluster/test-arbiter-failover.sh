#!/bin/sh
# test-failover.sh with `fencing resource-only`, the handlers of
# doc/fence-handlers.md and tandem-arbiterd on both nodes (issue 18: the
# time from a node kill to the survivor serving, with the arbiter).
TANDEM_FENCING=1
TANDEM_ARBITER=1
. "$(dirname "$0")/test-failover.sh"

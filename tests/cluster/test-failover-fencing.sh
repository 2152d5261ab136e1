#!/bin/sh
# test-failover.sh with `fencing resource-only` and the handlers of
# doc/fence-handlers.md (fence-peer, unfence-peer, after-resync-target).
TANDEM_FENCING=1
. "$(dirname "$0")/test-failover.sh"

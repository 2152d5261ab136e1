#!/bin/sh
echo placeholder
exit 77

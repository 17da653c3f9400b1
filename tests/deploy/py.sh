#!/usr/bin/env bash
# Runs a test script on Debian's Python (/usr/bin/python3, modules from Debian packages
# only: python3-yaml), whatever python3 comes first on PATH.
exec /usr/bin/python3 -B "$@"

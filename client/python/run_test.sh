#!/usr/bin/env bash
# Runs a Python test on Debian's /usr/bin/python3 (python3-grpcio, python3-protobuf,
# python3-numpy), with the package and its generated stubs (both under client/python in
# the runfiles) importable.
export PYTHONPATH="$PWD/client/python${PYTHONPATH:+:$PYTHONPATH}"
exec /usr/bin/python3 -B "$@"

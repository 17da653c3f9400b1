# Sourced by the run_*.sh scripts: a device call returns at most 8 files from $OUT, so a
# script writes into a working folder and, when it exits, bundles everything into
# $OUT/NAME.tar.gz and copies the files named in BUNDLE_ALSO (its summary) beside it.
#   OUT=${OUT:-$PWD/device_out}; source bench/device/bundle_out.sh server_runs parity.txt
# Unpack here with: tar xzf FILES_AT/NAME.tar.gz
BUNDLE_NAME=$1
shift
BUNDLE_ALSO=("$@")
BUNDLE_DEST=$OUT
mkdir -p "$BUNDLE_DEST"
OUT=$(mktemp -d)
bundle_out() {
  tar -C "$OUT" -czf "$BUNDLE_DEST/$BUNDLE_NAME.tar.gz" .
  for f in "${BUNDLE_ALSO[@]}"; do [ -f "$OUT/$f" ] && cp "$OUT/$f" "$BUNDLE_DEST/"; done
  rm -rf "$OUT"
}
trap bundle_out EXIT

#!/bin/bash
# Writes peer_vmaf_models.json: libvmaf's per-frame vmaf and features for every corpus case,
# for each model named below, as test data for vmaf_corpus_test (so it runs without libvmaf).
#
#   make_peer_vmaf_models.sh VMAF_BINARY [CORPUS_DIR] > peer_vmaf_models.json
#
# VMAF_BINARY: the vmaf CLI of Netflix vmaf 3.2.0 (commit f85a8536), CPU, built with
# -Dbuilt_in_models=true, with one local change so that its JSON keeps every bit: in
# libvmaf/src/output.c, vmaf_write_output_json's two per-frame formats "%.6f" and "%.16f"
# become "%.17g" (the CLI has no precision option; %.17g identifies a double uniquely).
# 16-bit cases are read from the corpus's raw .yuv copies (libvmaf's y4m reader refuses
# them). Cases libvmaf cannot read (its y4m reader: odd sizes, 8x8) are recorded as
# {"error": ...}.
set -euo pipefail
vmaf=${1:?usage: $0 VMAF_BINARY [CORPUS_DIR]}
corpus=${2:-${EXACTQ_CORPUS:-/work/shared/corpus}}
models="vmaf_4k_v0.6.1 vmaf_v0.6.1neg"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for model in $models; do
  for id in $(python3 -c 'import json,sys; [print(c["id"]) for c in json.load(open(sys.argv[1]))["cases"]]' "$corpus/cases.json"); do
    read -r ref dist w h bits chroma < <(python3 -c 'import json,sys; c=[c for c in json.load(open(sys.argv[1]))["cases"] if c["id"]==sys.argv[2]][0]; print(c["ref"], c["dist"], c["width"], c["height"], c["bitdepth"], c["chroma"])' "$corpus/cases.json" "$id")
    input=(-r "$corpus/$ref" -d "$corpus/$dist")
    # 16 bits: libvmaf's y4m reader refuses C420p16; the corpus has raw planar copies.
    raw_ref="$corpus/${ref%.y4m}.yuv"
    raw_dist="$corpus/${dist%.y4m}.yuv"
    if [ "$bits" = 16 ] && [ -f "$raw_ref" ] && [ -f "$raw_dist" ]; then
      input=(-r "$raw_ref" -d "$raw_dist" -w "$w" -h "$h" -p "$chroma" -b 16)
    fi
    if ! "$vmaf" -q --threads 1 "${input[@]}" --model "version=$model" \
        --json -o "$tmp/$model.$id.json" >"$tmp/$model.$id.log" 2>&1; then
      rm -f "$tmp/$model.$id.json"
    fi
  done
done

python3 - "$corpus/cases.json" "$tmp" "$models" <<'PY'
import json, sys
cases = [c["id"] for c in json.load(open(sys.argv[1]))["cases"]]
tmp, models = sys.argv[2], sys.argv[3].split()
out = {"peer": "vmaf CLI, Netflix vmaf 3.2.0 (commit f85a8536), CPU, --threads 1, "
               "--model version=MODEL, JSON per-frame values printed with %.17g (local patch "
               "of output.c); made by make_peer_vmaf_models.sh",
       "models": {}}
for m in models:
    per_case = {}
    for id in cases:
        try:
            j = json.load(open(f"{tmp}/{m}.{id}.json"))
        except (OSError, ValueError):
            log = open(f"{tmp}/{m}.{id}.log").read().strip().splitlines()
            per_case[id] = {"error": (log[-1] if log else "failed")}
            continue
        frames = []
        for f in j["frames"]:
            # vmaf_v0.6.1neg's VIF and ADM run with vif/adm_enhn_gain_limit=1, which libvmaf
            # appends to their names ("integer_adm2_egl_1"); ExactQ keeps the plain names.
            metrics = {k.replace("_egl_1", ""): v for k, v in f["metrics"].items()}
            frames.append({k: metrics[k] for k in
                           ["vmaf", "integer_vif_scale0", "integer_vif_scale1", "integer_vif_scale2",
                            "integer_vif_scale3", "integer_adm2", "integer_motion2"]})
        per_case[id] = {"frames": frames}
    out["models"][m] = per_case
# Python's repr of a float is the shortest string that reads back as the same double.
json.dump(out, sys.stdout, indent=1)
print()
PY

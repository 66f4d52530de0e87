# Shared by the NVML end-to-end tests (sourced after tests/e2e/lib.sh and
# require_jq): the NVML test double and a short trace through it.
N=$top_builddir/tests/gpu/libnvidia-ml.so.1
[ -f "$N" ] || framework_failure "the NVML double is not built"

# nvml_run NAME SCRIPT: traces `sleep 30` for 6 s at 0.5 s, --hang-after 2,
# with the double driven by SCRIPT; prints the verdict's "class confidence".
nvml_run() {
	GPUPROBE_NVML_LIB=$N GPUPROBE_FAKE_NVML=$2 \
		gp trace -q --interval 0.5 --seconds 6 --hang-after 2 -o "$TMP/$1.jsonl" -- sleep 30 \
		> "$TMP/$1.out" 2>&1
	jq -r 'select(.type == "verdict") | "\(.class) \(.confidence)"' "$TMP/$1.jsonl"
}

# same_in_report NAME "CLASS CONFIDENCE": report of the saved file judges alike.
same_in_report() {
	_r=$(gp report --format json "$TMP/$1.jsonl" | jq -r '.results[0].verdict | "\(.class) \(.confidence)"')
	ok "$1: report judges the same ($_r)" test "$_r" = "$2"
}

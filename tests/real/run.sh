#!/bin/sh
# Real programs nobody here wrote, each with its truth written beside it
# (issue 11).  One table per group (cases.tsv for `make check`,
# bench-cases.tsv for bench/real-programs.sh), one runner: each case
# starts a real program, traces it with a real `gpuprobe trace -q -o`,
# reads the last `verdict` line of the result and compares it with the
# truth.  One line per case (name, expected, got, ok/FAIL), then a count.
#
# Table: NAME | TARGET | TRACE-OPTIONS | CLASS | CONFIDENCE | WORDS | PROCESS | WHY
# (fields split on " | "; '#' lines and blank lines skipped; WHY is the
# truth in words: what the program really does, by DESIGN.md's principles.)
#   TARGET   -- WORDS     gpuprobe trace OPTIONS -- WORDS (launched; a
#                         process tree when WORDS starts one)
#            pid WORDS    start WORDS (one simple command) in the
#                         background, let it settle (REAL_SETTLE, 1 s),
#                         trace OPTIONS PID
#            hook NAME    tests/real/hooks.sh's setup_NAME starts what the
#                         case needs and sets TARGET_PID (and, if it must,
#                         case_cleanup), or TARGET_CMD (shell words,
#                         launched as with --); it may `skip_case REASON`.
#   CLASS    the verdict class exactly; `a|b` where the truth is honestly
#            either (the WHY says why); `any`: only a verdict line, no crash.
#   CONFIDENCE  any | not-high | a comma list (low,medium).
#   WORDS    - or checks joined by " && ", each case-insensitive:
#            ERE        the verdict's summary matches ERE
#            !ERE       the summary does not match ERE
#            exit:N     the target exited with status N (the `exit` line;
#                       a launched target only: a PID's status is unknown)
#            stacks:ERE a frame (symbol or Python function) of the stacks
#                       taken at the hang (a `stacks` line at or after the
#                       verdict's since_s, or stacks inside the verdict)
#   PROCESS  - or an ERE of comm names: the verdict names that process
#            (its comm as a whole word, or its pid, in the summary or a
#            top-level field of the verdict: the process where the
#            progress or the hang is).
# Placeholders in TARGET and OPTIONS: @REAL@ this folder, @TMP@ the case's
# scratch folder, @PY@ python3, @WORKLOADS@ the build tree's tests/workloads.
#
# Every case also requires: gpuprobe exits 0 (never a crash: >= 128, nor
# 124 a hang of the tracer) and writes a verdict line; its text output
# says no "flat flat" and puts no thread over 100% CPU.
#
# Environment:
#   GPUPROBE      the binary (default: the build tree's src/gpuprobe).
#   CASES         the table (default tests/real/cases.tsv).
#   REAL_GROUP    run only the cases whose name starts with GROUP-.
#   REAL_ONLY     run only the cases whose name matches this ERE.
#   REAL_XFAIL    names of cases known to fail today (space-separated): a
#                 failure there is reported XFAIL and does not fail the
#                 test; a pass is reported XPASS.  Empty by default: the
#                 table is the truth, and failures fail `make check`.
#   REAL_RESULTS  append one tab-separated line per case to this file
#                 (name, truth, got, ok, reason, summary) for bench/.
#   REAL_KEEP     keep the scratch folder (results of each case) here.
# Exit: 0 all ok, 1 a case failed, 77 nothing to run (a tool missing),
# 99 the harness broke.
E2E_TIMEOUT=${E2E_TIMEOUT:-900}
: "${top_srcdir:=$(cd "${0%/*}/../.." && pwd)}"
. "$top_srcdir/tests/e2e/lib.sh"
require_jq
REAL=$top_srcdir/tests/real
: "${CASES:=$REAL/cases.tsv}"
[ -f "$CASES" ] || framework_failure "no table at $CASES"
command -v python3 >/dev/null 2>&1 || skip "python3 is missing"
command -v setsid >/dev/null 2>&1 || skip "setsid(1) is missing (util-linux)"
. "$REAL/hooks.sh"
[ -f "$REAL/serving/hooks.sh" ] && . "$REAL/serving/hooks.sh"
SETTLE=${REAL_SETTLE:-1}
NICE="nice -n 10"

# ---- helpers ---------------------------------------------------------
# sweep SID: end every process of the session SID (the case's own
# processes: each case runs in a session of its own), and SID itself,
# round after round until none is left (lib.sh's kill_all: one round let
# pool-rest.py's Pool replace the workers it killed, for good).  Whatever
# a case leaves when the runner itself is cut short, lib.sh's cleanup
# kills by the test's tag.
sweep() {
	[ -n "$1" ] || return 0
	kill -KILL "$1" 2>/dev/null
	kill_all procs_in sid "$1"
	return 0
}
CASE_PIDS=
case_track() { CASE_PIDS="$CASE_PIDS $*"; bg_track "$@"; }
case_cleanup() { :; }
SKIP_REASON=
skip_case() { SKIP_REASON=$*; }
# start_bg WORDS...: start WORDS in a session of its own (setsid execs,
# so $! is the program); sets BG_PID.
start_bg() {
	setsid "$@" </dev/null >/dev/null 2>&1 &
	BG_PID=$!
	case_track "$BG_PID"
}
# A TCP port nobody listens on (for the servers of bench-cases.tsv).
free_port() {
	_port=$(( 20000 + $$ % 20000 ))
	while ss -Hltn "sport = :$_port" 2>/dev/null | grep -q .; do
		_port=$((_port + 1))
	done
	echo "$_port"
}

expand() {
	printf '%s' "$1" | sed -e "s|@REAL@|$REAL|g" -e "s|@TMP@|$CT|g" -e "s|@PY@|python3|g" \
		-e "s|@WORKLOADS@|$WORKLOADS|g"
}
trim() { printf '%s' "$1" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'; }
inlist() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }

# ---- the cases -------------------------------------------------------
n=0; nok=0; nfail=0; nxfail=0; nxpass=0; nskip=0; FAILED=
printf '%-24s %-28s %-28s %s\n' case expected got result
while IFS= read -r line; do
	case $line in ''|'#'*) continue ;; esac
	name=$(trim "${line%% | *}"); rest=${line#* | }
	target=$(trim "${rest%% | *}"); rest=${rest#* | }
	opts=$(trim "${rest%% | *}"); rest=${rest#* | }
	want=$(trim "${rest%% | *}"); rest=${rest#* | }
	wconf=$(trim "${rest%% | *}"); rest=${rest#* | }
	words=$(trim "${rest%% | *}"); rest=${rest#* | }
	wproc=$(trim "${rest%% | *}"); why=$(trim "${rest#* | }")
	[ -n "$why" ] && [ "$why" != "$wproc" ] || framework_failure "$name: a line with fewer than 8 fields"
	if [ -n "$REAL_GROUP" ]; then
		case $name in "$REAL_GROUP"-*) ;; *) continue ;; esac
	fi
	if [ -n "$REAL_ONLY" ] && ! printf '%s\n' "$name" | grep -Eq -- "$REAL_ONLY"; then
		continue
	fi
	n=$((n + 1))
	CT=$TMP/$name
	mkdir -p "$CT" || framework_failure "mkdir $CT"
	out=$CT/result.jsonl; log=$CT/trace.log
	opts_x=$(expand "$opts")
	TARGET_PID=; CASE_PIDS=; SKIP_REASON=; BG_PID=
	case_cleanup() { :; }
	gp_pid=
	expect="$want${wconf:+ ($wconf)}"
	[ "$wconf" = any ] && expect=$want

	TARGET_CMD=
	case $target in
	'-- '*) TARGET_CMD=$(expand "${target#-- }") ;;
	'pid '*)
		eval "set -- $(expand "${target#pid }")"
		start_bg $NICE "$@"
		TARGET_PID=$BG_PID
		sleep "$SETTLE"
		;;
	'hook '*)
		h=${target#hook }
		command -v "setup_$h" >/dev/null 2>&1 || framework_failure "$name: no setup_$h in hooks.sh"
		"setup_$h"
		;;
	*) framework_failure "$name: TARGET must start with '-- ', 'pid ' or 'hook ': $target" ;;
	esac
	if [ -z "$SKIP_REASON" ] && [ -n "$TARGET_CMD" ]; then
		eval "set -- $TARGET_CMD"
		# A session of its own: whatever the launched tree leaves
		# behind (gpuprobe ends its child, not the grandchildren) is
		# swept by session id.
		setsid $NICE timeout -k 2 "${GP_TIMEOUT:-60}" "$GPUPROBE" trace -q -o "$out" \
			$opts_x -- "$@" </dev/null >"$log" 2>&1 &
		gp_pid=$!
	fi
	if [ -n "$SKIP_REASON" ]; then
		printf '%-24s %-28s %-28s %s\n' "$name" "$expect" - "SKIP ($SKIP_REASON)"
		nskip=$((nskip + 1))
		case_cleanup
		for p in $CASE_PIDS; do sweep "$p"; done
		[ -n "$REAL_RESULTS" ] && printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$expect" - SKIP "$SKIP_REASON" - >> "$REAL_RESULTS"
		continue
	fi
	if [ -z "$gp_pid" ]; then
		[ -n "$TARGET_PID" ] && [ -d "/proc/$TARGET_PID" ] || framework_failure "$name: the target did not start"
		setsid $NICE timeout -k 2 "${GP_TIMEOUT:-60}" "$GPUPROBE" trace -q -o "$out" \
			$opts_x "$TARGET_PID" </dev/null >"$log" 2>&1 &
		gp_pid=$!
	fi
	wait "$gp_pid"; rc=$?
	sweep "$gp_pid"
	case_cleanup
	for p in $CASE_PIDS; do sweep "$p"; done

	# ---- judge -------------------------------------------------------
	why_fail=
	v=
	[ -f "$out" ] && v=$(jq -c 'select(.type == "verdict")' "$out" 2>/dev/null | tail -n 1)
	if [ $rc -ne 0 ]; then
		why_fail="gpuprobe exit $rc"
		[ $rc -ge 128 ] && why_fail="gpuprobe crashed (exit $rc)"
		[ $rc -eq 124 ] && why_fail="gpuprobe hung (timeout)"
	fi
	if [ -z "$v" ]; then
		got="(no verdict)"; conf=; summary=
		why_fail="${why_fail:+$why_fail; }no verdict line"
	else
		got=$(printf '%s' "$v" | jq -r '.class // "?"')
		conf=$(printf '%s' "$v" | jq -r '.confidence // "?"')
		summary=$(printf '%s' "$v" | jq -r '.summary // ""')
		since=$(printf '%s' "$v" | jq -r '.since_s // 0')
		if [ "$want" != any ] && ! printf '%s\n' "$got" | grep -Eqx -- "$want"; then
			why_fail="${why_fail:+$why_fail; }class"
		fi
		case $wconf in
		any|'') ;;
		not-high) [ "$conf" = high ] && why_fail="${why_fail:+$why_fail; }confidence high" ;;
		*) inlist "$conf" "$(printf '%s' "$wconf" | tr ',' ' ')" ||
			why_fail="${why_fail:+$why_fail; }confidence $conf" ;;
		esac
		if [ "$words" != - ]; then
			stk=$(jq -r --argjson s "$since" '
				select((.type == "stacks" and ((.t // 0) >= $s - 0.5))
				       or .type == "verdict")
				| (.. | objects | (.symbol?, .function?) | strings),
				  (.. | objects | .frames? | arrays | .[] | strings)' "$out" 2>/dev/null)
			rest=$words
			while [ -n "$rest" ]; do
				w=${rest%% && *}
				[ "$w" = "$rest" ] && rest= || rest=${rest#* && }
				case $w in
				'!'*) printf '%s\n' "$summary" | grep -Eqi -- "${w#!}" &&
					why_fail="${why_fail:+$why_fail; }summary says /${w#!}/" ;;
				exit:*) es=$(jq -r 'select(.type == "exit") | "\(.status) \(.signal)"' "$out" | tail -n 1)
					[ "$es" = "${w#exit:} null" ] ||
						why_fail="${why_fail:+$why_fail; }target exit (status signal) $es, not ${w#exit:}" ;;
				stacks:*) printf '%s\n' "$stk" | grep -Eqi -- "${w#stacks:}" ||
					why_fail="${why_fail:+$why_fail; }no /${w#stacks:}/ in the stacks at the hang" ;;
				*) printf '%s\n' "$summary" | grep -Eqi -- "$w" ||
					why_fail="${why_fail:+$why_fail; }summary lacks /$w/" ;;
				esac
			done
		fi
		if [ "$wproc" != - ]; then
			# Where the verdict names a process: the summary and its
			# top-level fields (not the evidence table, the phases, nor
			# the stacks, which list every thread).
			named=$(printf '%s' "$v" | jq -r '
				[.summary, (to_entries[]
				  | select(.key | IN("evidence", "phases", "stacks", "stuck", "summary", "judged") | not)
				  | .value | tostring)] | join(" ")')
			pids=$(jq -r --arg re "^($wproc)\$" '
				select(.type == "target" and ((.comm // "") | test($re)))
				| .pid' "$out" 2>/dev/null | sort -u | tr '\n' '|')
			pids=${pids%|}
			W='(^|[^A-Za-z0-9_.-])'; E='($|[^A-Za-z0-9_-])'
			if ! printf '%s\n' "$named" | grep -Eq -- "$W($wproc)$E" &&
			   { [ -z "$pids" ] || ! printf '%s\n' "$named" | grep -Eq -- "$W($pids)$E"; }; then
				why_fail="${why_fail:+$why_fail; }does not name /$wproc/"
			fi
		fi
	fi
	# Every case, whatever its truth: the text gpuprobe printed states no
	# impossible fact (issue 11 item 7): no phase "flat flat", no one
	# thread over 100% of a core.
	if grep -q 'flat flat' "$log"; then
		why_fail="${why_fail:+$why_fail; }text says 'flat flat'"
	fi
	if grep -Eq 'thread[^%]* (10[1-9]|1[1-9][0-9]|[2-9][0-9][0-9]|[0-9]{4,})(\.[0-9]+)?%' "$log"; then
		why_fail="${why_fail:+$why_fail; }a thread over 100% CPU in the text"
	fi
	gotc="$got${conf:+ ($conf)}"
	if [ -z "$why_fail" ]; then
		res=ok
		if inlist "$name" "$REAL_XFAIL"; then res=XPASS; nxpass=$((nxpass + 1)); else nok=$((nok + 1)); fi
	elif inlist "$name" "$REAL_XFAIL"; then
		res="XFAIL ($why_fail)"; nxfail=$((nxfail + 1))
	else
		res="FAIL ($why_fail)"; nfail=$((nfail + 1)); FAILED="$FAILED $name"
	fi
	printf '%-24s %-28s %-28s %s\n' "$name" "$expect" "$gotc" "$res"
	if [ "$res" != ok ]; then
		# The lines a person reads, as gpuprobe printed them.
		grep -A1 -E '^verdict:' "$log" | sed 's/^/      | /'
		grep -E '^gpuprobe[^ ]*: |free\(\)|Assertion|Sanitizer|Aborted|core dumped' "$log" |
			grep -v '^gpuprobe trace: pid' |
			head -n 3 | sed 's/^/      ! /'
	fi
	[ -n "$REAL_RESULTS" ] && printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$expect" "$gotc" \
		"$([ -n "$why_fail" ] && echo FAIL || echo ok)" "$why_fail" "$summary" >> "$REAL_RESULTS"
	if [ -n "$REAL_KEEP" ]; then
		mkdir -p "$REAL_KEEP" && cp "$out" "$REAL_KEEP/$name.jsonl" 2>/dev/null
		cp "$log" "$REAL_KEEP/$name.log" 2>/dev/null
	fi
done < "$CASES"

say "$n cases: $nok ok, $nfail FAIL, $nxfail XFAIL, $nxpass XPASS, $nskip SKIP${FAILED:+ (failed:$FAILED)}"
[ $n -eq 0 ] && skip "no case in $CASES${REAL_GROUP:+ for group $REAL_GROUP}${REAL_ONLY:+ matching $REAL_ONLY}"
[ $nfail -eq 0 ] || exit 1
[ $((nok + nxfail + nxpass)) -eq 0 ] && skip "every case skipped"
exit 0

#!/bin/sh
# The bad-input suite (strace's gen_tests style): one table, cases.tsv,
# one runner.  Each case runs gpuprobe under `timeout 10` and checks:
#   - the exit code the table says (64 usage, 1 runtime, 0 works with
#     less data); never >= 128 (a crash) nor 124 (a hang);
#   - stderr: exactly one "gpuprobe...: " line matching the table's ERE
#     (argp's "Try `gpuprobe X --help'" line and "gpuprobe: hint:" lines
#     may come with it); for exit 0, no error line at all and the ERE
#     matched against the whole of stderr;
#   - every input file is untouched: sha256 and mtime of each file under
#     @IN@ and of each regular file the case names, before and after.
# Table: ARGS | EXIT | ERE [| nobody]   (fields split on " | "; '#' and
# blank lines skipped; ARGS are shell words, expanded after the
# placeholders below; "nobody" runs the case as uid/gid 65534).
# Placeholders: @IN@ the fixture directory, @OUT@ an empty scratch
# directory (per case), @PID@ a live process nobody traces, @ZOMBIE@ a
# zombie, @FAKE_HSA@ the HSA test double, @LIBZ@ an ELF library without
# any GPU symbol, @GP@ the gpuprobe binary.
# CASES=FILE runs another table; BAD_ONLY=ERE runs the matching cases.
E2E_TIMEOUT=${E2E_TIMEOUT:-900}
. "$top_srcdir/tests/e2e/lib.sh"
: "${CASES:=$top_srcdir/tests/bad-input/cases.tsv}"
[ -f "$CASES" ] || framework_failure "no table at $CASES"
FAKE_HSA=$top_builddir/tests/gpu/libhsa-runtime64.so.1
[ -f "$FAKE_HSA" ] || framework_failure "no HSA test double at $FAKE_HSA"
LIBZ=
for l in /lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1 \
	 /lib64/libz.so.1 /usr/lib64/libz.so.1 /lib/libz.so.1 /usr/lib/libz.so.1; do
	[ -f "$l" ] && { LIBZ=$l; break; }
done
[ -n "$LIBZ" ] || framework_failure "no libz.so.1 (an ELF without GPU symbols)"

# ---- fixtures ------------------------------------------------------
chmod 755 "$TMP"
IN=$TMP/in
mkdir "$IN" "$IN/dir" || framework_failure "mkdir"
head -c 1048576 /dev/urandom > "$IN/file1m"
head -c 4096 /dev/urandom > "$IN/small4k"
head -c 4096 /dev/urandom > "$IN/garbage.jsonl"
: > "$IN/empty"
mkfifo "$IN/fifo" || framework_failure "mkfifo"
head -c 65536 /dev/urandom > "$IN/unreadable"; chmod 000 "$IN/unreadable"
echo 'this is not an ELF file' > "$IN/text.so"
cp "$top_srcdir/tests/fixtures/results/lock-pool-all.jsonl" "$IN/good-lock.jsonl"
awk -v shape=load-then-deadlock -f "$top_srcdir/tests/fixtures/traces/gen-trace.awk" > "$IN/good-trace.jsonl"
HDR=$(head -n 1 "$IN/good-trace.jsonl")
head -n 1 "$IN/good-trace.jsonl" > "$IN/header-only.jsonl"
head -c 100 "$IN/good-trace.jsonl" > "$IN/cut-in-header.jsonl"
head -n 6 "$IN/good-trace.jsonl" > "$IN/truncated.jsonl"
sed -n 7p "$IN/good-trace.jsonl" | head -c 333 >> "$IN/truncated.jsonl"
printf '[1,2,3]\n' > "$IN/array.jsonl"
printf '42\n"x"\nnull\n' > "$IN/scalars.jsonl"
printf '{"a":1}\n{"type":7}\n' > "$IN/no-type.jsonl"
printf '{"type":"header","gpuprobe":1,"command":["trace"],"argv":"x","started":5,"host":[]}\n' > "$IN/header-wrong-types.jsonl"
{ echo "$HDR"
  echo '{"type":"target","pid":"x","comm":5,"cmdline":{}}'
  echo '{"type":"sample","t":"zero","proc":[],"threads":5,"gpu":"none","vm":7}'
  echo '{"type":"sample","t":-1e308,"proc":{"rss_file":-5,"io":[]},"threads":[1,null,{"tid":"x","utime":-1}]}'
  echo '{"type":"sample","t":1e308,"proc":{"rss_file":1.5e300},"threads":[{"tid":1,"state":7}]}'
  echo '{"type":"stacks","t":"x","threads":{"a":1}}'
  echo '{"type":"exit","t":null,"status":"x","signal":[]}'
  echo '{"type":"verdict","class":5,"evidence":"x"}'
} > "$IN/wrong-shape-trace.jsonl"
{ echo "$HDR"; echo '{"type":"arm","name":5,"bytes":"many","lock_s":[],"status":{}}'; } > "$IN/wrong-shape-arm.jsonl"
{ echo "$HDR"; head -c 3000 /dev/zero; } > "$IN/nul-bytes.jsonl"
{ echo "$HDR"; awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; print "" }'; } > "$IN/deep.jsonl"
{ echo "$HDR"; awk 'BEGIN { printf "{\"type\":\"sample\",\"t\":1,\"pad\":\""; for (i = 0; i < 40000; i++) printf "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"; print "\"}" }'; } > "$IN/long-line.jsonl"
{ echo "$HDR"; i=0; while [ $i -lt 50 ]; do echo "$HDR"; i=$((i + 1)); done; } > "$IN/many-headers.jsonl"
printf '\357\273\277%s\r\n' "$HDR" > "$IN/bom-crlf.jsonl"
ln -s "$IN/file1m" "$IN/link-to-file1m"
find "$IN" -type f -exec touch -h -d '2020-01-01 00:00:00' {} +
INFILES=$(find "$IN" -type f | sort)   # fixture names hold no blanks
# A process that is nobody's target, and a zombie (its parent sleeps).
sleep 3600 & LIVE=$!; bg_track $LIVE
sh -c 'sleep 0 & exec sleep 3600' & ZPARENT=$!; bg_track $ZPARENT
ZOMBIE=
wait_until 5 sh -c "ps -o pid=,stat= --ppid $ZPARENT | grep -q Z" &&
	ZOMBIE=$(ps -o pid=,stat= --ppid $ZPARENT | awk '$2 ~ /^Z/ { print $1; exit }')
[ -n "$ZOMBIE" ] || framework_failure "no zombie"

# Can uid 65534 run gpuprobe?  Not from a build tree under a private
# home or a mktemp -d folder: then nobody runs copies of gpuprobe and the
# HSA double from $TMP (0755), so the nobody cases still run (issue 12).
NOBODY= NB_GPUPROBE=$GPUPROBE NB_FAKE_HSA=$FAKE_HSA
nb_can() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@" >/dev/null 2>&1; }
if command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
	if ! nb_can "$NB_GPUPROBE" --version && nb_can test -x "$TMP" && mkdir "$TMP/nb" &&
	   cp "$GPUPROBE" "$TMP/nb/gpuprobe" && cp "$FAKE_HSA" "$TMP/nb/libhsa-runtime64.so.1"; then
		chmod 755 "$TMP/nb" "$TMP/nb"/*
		NB_GPUPROBE=$TMP/nb/gpuprobe NB_FAKE_HSA=$TMP/nb/libhsa-runtime64.so.1
	fi
	nb_can "$NB_GPUPROBE" --version && nb_can test -x "$IN" && NOBODY=yes
fi

# sig FILE...: "sha256 mtime size path" of each regular file (after links).
sig() {
	for _f in "$@"; do
		case $_f in /proc/*|/dev/*) continue ;; esac
		[ -f "$_f" ] || continue
		printf '%s %s\n' "$(sha256sum < "$_f" | cut -c1-64)" "$(stat -L -c '%Y %s %n' "$_f")"
	done
}
# insig: the same for every file under @IN@ (listed once: no case may
# add one), in two processes (the table has hundreds of cases: one
# sha256sum per file per case, then two finds and two sorts a case, were
# most of the suite's time on a VM where a process costs ~5 ms).
insig() {
	sha256sum $INFILES
	stat -c '%Y %s %n' $INFILES
}

# run_shard I: the cases of $TMP/shard.I ("N<TAB>line"), one after the
# other; counts to $TMP/shard.I.counts.  Shards run side by side (the
# suite is hundreds of short gpuprobe runs, most of them waiting on a
# 1 s --seconds: 159 s in one line on 2 CPUs).
run_shard() {
shard=$1
total=0 passed=0 failed=0 skipped=0
SO=$TMP/stdout.$shard SE=$TMP/stderr.$shard
while IFS='	' read -r n line; do
	args=${line%% | *}; rest=${line#* | }
	want=${rest%% | *}; rest=${rest#* | }
	ere=${rest%% | *}
	as=; [ "$rest" != "$ere" ] && as=${rest#* | }
	if [ -n "$BAD_ONLY" ] && ! printf '%s' "$args" | grep -Eq -- "$BAD_ONLY"; then continue; fi
	total=$((total + 1))
	if [ "$as" = nobody ] && [ -z "$NOBODY" ]; then
		say "skip: $args (cannot run as nobody here)"; skipped=$((skipped + 1)); continue
	fi
	OUT=$TMP/out.$n; mkdir "$OUT"; chmod 777 "$OUT"
	fh=$FAKE_HSA; [ "$as" = nobody ] && fh=$NB_FAKE_HSA
	exp=$(printf '%s' "$args" | sed -e "s|@IN@|$IN|g" -e "s|@OUT@|$OUT|g" -e "s|@PID@|$LIVE|g" \
		-e "s|@ZOMBIE@|$ZOMBIE|g" -e "s|@FAKE_HSA@|$fh|g" -e "s|@LIBZ@|$LIBZ|g" \
		-e "s|@GP@|$GPUPROBE|g")
	eval "set -- $exp"
	before=$(insig; for a in "$@"; do case $a in "$IN"/*) ;; /*) sig "$a" ;; esac; done)
	if [ "$as" = nobody ]; then
		timeout -k 2 10 setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$NB_GPUPROBE" "$@" < /dev/null > "$SO" 2> "$SE"
	else
		timeout -k 2 10 "$GPUPROBE" "$@" < /dev/null > "$SO" 2> "$SE"
	fi
	rc=$?
	after=$(insig; for a in "$@"; do case $a in "$IN"/*) ;; /*) sig "$a" ;; esac; done)
	errs=$(grep -v -e '^gpuprobe: hint: ' -e '^Try `gpuprobe' -e '^information\.$' "$SE")
	nerr=$(printf '%s' "$errs" | grep -c '')
	why=
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then why="hung (killed after 10 s)"
	elif [ $rc -ge 128 ]; then why="crashed (exit $rc, signal $((rc - 128)))"
	elif [ $rc -ne "$want" ]; then why="exit $rc, want $want"
	elif [ "$want" -eq 0 ]; then
		if [ "$nerr" -ne 0 ]; then why="exit 0 with an error line: $(printf '%s' "$errs" | head -n 1)"
		elif ! grep -Eq -- "$ere" "$SE" "$SO"; then why="no output matches /$ere/"
		fi
	elif [ "$nerr" -ne 1 ]; then why="$nerr error lines, want 1: $(printf '%s' "$errs" | tr '\n' '~' | cut -c1-300)"
	elif ! printf '%s' "$errs" | grep -q '^gpuprobe[^:]*: '; then why="not a gpuprobe line: $errs"
	elif ! printf '%s' "$errs" | grep -Eq -- "$ere"; then why="stderr does not match /$ere/: $errs"
	fi
	[ -z "$why" ] && [ "$before" != "$after" ] && why="an input file changed: $(printf '%s\n%s\n' "$before" "$after" | sort | uniq -u | head -n 2 | tr '\n' ' ')"
	if [ -z "$why" ]; then
		passed=$((passed + 1))
		say "ok: ${as:+[$as] }gpuprobe $args -> $rc: $(printf '%s' "${errs:-$(head -n 1 "$SE")}" | head -n 1 | cut -c1-160)"
	else
		failed=$((failed + 1))
		say "FAIL: ${as:+[$as] }gpuprobe $args: $why"
	fi
	chmod -R u+rwx "$OUT" 2>/dev/null; rm -rf "$OUT"
done < "$TMP/shard.$shard"
echo "$total $passed $failed $skipped" > "$TMP/shard.$shard.counts"
}

# Cases that trace @PID@ or @ZOMBIE@ share one shard: two tracers of one
# process would see each other ("traced by PID N").
K=${BAD_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$K" -gt 4 ] && K=4
[ "$K" -lt 1 ] && K=1
awk -v K="$K" -v dir="$TMP" '
	{ n++ }
	/^[ \t]*(#|$)/ { next }
	{ s = ($0 ~ /@PID@|@ZOMBIE@/) ? 0 : (c++ % K)
	  printf "%d\t%s\n", n, $0 > (dir "/shard." s) }
	END { for (i = 0; i < K; i++) printf "" >> (dir "/shard." i) }' "$CASES"
i=0 shards=
while [ $i -lt "$K" ]; do
	run_shard $i > "$TMP/shard.$i.log" 2>&1 &
	shards="$shards $!"
	i=$((i + 1))
done
wait $shards   # (not a bare wait: the @PID@ sleepers are children too)
total=0 passed=0 failed=0 skipped=0
i=0
while [ $i -lt "$K" ]; do
	cat "$TMP/shard.$i.log"
	read -r t p f s < "$TMP/shard.$i.counts" || { t=0 p=0 f=1 s=0; say "FAIL: shard $i left no counts"; }
	total=$((total + t)) passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	i=$((i + 1))
done
say "$total cases: $passed passed, $failed failed, $skipped skipped (cases.tsv)"
[ $total -gt 0 ] || framework_failure "no cases ran"
[ $failed -eq 0 ] || fail "$failed of $total cases failed"
pass "$passed cases"

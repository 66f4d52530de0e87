# Set-ups of the real-program cases whose TARGET is `hook NAME` (sourced
# by tests/real/run.sh).  Each setup_NAME starts what its case needs, in
# sessions of their own (start_bg), sets TARGET_PID, and may redefine
# case_cleanup (run after the trace, before the case's sessions are
# swept).  A setup that lacks a program calls skip_case and returns.
# Available: $CT the case's scratch folder, $REAL this folder, start_bg,
# case_track, free_port, wait_until, alive.

# st PID: the state letter of PID.
st() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null; }
is_stopped() { [ "$(st "$1")" = T ]; }

# ---- cheap: make check -------------------------------------------------
setup_stopped_sleep() {
	start_bg sleep 1000
	TARGET_PID=$BG_PID
	kill -STOP "$TARGET_PID"
	wait_until 5 is_stopped "$TARGET_PID" || framework_failure "sleep did not stop"
}

setup_stopped_busy() {
	start_bg $NICE python3 -c 'while True: pass'
	TARGET_PID=$BG_PID
	sleep "$SETTLE"
	kill -STOP "$TARGET_PID"
	wait_until 5 is_stopped "$TARGET_PID" || framework_failure "python3 did not stop"
}

# `sleep 1000 | python3 select-idle.py`: the pipe's only writer is outside
# the traced process (a FIFO, so that both ends have pids we know).
setup_select_idle() {
	mkfifo "$CT/fifo" || framework_failure "mkfifo"
	setsid sleep 1000 >"$CT/fifo" 2>/dev/null &
	case_track $!
	setsid $NICE python3 "$REAL/select-idle.py" <"$CT/fifo" >/dev/null 2>&1 &
	TARGET_PID=$!
	case_track "$TARGET_PID"
	sleep "$SETTLE"
}

# A rate-limited pipeline through pv (launched: TARGET_CMD).
setup_pipeline_pv() {
	command -v pv >/dev/null 2>&1 || { skip_case "pv is missing (bootstrap.sh installs it)"; return; }
	TARGET_CMD="sh -c 'head -c 1G /dev/zero | pv -q -L 8m | cat > /dev/null'"
}

# ---- waits: who waits on whom (issue 20) ---------------------------------
# A pipeline whose last member is SIGSTOPped: yes and pv wait behind it.
setup_stopped_pipeline() {
	command -v pv >/dev/null 2>&1 || { skip_case "pv is missing (bootstrap.sh installs it)"; return; }
	start_bg sh -c 'yes | pv -q | cat > /dev/null; exit 0'
	TARGET_PID=$BG_PID
	wait_until 5 pipeline_cat || framework_failure "the pipeline did not start"
	case_track "$CAT_PID"
	kill -STOP "$CAT_PID"
	wait_until 5 is_stopped "$CAT_PID" || framework_failure "cat did not stop"
	sleep "$SETTLE"
}
pipeline_cat() { CAT_PID=$(pgrep -P "$TARGET_PID" -x cat) && [ -n "$CAT_PID" ]; }

# flock(1) behind a holder outside the traced tree (another flock that
# sleeps with the lock).
setup_flock_holder() {
	command -v flock >/dev/null 2>&1 || { skip_case "flock(1) is missing (util-linux)"; return; }
	: > "$CT/lock"
	start_bg flock "$CT/lock" sleep 1000
	wait_until 5 lock_held || framework_failure "the holder did not take the lock"
	TARGET_CMD="flock '$CT/lock' true"
}
lock_held() { grep -q " $BG_PID " /proc/locks; }

# A multiprocessing Pool at rest, traced once it answered a first map.
setup_pool_rest() {
	start_bg $NICE python3 "$REAL/pool-rest.py" "$CT/ready"
	TARGET_PID=$BG_PID
	wait_until 30 test -s "$CT/ready" || framework_failure "the pool did not start"
	sleep "$SETTLE"
}

# A JVM program run from its source (java File.java, JDK 11+), traced
# once it wrote its ready file.
java_case() {
	command -v java >/dev/null 2>&1 || { skip_case "java is missing (default-jre-headless)"; return 1; }
	start_bg $NICE java "$REAL/$1.java" "$CT/ready"
	TARGET_PID=$BG_PID
	wait_until 60 test -s "$CT/ready" || framework_failure "java $1 did not start"
	sleep "$SETTLE"
}
setup_jvm_join_server() { java_case JoinServer; }
setup_jvm_monitor_deadlock() { java_case MonitorDeadlock; }

# ---- bench: servers (bench/real-programs.sh) -----------------------------
# redis-server on a private port, no persistence, its files under $CT.
REDIS_PORT=
redis_up() { [ "$(redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; }
redis_server() {
	command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 ||
		{ skip_case "redis-server/redis-cli missing (apt-get install redis-server redis-tools)"; return 1; }
	REDIS_PORT=$(free_port)
	start_bg $NICE redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' \
		--appendonly no --dir "$CT" --daemonize no --protected-mode no
	TARGET_PID=$BG_PID
	wait_until 10 redis_up || framework_failure "redis-server did not answer on port $REDIS_PORT"
}
setup_redis_idle() { redis_server || return; sleep "$SETTLE"; }
setup_redis_load() {
	redis_server || return
	command -v redis-benchmark >/dev/null 2>&1 || { skip_case "redis-benchmark missing (redis-tools)"; return; }
	start_bg $NICE redis-benchmark -p "$REDIS_PORT" -q -c 2 -n 1000000000 -t set,get,lpush,lpop
	sleep "$SETTLE"
}
# A client blocked in BLPOP on a list nobody pushes to.
redis_blpop() {
	redis_server || return 1
	start_bg $NICE redis-cli -p "$REDIS_PORT" BLPOP gpuprobe:nothing 0
	CLIENT_PID=$BG_PID
	sleep "$SETTLE"
	redis-cli -p "$REDIS_PORT" client list 2>/dev/null | grep -q 'cmd=blpop' ||
		framework_failure "no client blocked in BLPOP"
}
setup_redis_blpop_server() { redis_blpop || return; }
setup_redis_blpop_client() { redis_blpop || return; TARGET_PID=$CLIENT_PID; }

# PostgreSQL: initdb into $CT as the postgres user (the server refuses
# root), a Unix socket in $CT, no TCP.
PGBIN=
PG_SOCK=; PG_PORT=; PG_DATA=
pg_up() { "$PGBIN/pg_isready" -q -h "$PG_SOCK" -p "$PG_PORT" 2>/dev/null; }
pg_server() {
	PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -x "$PGBIN/postgres" ] && [ -x "$PGBIN/initdb" ] && command -v psql >/dev/null 2>&1 ||
		{ skip_case "postgresql missing (apt-get install postgresql)"; return 1; }
	id postgres >/dev/null 2>&1 || { skip_case "no postgres user"; return 1; }
	chmod 755 "$TMP" "$CT"
	PG_DATA=$CT/data; PG_SOCK=$CT/sock; PG_PORT=$(free_port)
	mkdir -p "$PG_SOCK" && chown postgres: "$PG_SOCK" "$CT" || framework_failure "chown $CT"
	runuser -u postgres -- "$PGBIN/initdb" -A trust -U postgres --no-sync -D "$PG_DATA" \
		>"$CT/initdb.log" 2>&1 </dev/null || framework_failure "initdb failed: $(tail -n 2 "$CT/initdb.log")"
	start_bg $NICE runuser -u postgres -- "$PGBIN/postgres" -D "$PG_DATA" -k "$PG_SOCK" \
		-p "$PG_PORT" -c listen_addresses= -c fsync=off -c logging_collector=off
	wait_until 20 pg_up || framework_failure "postgres did not start"
	TARGET_PID=$(head -n 1 "$PG_DATA/postmaster.pid")
	case_cleanup() {
		runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PG_DATA" -m immediate -w -t 10 stop \
			>/dev/null 2>&1 </dev/null
	}
}
pg_sql() { psql -X -q -At -h "$PG_SOCK" -p "$PG_PORT" -U postgres -d postgres -c "$1" </dev/null 2>>"$CT/psql.log"; }
# pg_session NAME SQL: a psql session that runs SQL, then stays connected
# (its input is a FIFO kept open by a sleep that never writes again).
pg_session() {
	mkfifo "$CT/$1.fifo" || framework_failure "mkfifo"
	setsid sh -c 'printf "%s\n" "$1"; exec sleep 1000' sh "$2" >"$CT/$1.fifo" 2>/dev/null &
	case_track $!
	setsid psql -X -q -h "$PG_SOCK" -p "$PG_PORT" -U postgres -d postgres \
		<"$CT/$1.fifo" >"$CT/$1.out" 2>&1 &
	case_track $!
}
backend_of() {
	pg_sql "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'
		AND pid <> pg_backend_pid() AND $1 LIMIT 1"
}
setup_pg_postmaster_idle() { pg_server || return; sleep "$SETTLE"; }
setup_pg_backend_idle() {
	pg_server || return
	pg_session idle 'SELECT 1;'
	wait_until 10 sh -c '[ -s "$1" ]' sh "$CT/idle.out" 2>/dev/null
	sleep "$SETTLE"
	TARGET_PID=$(backend_of "state = 'idle'")
	[ -n "$TARGET_PID" ] || framework_failure "no idle backend"
}
setup_pg_rowlock() {
	pg_server || return
	pg_sql 'CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0);' ||
		framework_failure "CREATE TABLE failed"
	pg_session holder 'BEGIN; UPDATE t SET v = v + 1 WHERE id = 1;'
	wait_until 10 sh -c '[ -n "$(psql -X -At -h "$1" -p "$2" -U postgres -d postgres -c "SELECT 1 FROM pg_stat_activity WHERE state = '"'idle in transaction'"'" </dev/null)" ]' sh "$PG_SOCK" "$PG_PORT" ||
		framework_failure "the holder's transaction did not start"
	pg_session waiter 'UPDATE t SET v = v + 1 WHERE id = 1;'
	sleep "$SETTLE"
	TARGET_PID=$(backend_of "wait_event_type = 'Lock'")
	[ -n "$TARGET_PID" ] || framework_failure "no backend waits on a lock"
}
pg_bench() {
	pg_server || return 1
	"$PGBIN/pgbench" -i -q -s 1 -h "$PG_SOCK" -p "$PG_PORT" -U postgres postgres \
		>"$CT/pgbench-init.log" 2>&1 </dev/null || framework_failure "pgbench -i failed"
	start_bg $NICE "$PGBIN/pgbench" -n -c 2 -T 120 -h "$PG_SOCK" -p "$PG_PORT" -U postgres postgres
	sleep "$SETTLE"
}
setup_pg_pgbench() { pg_bench || return; }
setup_pg_pgbench_backend() {
	pg_bench || return
	TARGET_PID=$(backend_of "application_name = 'pgbench'")
	[ -n "$TARGET_PID" ] || framework_failure "no pgbench backend"
}

# stress-ng, launched by gpuprobe (TARGET_CMD).
stress() {
	command -v stress-ng >/dev/null 2>&1 || { skip_case "stress-ng missing (apt-get install stress-ng)"; return; }
	TARGET_CMD="stress-ng $* -t 120 --quiet"
}
setup_stress_cpu() { stress --cpu 1; }
setup_stress_vm_keep() { stress --vm 1 --vm-bytes 64M --vm-keep; }
setup_stress_vm() { stress --vm 1 --vm-bytes 32M; }

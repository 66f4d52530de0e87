# Set-ups of tests/real/serving-cases.tsv (issue 32's shapes), sourced by
# tests/real/run.sh after tests/real/hooks.sh when present; same contract:
# each setup_NAME starts what its case needs in sessions of its own
# (start_bg: swept by session id after the case), sets TARGET_PID or
# TARGET_CMD, may redefine case_cleanup, and calls skip_case when a tool
# is missing.  Programs are built once per run under $TMP/serving-bin.
# Every port is ephemeral: the servers bind port 0 and write the port to
# a file; a port "nobody listens on" is one the kernel just handed out
# (nginx alone needs a number: run.sh's free_port).
SERVING=$REAL/serving
SBIN=$TMP/serving-bin

# ---- helpers ----------------------------------------------------------------
# serving_cc NAME: $SBIN/NAME built from serving/NAME.c (once per run).
serving_cc() {
	[ -x "$SBIN/$1" ] && return 0
	command -v cc >/dev/null 2>&1 || { skip_case "no C compiler"; return 1; }
	mkdir -p "$SBIN" &&
		cc -O1 -g -Wall -pthread -o "$SBIN/$1" "$SERVING/$1.c" 2>"$SBIN/$1.log" ||
		framework_failure "cc $1.c: $(head -n 3 "$SBIN/$1.log")"
}
# serving_go: $SBIN/goserver from serving/goserver.go (once per run);
# skips when go is absent (apt-get install golang-go).
serving_go() {
	[ -x "$SBIN/goserver" ] && return 0
	command -v go >/dev/null 2>&1 || { skip_case "go is missing (apt-get install golang-go)"; return 1; }
	mkdir -p "$SBIN"
	( cd "$SBIN" && [ -n "${HOME:-}" ] && [ -w "${HOME:-/nonexistent}" ] || export GOCACHE="$SBIN/gocache"
	  GO111MODULE=off GOFLAGS= go build -o "$SBIN/goserver" "$SERVING/goserver.go" ) \
		>"$SBIN/go.log" 2>&1 || framework_failure "go build: $(head -n 3 "$SBIN/go.log")"
}
need() { command -v "$1" >/dev/null 2>&1 || { skip_case "$1 is missing${2:+ ($2)}"; return 1; }; }
# unused_port: a port the kernel just handed out and nobody listens on.
unused_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# wait_port FILE: the port a server wrote to FILE (60 s at most).
wait_port() {
	wait_until 60 test -s "$1" || framework_failure "no port in $1: the server did not start"
	PORT=$(cat "$1")
}
# zombie_child PID COMM: PID has a zombie child named COMM.
zombie_child() {
	for c in $(pgrep -P "$1"); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$2" ] &&
			[ "$(awk '{ print $3 }' "/proc/$c/stat" 2>/dev/null)" = Z ] && return 0
	done
	return 1
}

# ---- row 1: a server answering ---------------------------------------------
# The asyncio server traced alone, its load generator outside the tree.
setup_sv_py_asyncio_server() {
	start_bg $NICE python3 "$SERVING/asyncio_http.py" server "$CT/port"
	TARGET_PID=$BG_PID
	wait_port "$CT/port"
	start_bg $NICE python3 "$SERVING/asyncio_http.py" client "$PORT"
	sleep "$SETTLE"
}
zmq_python() {
	ZPY=/usr/bin/python3
	"$ZPY" -c 'import zmq' 2>/dev/null ||
		{ skip_case "pyzmq missing for $ZPY (apt-get install python3-zmq)"; return 1; }
}
setup_sv_py_zmq_answer() { zmq_python || return; TARGET_CMD="$ZPY '$SERVING/frontend_engine.py' --zmq"; }
setup_sv_py_zmq_engine_dead() {
	zmq_python || return
	TARGET_CMD="$ZPY '$SERVING/frontend_engine.py' --zmq --engine-dies-after 3"
}
setup_sv_c_send_tree() { serving_cc send_server || return; TARGET_CMD="'$SBIN/send_server' tree"; }
setup_sv_c_send_server() {
	serving_cc send_server || return
	start_bg $NICE "$SBIN/send_server" server "$CT/port"
	TARGET_PID=$BG_PID
	wait_port "$CT/port"
	start_bg $NICE "$SBIN/send_server" client "$PORT"
	sleep "$SETTLE"
}
setup_sv_c_send_idle() {
	serving_cc send_server || return
	start_bg $NICE "$SBIN/send_server" idle
	TARGET_PID=$BG_PID
	sleep "$SETTLE"
}
setup_sv_c_send_stuck() { serving_cc send_server || return; TARGET_CMD="'$SBIN/send_server' stuck"; }
setup_sv_c_engine_answer() { serving_cc dead_engine || return; TARGET_CMD="'$SBIN/dead_engine'"; }
setup_sv_c_engine_dead() {
	serving_cc dead_engine || return
	TARGET_CMD="'$SBIN/dead_engine' --engine-dies-after 3"
}
setup_sv_node_answer() { need node nodejs || return; TARGET_CMD="node '$SERVING/node_http.js' answer"; }
setup_sv_node_sync_sleep() { need node nodejs || return; TARGET_CMD="node '$SERVING/node_http.js' sync-sleep"; }
setup_sv_node_rest() {
	need node nodejs || return
	start_bg $NICE node "$SERVING/node_http.js" rest
	TARGET_PID=$BG_PID
	sleep "$SETTLE"
}
setup_sv_go_answer() { serving_go || return; TARGET_CMD="'$SBIN/goserver' answer"; }
setup_sv_go_hung() { serving_go || return; TARGET_CMD="'$SBIN/goserver' hung"; }
setup_sv_go_retry() { serving_go || return; TARGET_CMD="'$SBIN/goserver' retry"; }
# go_server MODE: the Go server traced alone, `goserver client` outside.
go_server() {
	serving_go || return 1
	start_bg $NICE "$SBIN/goserver" "$1" "$CT/port"
	TARGET_PID=$BG_PID
	wait_port "$CT/port"
	start_bg $NICE "$SBIN/goserver" client "$PORT"
	sleep "$SETTLE"
}
setup_sv_go_answer_server() { go_server answer; }
setup_sv_go_hung_server() { go_server hung; }
setup_sv_go_idle() {
	serving_go || return
	start_bg $NICE "$SBIN/goserver" idle
	TARGET_PID=$BG_PID
	sleep "$SETTLE"
}

# ---- row 2: the engine SIGKILLed before the trace ---------------------------
# The frontend traced by PID once its engine is a zombie.
setup_sv_py_engine_dead_before() {
	start_bg $NICE python3 "$SERVING/frontend_engine.py" --engine-dies-after 1
	TARGET_PID=$BG_PID
	wait_until 20 zombie_child "$TARGET_PID" EngineCore || framework_failure "the engine did not die"
	sleep "$SETTLE"
}

# ---- row 4: the batcher dead before the trace -------------------------------
setup_sv_py_batcher_dead_before() {
	start_bg $NICE python3 "$SERVING/batcher_died.py" --die-after 0
	TARGET_PID=$BG_PID
	sleep 2
}

setup_sv_c_batcher() { serving_cc batcher || return; TARGET_CMD="'$SBIN/batcher' --die-after 2"; }

# ---- rows 5-6: retry loops ----------------------------------------------------
setup_sv_curl_until() {
	need curl || return
	TARGET_CMD="sh -c 'until curl -sf http://127.0.0.1:$(unused_port)/health; do sleep 1; done'"
}
setup_sv_curl_while_bash() {
	need curl || return; need bash || return
	TARGET_CMD="bash -c 'while ! curl -sf -o /dev/null http://127.0.0.1:$(unused_port)/v1/models; do sleep 1; done; exit 0'"
}
setup_sv_py_retry_curl() { need curl || return; TARGET_CMD="python3 '$SERVING/retry_connect.py' --how curl"; }
setup_sv_c_retry() { serving_cc retry_connect || return; TARGET_CMD="'$SBIN/retry_connect'"; }

# ---- row 7: SQLite behind another process's write lock -----------------------
sqlite_holder() {
	start_bg $NICE python3 "$SERVING/sqlite_busy.py" holder "$CT/db" "$CT/ready"
	HOLDER_PID=$BG_PID
	wait_until 20 test -s "$CT/ready" || framework_failure "the SQLite holder did not take its lock"
	grep -q " $HOLDER_PID " /proc/locks || framework_failure "no lock of pid $HOLDER_PID in /proc/locks"
}
setup_sv_sqlite_py_waiter() {
	sqlite_holder
	TARGET_CMD="python3 '$SERVING/sqlite_busy.py' waiter '$CT/db'"
}
setup_sv_sqlite_cli_waiter() {
	need sqlite3 || return
	sqlite_holder
	TARGET_CMD="sqlite3 -cmd '.timeout 3600000' '$CT/db' \"INSERT INTO jobs (v) VALUES ('cli')\""
}

# ---- JVM --------------------------------------------------------------------
# jvm_server MODE: ThreadedServer.java MODE traced by PID once it listens;
# a second JVM (its client mode) is the load generator, outside the tree,
# for every mode but idle.
jvm_server() {
	need java default-jre-headless || return 1
	start_bg $NICE java "$SERVING/ThreadedServer.java" "$1" "$CT/port"
	TARGET_PID=$BG_PID
	wait_port "$CT/port"
	[ "$1" = idle ] || start_bg $NICE java "$SERVING/ThreadedServer.java" client "$PORT"
	sleep "$SETTLE"
}
setup_sv_jvm_idle() { jvm_server idle; }
setup_sv_jvm_answer() { jvm_server answer || return; sleep 2; }
setup_sv_jvm_batcher_dies() { jvm_server batcher-dies; }
jvm_abba() {
	need java default-jre-headless || return 1
	start_bg $NICE java "$SERVING/ReentrantAbba.java" "$1" "$CT/ready"
	TARGET_PID=$BG_PID
	wait_until 60 test -s "$CT/ready" || framework_failure "ReentrantAbba $1 did not start"
	sleep "$SETTLE"
}
setup_sv_jvm_abba() { jvm_abba abba; }
setup_sv_jvm_cycle3() { jvm_abba cycle3; }
setup_sv_jvm_mixed() { jvm_abba mixed; }

# ---- nginx at rest ------------------------------------------------------------
setup_sv_nginx_rest() {
	NGINX=$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null)
	[ -x "$NGINX" ] || { skip_case "nginx is missing (apt-get install nginx-light)"; return; }
	port=$(free_port)
	mkdir -p "$CT/nginx" && cat > "$CT/nginx/nginx.conf" <<-EOF
	daemon off;
	master_process on;
	worker_processes 2;
	pid $CT/nginx/nginx.pid;
	error_log $CT/nginx/error.log;
	events { worker_connections 64; }
	http {
		access_log off;
		client_body_temp_path $CT/nginx/body;
		proxy_temp_path $CT/nginx/proxy;
		fastcgi_temp_path $CT/nginx/fastcgi;
		uwsgi_temp_path $CT/nginx/uwsgi;
		scgi_temp_path $CT/nginx/scgi;
		server { listen 127.0.0.1:$port; location / { return 200 "ok\n"; } }
	}
	EOF
	start_bg $NICE "$NGINX" -e "$CT/nginx/error.log" -p "$CT/nginx" -c "$CT/nginx/nginx.conf"
	TARGET_PID=$BG_PID
	wait_until 10 sh -c '[ "$(pgrep -P "$1" | wc -l)" -ge 2 ]' sh "$TARGET_PID" ||
		framework_failure "nginx did not start: $(tail -n 2 "$CT/nginx/error.log" 2>/dev/null)"
	curl -sf "http://127.0.0.1:$port/" >/dev/null 2>&1 || true
	sleep "$SETTLE"
	# The master first: killed after its workers (as the session sweep
	# does), it forks a new worker in between, which outlives the case.
	case_cleanup() { kill -KILL "$TARGET_PID" 2>/dev/null; sleep 0.2; }
}

# ---- MariaDB: at rest, and an InnoDB row-lock wait ------------------------------
MDB_SOCK=
mdb() { mariadb --no-defaults -S "$MDB_SOCK" -uroot "$@" </dev/null 2>>"$CT/mariadb.log"; }
mdb_up() { mariadb-admin --no-defaults -S "$MDB_SOCK" -uroot ping >/dev/null 2>&1; }
mariadb_server() {
	command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] ||
		{ skip_case "mariadbd is missing (apt-get install mariadb-server)"; return 1; }
	need mariadb-install-db mariadb-server || return 1
	MDB_SOCK=$CT/mdb.sock
	mariadb-install-db --no-defaults --datadir="$CT/data" --user=root \
		--auth-root-authentication-method=normal --skip-test-db >"$CT/install.log" 2>&1 </dev/null ||
		framework_failure "mariadb-install-db: $(tail -n 2 "$CT/install.log")"
	start_bg $NICE "$(command -v mariadbd || echo /usr/sbin/mariadbd)" --no-defaults \
		--datadir="$CT/data" --socket="$MDB_SOCK" --skip-networking --user=root \
		--pid-file="$CT/mdb.pid" --log-error="$CT/mdb.err" --innodb-buffer-pool-size=16M \
		--skip-log-bin --innodb-lock-wait-timeout=3600
	TARGET_PID=$BG_PID
	wait_until 30 mdb_up || framework_failure "mariadbd did not answer: $(tail -n 2 "$CT/mdb.err")"
}
# mdb_session NAME SQL: a client that runs SQL and stays connected (its
# input a FIFO held open by a sleep that never writes again).
mdb_session() {
	mkfifo "$CT/$1.fifo" || framework_failure "mkfifo"
	setsid sh -c 'printf "%s\n" "$1"; exec sleep 1000' sh "$2" >"$CT/$1.fifo" 2>/dev/null &
	case_track $!
	setsid mariadb --no-defaults -n -S "$MDB_SOCK" -uroot <"$CT/$1.fifo" >"$CT/$1.out" 2>&1 &
	case_track $!
}
setup_sv_mariadb_rest() { mariadb_server || return; sleep 2; }
# mdb_trx STATE: one transaction in STATE (RUNNING: the holder's, LOCK WAIT).
# information_schema.innodb_trx is a cache refreshed only after 0.1 s
# without a read: polled faster than that, it never changes.
mdb_trx() { sleep 0.2; [ "$(mdb -N -e "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = '$1'")" = 1 ]; }
# mdb_state: what the server and the case's processes do (for a failure).
mdb_state() {
	mdb -N -e 'SELECT id, command, state, info FROM information_schema.processlist' | tr '\n\t' '; '
	for p in $CASE_PIDS; do
		printf '[%s %s %s] ' "$p" "$(cat "/proc/$p/comm" 2>/dev/null)" "$(cat "/proc/$p/wchan" 2>/dev/null)"
	done
	tail -n 2 "$CT/mariadb.log" "$CT"/*.out 2>/dev/null | tr '\n' ' '
}
# A metadata lock (shapes no one here wrote a rule for, issue 32's "programs
# it has never seen"): an ALTER TABLE waits for the MDL an open
# transaction's read holds (lock_wait_timeout one year: MDL_wait::timed_wait).
setup_sv_innodb_mdl() {
	mariadb_server || return
	mdb -e 'CREATE DATABASE shop; CREATE TABLE shop.stock (id INT PRIMARY KEY, n INT) ENGINE=InnoDB;
		INSERT INTO shop.stock VALUES (1, 10);' || framework_failure "CREATE TABLE failed"
	mdb_session reader 'BEGIN; SELECT * FROM shop.stock;'
	wait_until 20 mdb_trx RUNNING || framework_failure "the reader's transaction did not start: $(mdb_state)"
	mdb_session alter 'SET SESSION lock_wait_timeout = 31536000; ALTER TABLE shop.stock ADD COLUMN note INT;'
	wait_until 20 mdb_mdl_wait || framework_failure "no ALTER waiting for its metadata lock: $(mdb_state)"
	sleep "$SETTLE"
}
mdb_mdl_wait() { sleep 0.2; [ "$(mdb -N -e "SELECT COUNT(*) FROM information_schema.processlist WHERE state LIKE 'Waiting for table metadata lock'")" = 1 ]; }
setup_sv_innodb_rowlock() {
	mariadb_server || return
	mdb -e 'CREATE DATABASE shop; CREATE TABLE shop.stock (id INT PRIMARY KEY, n INT) ENGINE=InnoDB;
		INSERT INTO shop.stock VALUES (1, 10);' || framework_failure "CREATE TABLE failed"
	mdb_session holder 'BEGIN; SELECT * FROM shop.stock WHERE id = 1 FOR UPDATE;'
	wait_until 20 mdb_trx RUNNING || framework_failure "the holder's transaction did not start: $(mdb_state)"
	mdb_session waiter 'UPDATE shop.stock SET n = n - 1 WHERE id = 1;'
	wait_until 20 mdb_trx 'LOCK WAIT' || framework_failure "no transaction in LOCK WAIT: $(mdb_state)"
	sleep "$SETTLE"
}

#!/bin/sh
# The goroutine reader against a Go program that broke its own runtime's
# list of goroutines (tests/e2e/gohostile.go): a length of 2^40 is
# refused with the reason, junk pointers are skipped or read as what they
# hold, looping frame pointers end the walk -- quickly, within a bounded
# memory, and the real main goroutine is still found.
E2E_TIMEOUT=${E2E_TIMEOUT:-120}
. "${0%/*}/lib.sh"
require_jq
command -v go >/dev/null 2>&1 || skip "go is missing (apt-get install golang-go)"
[ -n "${HOME:-}" ] && [ -w "${HOME:-/nonexistent}" ] || export GOCACHE="$TMP/gocache"
GO111MODULE=off GOFLAGS= go build -o "$TMP/gohostile" "$top_srcdir/tests/e2e/gohostile.go" > "$TMP/go.log" 2>&1 \
	|| skip "go build refused the linkname to runtime.allgs: $(head -n 2 "$TMP/go.log")"

"$TMP/gohostile" len & P=$!
bg_track $P
sleep 1
gp stacks --format json "$P" > "$TMP/len.json"
ok "len: stacks exits 0" test $? -eq 0
say "len: $(jq -c .goroutines "$TMP/len.json")"
ok "len: refused, with the count" sh -c "jq -e '.goroutines.error | test(\"holds 1099511627776 goroutines\")' '$TMP/len.json' > /dev/null"
kill $P

"$TMP/gohostile" ptrs & P=$!
bg_track $P
sleep 1
t0=$(now)
gp stacks --format json "$P" > "$TMP/ptrs.json"
ok "ptrs: stacks exits 0" test $? -eq 0
say "ptrs: $(jq -c .goroutines "$TMP/ptrs.json") in $(elapsed "$t0") s"
ok "ptrs: within 5 s" fcmp "$(elapsed "$t0")" '<' 5
ok "ptrs: the real main goroutine is found" sh -c \
	"jq -e '[.goroutines.groups[] | select(.start == \"runtime.main\" and .at == \"main.main\")] | length == 1' '$TMP/ptrs.json' > /dev/null"
case $(go version) in
*go1.19*) # gohostile.go's looping goroutine is laid out as go1.19's g
	ok "ptrs: the goroutine whose frame pointer loops was walked, and the walk ended" sh -c \
		"jq -e '[.goroutines.groups[] | select(.wait == \"waiting\" and .at == \"main.junk\")] | length == 1' '$TMP/ptrs.json' > /dev/null" ;;
esac
ok "ptrs: no more goroutines than entries (6)" sh -c "jq -e '.goroutines.n + .goroutines.system <= 6' '$TMP/ptrs.json' > /dev/null"
kill $P
pass

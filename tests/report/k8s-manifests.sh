#!/bin/sh
# deploy/ as a fleet deploys it (issue 28):
#  - deploy/daemonset.yaml is valid against Kubernetes' API schema
#    (tests/k8s/validate.mjs: kubernetes-models' validators, compiled from
#    the Kubernetes OpenAPI schema; no cluster), and the validator is no
#    rubber stamp: a DaemonSet with hostPID "yes" or no selector fails it;
#  - it asks for what each part needs: hostPID, the capabilities of
#    kernel stacks (SYS_ADMIN), ptrace, the kernel log (SYSLOG, /dev/kmsg
#    mounted), BPF; its namespace is labelled for Pod Security; it runs on
#    AMD nodes as well as NVIDIA's;
#  - deploy/Containerfile's runtime packages hold every library the
#    built binary needs (its DT_NEEDED, found through dpkg -S).
# The validator's modules come from the npm registry, pinned by
# tests/k8s/package-lock.json (./bootstrap.sh --tests runs npm ci there).
. "${0%/*}/../e2e/lib.sh"
K8S=$top_srcdir/tests/k8s
DS=$top_srcdir/deploy/daemonset.yaml
CF=$top_srcdir/deploy/Containerfile

ok "hostPID" grep -q '^ *hostPID: true' "$DS"
for cap in SYS_PTRACE SYS_ADMIN SYSLOG DAC_READ_SEARCH BPF PERFMON; do
	ok "capability $cap asked for" grep -Eq "add: \[.*\b$cap\b" "$DS"
done
ok "capabilities: drop ALL first" grep -q 'drop: \[ALL\]' "$DS"
ok "/dev/kmsg mounted from the node" grep -q 'hostPath: { path: /dev/kmsg, type: CharDevice }' "$DS"
ok "namespace labelled for Pod Security (privileged)" \
	grep -q 'pod-security.kubernetes.io/enforce: privileged' "$DS"
ok "NVIDIA and AMD nodes" sh -c "grep -q 'nvidia.com/gpu.present' '$DS' && grep -q 'amd-gpu' '$DS'"
ok "no allowPrivilegeEscalation: false beside CAP_SYS_ADMIN (the API server refuses it)" \
	sh -c "! grep -q '^ *allowPrivilegeEscalation: false' '$DS'"

# The image's runtime packages against the binary's libraries.
if command -v dpkg > /dev/null 2>&1 && command -v readelf > /dev/null 2>&1; then
	pkgs=$(sed -n '/^FROM [^ ]*:bookworm-slim$/,$p' "$CF" | sed -n '/apt-get install/,/rm -rf/p' |
		tr ' \\' '\n\n' | grep -E '^lib|^zlib' | sort -u)
	say "image runtime packages: $(echo $pkgs)"
	missing=
	for lib in $(readelf -d "$GPUPROBE" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'); do
		# libc6: in every image; the sanitizers' runtimes: a build of
		# --enable-sanitizers (CI's second pass), never the image's
		case $lib in libc.so.*|libm.so.*|ld-linux*|libasan.so.*|libubsan.so.*|liblsan.so.*|libtsan.so.*) continue ;; esac
		path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|x86_64/ { print $NF; exit }')
		[ -n "$path" ] || path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
		pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n 1 | cut -d: -f1)
		[ -n "$pkg" ] || pkg=$(dpkg -S "$path" 2>/dev/null | head -n 1 | cut -d: -f1)
		say "  $lib: $path ($pkg)"
		echo "$pkgs" | grep -qx "$pkg" || missing="$missing $lib($pkg)"
	done
	ok "the image's runtime packages hold every library gpuprobe links${missing:+: missing$missing}" test -z "$missing"
else
	say "no dpkg or readelf here: the image's packages are not checked"
fi

NODE=$(command -v node) || skip "node missing (the validator runs on Node.js >= 20)"
[ -d "$K8S/node_modules/kubernetes-models" ] ||
	skip "the validator's modules are not installed: (cd tests/k8s && npm ci), which ./bootstrap.sh --tests runs"
"$NODE" "$K8S/validate.mjs" "$DS" > "$TMP/valid" 2>&1
rc=$?
cat "$TMP/valid"
ok "deploy/daemonset.yaml is valid against Kubernetes' schema (exit $rc)" [ $rc -eq 0 ]
ok "both documents checked" [ "$(grep -c '^ok ' "$TMP/valid")" -eq 2 ]
sed 's/hostPID: true/hostPID: "yes"/' "$DS" > "$TMP/bad1.yaml"
"$NODE" "$K8S/validate.mjs" "$TMP/bad1.yaml" > "$TMP/bad1" 2>&1
ok "the validator refuses hostPID \"yes\" ($(grep INVALID "$TMP/bad1" | head -n 1))" grep -q 'hostPID must be boolean' "$TMP/bad1"
awk '/^  selector:/ { skip = 1; next } skip > 0 { skip--; next } { print }' "$DS" > "$TMP/bad2.yaml"
"$NODE" "$K8S/validate.mjs" "$TMP/bad2.yaml" > "$TMP/bad2" 2>&1
ok "the validator refuses a DaemonSet with no selector ($(grep INVALID "$TMP/bad2" | head -n 1))" \
	grep -q 'must have required property .\?selector' "$TMP/bad2"
pass

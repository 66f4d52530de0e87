#!/bin/sh
# `make install` installs the systemd unit of `gpuprobe watch` with this
# build's paths (issue 28): its ExecStart names the installed binary, it
# lands in the configured unit directory, and systemd-analyze verify
# accepts it with that binary in place (verify fails on an ExecStart
# that is not an executable).  Installed into a DESTDIR: nothing of the
# machine is touched.
E2E_TIMEOUT=${E2E_TIMEOUT:-120}
. "${0%/*}/../e2e/lib.sh"
SA=$(command -v systemd-analyze) || skip "systemd-analyze missing (package systemd)"
MAKE=${MAKE:-make}
# A make of its own, not a sub-make of the suite's (its flags would print
# "Entering directory" into the values read below, and ask a jobserver).
unset MAKEFLAGS MFLAGS MAKELEVEL
unitdir=$(printf 'p:\n\t@echo $(systemdsystemunitdir)\n' | $MAKE -s --no-print-directory -C "$top_builddir" -f Makefile -f - p)
bindir=$(printf 'p:\n\t@echo $(bindir)\n' | $MAKE -s --no-print-directory -C "$top_builddir" -f Makefile -f - p)
[ "$unitdir" != no ] || skip "configured --with-systemdsystemunitdir=no"
say "unit directory $unitdir, bindir $bindir"
dest=$TMP/root
# install-exec + install-data without re-running the suite's own build
# rules in parallel: everything is built by the time tests run.
$MAKE -s --no-print-directory -C "$top_builddir" install DESTDIR="$dest" > "$TMP/install.log" 2>&1
rc=$?
tail -5 "$TMP/install.log"
ok "make install DESTDIR=… (exit $rc)" [ $rc -eq 0 ]
unit=$dest$unitdir/gpuprobe-watch.service
ok "the unit is installed in $unitdir" [ -f "$unit" ]
ok "ExecStart names the installed binary $bindir/gpuprobe" \
	grep -q "^ExecStart=$bindir/gpuprobe watch " "$unit"
ok "no placeholder is left" sh -c "! grep -n '@[a-z]*@' '$unit'"
ok "the installed binary is there" [ -x "$dest$bindir/gpuprobe" ]
# verify resolves ExecStart against --root, the units it is ordered
# after (local-fs.target, multi-user.target: systemd's own, copied in),
# and the man page it names (Documentation=man:) against the installed
# man pages.  A misspelt ExecStart fails it ("is not executable").
sysunits=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
[ -f "$sysunits/sysinit.target" ] || skip "no systemd units in $sysunits to verify against"
mkdir -p "$dest/usr/lib/systemd/system"
cp -a "$sysunits/." "$dest/usr/lib/systemd/system/"
MANPATH=$dest$(printf 'p:\n\t@echo $(mandir)\n' | $MAKE -s --no-print-directory -C "$top_builddir" -f Makefile -f - p) \
	"$SA" verify --root="$dest" "$unit" > "$TMP/verify" 2>&1
rc=$?
cat "$TMP/verify"
ok "systemd-analyze verify accepts the installed unit (exit $rc)" [ $rc -eq 0 ]
ok "and says nothing against it" sh -c "! grep -qi 'gpuprobe-watch.service' '$TMP/verify'"
pass

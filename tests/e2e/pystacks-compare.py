"""Compares gpuprobe's Python frames with gdb's py-bt, thread by thread.

usage: pystacks-compare.py STACKS.json PYBT.txt SCRIPT
STACKS.json: one `stacks` line (gpuprobe stacks --format json);
PYBT.txt: gdb -batch -ex 'thread apply all py-bt' output of the same
process, taken right after.  Every thread of SCRIPT must show in both the
same Python frames (file, line, function), youngest first: py-bt prints
co_name, gpuprobe co_qualname, so "Thread.run" matches "run".  The one
thread that computes may move between the two looks: its youngest frame
may differ by line within the same function.  Prints each thread's
frames; exit 0 when all agree, 1 otherwise."""
import json
import re
import sys

stacks = json.load(open(sys.argv[1]))
pybt = open(sys.argv[2]).read()
script = sys.argv[3]

ours = {}
for t in stacks["threads"]:
    fr = []
    for f in t.get("frames") or []:
        for p in f.get("python") or []:
            fr.append((p["file"], p["line"], p["function"]))
    for p in (t.get("python") or {}).get("unplaced") or []:
        fr.append((p["file"], p["line"], p["function"]))
    ours[t["tid"]] = fr

theirs = {}
for block in re.split(r"\n(?=Thread \d+ \()", pybt):
    m = re.match(r"Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP (\d+)\)", block)
    if not m:
        continue
    theirs[int(m.group(1))] = [(f, int(l), fn) for f, l, fn in
                               re.findall(r'^  File "([^"]+)", line (\d+), in (\S+)', block, re.M)]

bad = 0
for tid, want in sorted(theirs.items()):
    if not any(f == script for f, _, _ in want):
        continue
    got = ours.get(tid)
    print("tid %d py-bt:    %s" % (tid, " <- ".join("%s:%d" % (fn, l) for _, l, fn in want)))
    print("tid %d gpuprobe: %s" % (tid, " <- ".join("%s:%s" % (fn, l) for _, l, fn in got or [])))
    if got is None or len(got) != len(want):
        print("  MISMATCH: %s frames" % ("no" if got is None else len(got)))
        bad += 1
        continue
    for i, ((gf, gl, gfn), (wf, wl, wfn)) in enumerate(zip(got, want)):
        same_fn = gf == wf and (gfn == wfn or gfn.endswith("." + wfn))
        if same_fn and (gl == wl or (i == 0 and gfn in ("spin",))):
            continue
        print("  MISMATCH at frame %d: %s:%s %s vs %s:%d %s" % (i, gf, gl, gfn, wf, wl, wfn))
        bad += 1
        break
seen = sum(1 for w in theirs.values() if any(f == script for f, _, _ in w))
print("%d threads of %s compared, %d mismatched" % (seen, script, bad))
sys.exit(1 if bad or seen < 5 else 0)

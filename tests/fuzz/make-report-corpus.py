#!/usr/bin/env python3
"""Builds tests/fuzz/corpus/report/ (the seeds of fuzz_report) from real
result files: the result corpus, tests/fixtures/results and the shapes of
tests/fixtures/traces/gen-trace.awk.  Each seed keeps every line type and
field of its file but is cut small (at most 4 samples, arrays of at most
3, objects of at most 12 keys besides those the loader reads), so the
target runs a thousand times a second; the mutator grows them again.
Seeds named mini-* are cut smaller still (2 samples, arrays of 2, 8
keys). Seeds named host-* carry full host facts (needs a built src/gpuprobe).
Seeds named multi-* hold several files split by a "\\f" line (report A B).
Seeds named kmsg-* hold a trace's kernel log, one of hostile kmsg lines.
Run from the top of the tree: python3 tests/fuzz/make-report-corpus.py"""
import glob, json, os, subprocess

OUT = "tests/fuzz/corpus/report"
KEEP = {"nr_dirtied", "nr_written", "pgsteal_file", "type", "t", "host", "runtimes"}

def trim(v, arr=3, keys=12):
    if isinstance(v, list):
        return [trim(x, arr, keys) for x in v[:arr]]
    if isinstance(v, dict):
        out, n = {}, 0
        for k, x in v.items():
            if n < keys or k in KEEP:
                out[k] = trim(x, arr, keys)
                n += 1
        return out
    return v

def seed(lines, nsamples=4, arr=3, keys=12):
    samples = [i for i, l in enumerate(lines) if l.get("type") == "sample"]
    if len(samples) > nsamples:
        step = len(samples) / nsamples
        keep = {samples[int(i * step)] for i in range(nsamples)} | {samples[-1]}
        lines = [l for i, l in enumerate(lines) if l.get("type") != "sample" or i in keep]
    return "".join(json.dumps(trim(l, arr, keys), separators=(",", ":")) + "\n" for l in lines)

def load(path):
    out = []
    for l in open(path):
        try:
            out.append(json.loads(l))
        except ValueError:
            pass
    return out

os.makedirs(OUT, exist_ok=True)
seeds = {}
for p in sorted(glob.glob("tests/fuzz/corpus/result/*.jsonl") + glob.glob("tests/fixtures/results/*.jsonl")):
    seeds[os.path.basename(p)] = seed(load(p))
    # mini-*: two samples, arrays of 2, objects of 8 keys: ~2 KB, for
    # runs that count executions (FUZZ_MAX_LEN=4096)
    seeds["mini-" + os.path.basename(p)] = seed(load(p), 2, 2, 8)
awk = "tests/fixtures/traces/gen-trace.awk"
for shape in ["seed004-import-hang", "seed000-idle-spin", "all-futex", "rssfile-84mibs",
              "bursty-writer", "cpu-only", "slowdown", "stopped", "gpu-flat-io-moving",
              "load-then-deadlock", "short-flat"]:
    txt = subprocess.run(["awk", "-v", "shape=" + shape, "-f", awk], capture_output=True,
                         text=True, check=True).stdout
    seeds["gen-" + shape + ".jsonl"] = seed([json.loads(l) for l in txt.splitlines() if l])
for n, s in seeds.items():
    open(os.path.join(OUT, n), "w").write(s)
# kmsg-*: a trace's kernel log (issue 19): the lines add-kmsg.awk adds
# (an Xid 31 with its pid, amdgpu errors, a lost-records note, a flood of
# 150) to a short trace, and kmsg lines of every wrong type and size.
def gen(shape, add_kmsg=False):
    cmd = "awk -v shape=%s -f %s" % (shape, awk)
    if add_kmsg:
        cmd += " | awk -f tests/fixtures/traces/add-kmsg.awk"
    txt = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, check=True).stdout
    return [json.loads(l) for l in txt.splitlines() if l]
kmsg = {"kmsg-flood.jsonl": seed(gen("short-flat", True))}
lines = [json.loads(l) for l in seed(gen("short-flat"), 2, 2, 8).splitlines()]
hostile = [
    {"type": "kmsg"},
    {"type": "kmsg", "t": "soon", "driver": 7, "kind": ["xid"], "text": {"a": 1}, "level": "err",
     "pid": "4242", "xid": "31", "lost": "many"},
    {"type": "kmsg", "t": 1e308, "driver": "nvidia", "kind": "xid", "text": None, "pid": -5, "xid": -1},
    {"type": "kmsg", "t": -1e308, "driver": "nvidia", "kind": "xid", "pid": 2**63 - 1, "xid": 2**63 - 1},
    {"type": "kmsg", "t": 2, "driver": "kernel", "kind": "lost", "lost": 2**63 - 1},
    {"type": "kmsg", "t": 2, "driver": "kernel", "kind": "lost", "lost": 2**63 - 1},
    {"type": "kmsg", "t": 3, "driver": "amdgpu|`*<b>", "kind": "future\u001b[31m", "level": 0,
     "text": "``a|b``` <script>x</script> *x* \u001b[2J\r\nnext"},
    {"type": "kmsg", "t": 3.5, "driver": "amdgpu", "kind": "other", "level": 2, "text": "y" * 3000},
    {"type": "kmsg", "t": 4, "driver": "d" * 300, "kind": "k" * 300, "level": 3, "text": "`"},
    {"type": "kmsg", "t": 4.5, "driver": "nvidia", "kind": "xid", "xid": 31, "pid": 1, "text": ""},
]
kmsg["kmsg-hostile.jsonl"] = "".join(json.dumps(l, separators=(",", ":")) + "\n"
                                     for l in lines[:-1] + hostile + lines[-1:])
for n, s in kmsg.items():
    open(os.path.join(OUT, n), "w").write(s)

# host-*: the header's host facts in full (what `info` renders in the
# report's Environment block), from src/gpuprobe info on seed 000's WSL2
# tree, the NVIDIA tree and this machine (runtimes included), in place of
# a mini trace's and the pinning probe's headers.  Needs a built gpuprobe.
gp = "src/gpuprobe"
if os.access(gp, os.X_OK):
    import shutil, tempfile
    hosts = {}
    wsl = tempfile.mkdtemp()
    try:
        subprocess.run(["sh", "tests/fixtures/hostinfo-wsl.sh", wsl], check=True)
        for name, args in [("wsl", ["--proc-root", wsl]),
                           ("nvidia", ["--proc-root", "tests/fixtures/hostinfo-nvidia"]),
                           ("live", [])]:
            r = subprocess.run([gp, "info", "--format", "json"] + args, capture_output=True,
                               text=True, env={"PATH": "/usr/bin:/bin", "HSA_ENABLE_INTERRUPT": "0"})
            if r.returncode == 0:
                hosts[name] = json.loads(r.stdout)
    finally:
        shutil.rmtree(wsl, ignore_errors=True)
    for name, host in hosts.items():
        for base in ["mini-short-flat.jsonl", "mini-lock-pool-all.jsonl"]:
            lines = [json.loads(l) for l in seeds[base].splitlines()]
            lines[0]["host"] = host
            n = "host-%s-%s" % (name, base[5:])
            seeds[n] = seed(lines, 2, 2, 64)
            open(os.path.join(OUT, n), "w").write(seeds[n])

# report A B: a trace beside an arm result, two traces, and three files
for a, b, c in [("short-flat.jsonl", "lock-pool-all.jsonl", None),
                ("real-stacks.jsonl", "gen-seed000-idle-spin.jsonl", None),
                ("stopped.jsonl", "real-stacks.jsonl", "lock-pool-all.jsonl")]:
    parts = [seeds[x] for x in (a, b, c) if x]
    name = "multi-" + "+".join(x[:-6] for x in (a, b, c) if x)
    open(os.path.join(OUT, name), "w").write("\f\n".join(parts))

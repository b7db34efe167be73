#!/bin/sh
# bench/chart.py draws every row of `make bench` the right way round: a
# made-up table holds one row of every metric the bench programs print (their
# "M" lines: bench/peers/, bench/inference/, bench/questions/), each with a
# known ratio, libcpuexec ahead on some rows and behind on others; the SVG
# chart.py writes is parsed and each bar must lie on the side of 1 its ratio
# puts it, with that ratio in its label, against the best peer. The
# directions expected here are read from what each metric measures, not
# from chart.py. And every metric of bench/targets.txt has a direction in
# chart.py that agrees with the relation of its targets against peers and
# its absolute bounds. Exit 77 without Python.
set -u
srcdir=${top_srcdir:-$(dirname "$0")/..}
python=${PYTHON:-python3}
command -v "$python" >/dev/null 2>&1 || { echo "SKIP: no $python for bench/chart.py"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench-chart-directions.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
exec "$python" - "$srcdir" "$dir" <<'PY'
import importlib.util
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as et

srcdir, work = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("chart", os.path.join(srcdir, "bench", "chart.py"))
chart = importlib.util.module_from_spec(spec)
spec.loader.exec_module(chart)
failed = 0


def report(ok, what):
    global failed
    print(("ok - " if ok else "not ok - ") + what)
    if not ok:
        failed = 1


# Every metric `make bench` prints, with its unit and which way is better
# ("higher": throughputs, fractions of a ceiling, fairness; "lower": times,
# CPU burnt, counts).
HIGHER, LOWER = "higher", "lower"
rows = []
rows += [("epcc_n%d" % n, "us", LOWER) for n in (2, 8, 64, 1024)]
rows += [(m, "us", LOWER) for m in ("lat_gap0", "lat_gap50us", "lat_gap1ms", "lat_gap10ms",
                                   "worst_region", "worst_region_all")]
rows += [("burn_cad1ms", "ms/s", LOWER), ("burn_cad10ms", "ms/s", LOWER), ("idle_burn", "ms/s", LOWER)]
rows += [("axpy_%s" % s, "GB/s", HIGHER) for s in ("64k", "1m", "16m")]
rows += [("syscalls_hot", "per10k", LOWER)]
rows += [("infer_ips", "inf/s", HIGHER), ("infer_gap2ms", "ms", LOWER), ("infer_gap20ms", "ms", LOWER),
         ("sess2_ips", "inf/s", HIGHER), ("sess2_lat", "ms", LOWER), ("gemm_gflops", "GFLOP/s", HIGHER)]
for k in (1, 2, 4):
    for s in (0, 50, 200):
        rows += [("k%d_s%d_rps" % (k, s), "reg/s", HIGHER), ("k%d_s%d_ceil" % (k, s), "ratio", HIGHER),
                 ("k%d_s%d_p50" % (k, s), "us", LOWER), ("k%d_s%d_p99" % (k, s), "us", LOWER),
                 ("k%d_s%d_fair" % (k, s), "ratio", HIGHER), ("k%d_s%d_cpu" % (k, s), "us/reg", LOWER)]
for us in (10, 100):
    rows += [("tasks_%dus" % us, "tasks/s", HIGHER), ("tasks_%dus_eff" % us, "ratio", HIGHER)]
shapes = ["1d"] + ["%dd%s" % (d, t) for d in range(2, 7) for t in ("", "_tile_1d", "_tile_2d")]
shapes.insert(1, "1d_tile_1d")
rows += [("pp_%s" % s, "ns", LOWER) for s in shapes]
for base in ("fftw_c2c_64k", "fftw_r2c_512x512", "cv_blur_720p", "cv_resize_720p", "cv_cvtcolor_720p",
             "eigen_contract_384", "eigen_sum_1m"):
    rows += [(base, "us", LOWER), (base + "_2callers", "us", LOWER)]
rows += [(m, "ns", LOWER) for m in ("session_per_request_retained", "session_per_request_cold",
                                   "region_default_unpinned", "region_pinned",
                                   "counters_off", "counters_on", "counters_observer")]
for state in ("noguards", "none", "openblas_pthread", "blis_pthread", "blis_openmp", "onetbb", "all"):
    rows += [("guard_" + state, "ns", LOWER), ("guard_%s_in64" % state, "ns", LOWER)]

# Known ratios (times better than the best peer), both sides of 1 and past
# the axis' clip at 8x on both.
ratios = [2.0, 0.5, 3.0, 1 / 3.0, 1.25, 0.8, 20.0, 0.05]


def medians(better, ratio):
    """libcpuexec's, the best peer's and a worse peer's medians for a row whose ratio is `ratio`."""
    if better == HIGHER:
        mine, best = 100.0 * ratio, 100.0
        return mine, best, best / 2
    mine, best = 100.0 / ratio, 100.0
    return mine, best, best * 2


table = ["libcpuexec bench: made-up table of known ratios (tests/bench-chart-directions.sh)",
         "load average before: 0.00 0.00 0.00, after: 0.00 0.00 0.00",
         "metric         unit    backend                median        min        max        p99 cpuexec/x"]
expected = {}
for i, (metric, unit, better) in enumerate(rows):
    ratio = ratios[i % len(ratios)]
    mine, best, worse = medians(better, ratio)
    expected[metric] = (ratio, better)
    for j, (backend, v) in enumerate((("libcpuexec", mine), ("peer-worse", worse), ("peer-best", best))):
        table.append("%-14s %-7s %-18s %10.3f %10.3f %10.3f %10s %9s"
                     % (metric if j == 0 else "", unit if j == 0 else "", backend, v, v, v, "-", "-"))
# The issue's example: k2_s0_fair 0.96 for libcpuexec against oneTBB's 0.389 is
# 2.47x ahead, not 0.41x behind.
for i, line in enumerate(table):
    if line.startswith("k2_s0_fair "):
        table[i:i + 3] = ["k2_s0_fair     ratio   libcpuexec              0.960      0.960      0.960          -         -",
                          "                       tbb                     0.389      0.389      0.389          -         -"]
        expected["k2_s0_fair"] = (0.96 / 0.389, HIGHER)
        break
table.append("min/max: over the rounds.")
with open(os.path.join(work, "table.txt"), "w") as f:
    f.write("\n".join(table) + "\n")
svg_path = os.path.join(work, "chart.svg")
run = subprocess.run([sys.executable, os.path.join(srcdir, "bench", "chart.py"), os.path.join(work, "table.txt"),
                      svg_path], capture_output=True, text=True)
report(run.returncode == 0, "chart.py draws the made-up table (%s)" % (run.stdout.strip() or run.stderr.strip()))
if run.returncode != 0:
    sys.exit(1)

# The SVG: the axis' 1 is the bold vertical line; each row is a text element
# (the metric, its unit in a tspan), its bar (the next rect) and its label.
ns = "{http://www.w3.org/2000/svg}"
root = et.parse(svg_path).getroot()
elements = list(root)
x_one = None
for e in elements:
    if e.tag == ns + "line" and e.get("stroke-width") == "1.5":
        x_one = float(e.get("x1"))
report(x_one is not None, "the chart has its axis at 1")
bars = {}
for i, e in enumerate(elements):
    if e.tag == ns + "text" and e.text and e.text.strip() in expected and i + 1 < len(elements):
        rect = elements[i + 1]
        label = next((x for x in elements[i + 2:i + 5] if x.tag == ns + "text"), None)
        if rect.tag == ns + "rect" and label is not None:
            bars[e.text.strip()] = (float(rect.get("x")), float(rect.get("width")), "".join(label.itertext()))
for metric, (ratio, better) in expected.items():
    if metric not in bars:
        report(False, "%s is drawn" % metric)
        continue
    x, width, text = bars[metric]
    if ratio > 1:
        side = x >= x_one - 0.05 and x + width > x_one + 1
    else:
        side = x + width <= x_one + 0.05 and x < x_one - 1
    want = chart.label(ratio)
    best = "tbb" if metric == "k2_s0_fair" else "peer-best"
    report(side and text.startswith(want + " vs " + best + " "),
           "%s (%s is better) at %s of the best peer: its bar %s of 1 and labelled so (drawn: %r)"
           % (metric, better, want, "right" if ratio > 1 else "left", text))

# bench/targets.txt: every metric has a direction, and its targets' relations
# agree with it (>= where higher is better) for bounds against peers, against
# the best peer and absolute bounds; bounds against libcpuexec's own other
# policies (libcpuexec-pinned) compare a policy with itself and are left out.
with open(os.path.join(srcdir, "bench", "targets.txt")) as f:
    for line in f:
        fields = line.split("#", 1)[0].split()
        if len(fields) < 4:
            continue
        metric, compare, relation = fields[:3]
        higher = chart.higher_is_better(metric)
        if higher is None:
            report(False, "bench/targets.txt's %s has a direction in bench/chart.py" % metric)
            continue
        if compare not in ("best", "=") and not chart.is_peer(compare) and not compare.endswith("-pools"):
            continue
        report(relation == (">=" if higher else "<="),
               "bench/targets.txt: %s %s %s agrees with its direction (%s is better)"
               % (metric, compare, relation, "higher" if higher else "lower"))
        if metric in expected:
            report(expected[metric][1] == ("higher" if higher else "lower"),
                   "bench/targets.txt's %s is in the made-up table the same way round" % metric)
sys.exit(failed)
PY

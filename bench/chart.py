#!/usr/bin/env python3
"""bench/chart.py TABLE SVG: the chart of a `make bench` table.

One bar per metric row of the table (bench/run.sh's output, or the copy
bench/last-table.txt): how many times better libcpuexec's median is than the
best peer's on that row, on a log scale around 1.0, the rows grouped by kind.
"Better" follows the metric's direction, declared once in DIRECTIONS below:
where lower is better (times, CPU burn, counts) the bar is best peer /
libcpuexec; where higher is better (throughputs, fractions of a ceiling,
fairness) libcpuexec / best peer. Right of 1.0, libcpuexec is ahead. A row
that would be drawn and has no declared direction is an error, so a new row
of `make bench` is declared here before its chart can be made.

The peers of a row are every backend but libcpuexec and its other policies
(libcpuexec-none, libcpuexec-fd2ms, ...); the "-2pools" rows are peers, as in
bench/targets.txt. A row without a peer (session_per_request_*, ...) is named
under the chart, not drawn.

Python 3 standard library only; the SVG depends on the table alone, so the
committed chart can be checked against the committed table
(tests/bench-chart.sh). `make bench` calls it after the table.
"""
import math
import re
import sys
from xml.sax.saxutils import escape

# Kinds, in chart order: the first pattern a metric matches.
KINDS = [
    ("dispatch", r"^(epcc_|lat_gap0$|syscalls_)"),
    ("latency after idle", r"^(lat_gap|worst_region)"),
    ("burn", r"^(burn_|idle_burn)"),
    ("streaming", r"^axpy_"),
    ("inference", r"^(infer_|gemm_)"),
    ("concurrent callers", r"^(sess|k[0-9]+_s[0-9]+_|tasks_)"),
    ("libraries (pthreadpool's API)", r"^pp_"),
    ("libraries on libcpuexec (FFTW, OpenCV, Eigen)", r"^(fftw_|cv_|eigen_)"),
    ("other", r""),
]
LIMIT = 8.0  # the axis runs from 1/LIMIT to LIMIT; bars beyond are clipped and say so


# Each metric's direction, declared once: (pattern, higher is better, what the
# median is). The first pattern a metric matches decides; tests/bench-chart-directions.sh
# checks every row against a made-up table of known ratios and against the
# relations of bench/targets.txt.
DIRECTIONS = [
    (r"^epcc_n[0-9]+$", False, "overhead per call (us)"),
    (r"^lat_gap", False, "time of one call (us)"),
    (r"^worst_region", False, "p99 of a region over its body (us)"),
    (r"^syscalls_", False, "system calls per 10000 calls"),
    (r"^(idle_burn|burn_cad)", False, "CPU burnt per second (ms/s)"),
    (r"^axpy_", True, "bandwidth (GB/s)"),
    (r"^(infer_ips|sess2_ips)$", True, "inferences per second"),
    (r"^(infer_gap|sess2_lat)", False, "time of one inference (ms)"),
    (r"^gemm_gflops$", True, "GFLOP/s"),
    (r"^k[0-9]+_s[0-9]+_rps$", True, "regions per second"),
    (r"^k[0-9]+_s[0-9]+_ceil$", True, "regions per second over the ceiling"),
    (r"^k[0-9]+_s[0-9]+_fair$", True, "fewest over most regions between callers"),
    (r"^k[0-9]+_s[0-9]+_(p50|p99)$", False, "time of one region (us)"),
    (r"^k[0-9]+_s[0-9]+_cpu$", False, "CPU per region (us)"),
    (r"^tasks_[0-9]+us$", True, "tasks per second"),
    (r"^tasks_[0-9]+us_eff$", True, "tasks per second over the ceiling"),
    (r"^pp_", False, "time per call (ns)"),
    (r"^(fftw_|cv_|eigen_)", False, "time per operation (us)"),
    (r"^(session_per_request_|region_)", False, "time per request or region (ns)"),
    (r"^counters_", False, "time per region (ns)"),
    (r"^guard_", False, "time per call (ns)"),
    (r"^node_slot$", False, "time per slot taken and given back (ns)"),
]


def higher_is_better(metric):
    """True or False from DIRECTIONS; None for a metric it does not declare."""
    for pattern, higher, _ in DIRECTIONS:
        if re.search(pattern, metric):
            return higher
    return None


def is_peer(backend):
    if backend == "libcpuexec":
        return False
    return not backend.startswith("libcpuexec-") or backend.endswith("-2pools")


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def parse(lines):
    """(header lines, rows): rows is [(metric, unit, {backend: median})] in table order."""
    header, rows = [], []
    it = iter(lines)
    for line in it:
        if line.startswith("metric ") and " backend " in line:
            break
        header.append(line.rstrip("\n"))
    else:
        raise ValueError("no table header (a line starting with 'metric ... backend')")
    current = None
    for line in it:
        fields = line.split()
        if not line[:1].isspace():
            if len(fields) < 4 or number(fields[3]) is None:
                break
            current = (fields[0], fields[1], {})
            rows.append(current)
            current[2][fields[2]] = number(fields[3])
        else:
            if current is None or len(fields) < 2 or number(fields[1]) is None:
                break
            current[2][fields[0]] = number(fields[1])
    return header, rows


def advantage(higher, mine, peers):
    """(ratio, best peer, its median): >1 when libcpuexec is ahead; inf or 0 when a median is <= 0."""
    best = max(peers, key=peers.get) if higher else min(peers, key=peers.get)
    theirs = peers[best]
    if higher:
        good, bad = mine, theirs
    else:
        good, bad = theirs, mine
    if bad <= 0 and good <= 0:
        ratio = 1.0
    elif bad <= 0:
        ratio = math.inf
    elif good <= 0:
        ratio = 0.0
    else:
        ratio = good / bad
    return ratio, best, theirs


def label(ratio):
    if math.isinf(ratio):
        return "inf"
    if ratio >= 100:
        return "%.0fx" % ratio
    if ratio >= 10:
        return "%.1fx" % ratio
    return "%.2fx" % ratio


def value(x):
    return "%g" % float("%.4g" % x)


def chart(header, rows):
    groups = [(name, re.compile(pattern), []) for name, pattern in KINDS]
    no_peer = []
    for metric, unit, medians in rows:
        peers = {b: v for b, v in medians.items() if is_peer(b)}
        if "libcpuexec" not in medians or not peers:
            no_peer.append(metric)
            continue
        higher = higher_is_better(metric)
        if higher is None:
            raise ValueError("row %s (%s) has no direction: declare it in DIRECTIONS (bench/chart.py)"
                             % (metric, unit))
        mine = medians["libcpuexec"]
        ratio, best, theirs = advantage(higher, mine, peers)
        for _, pattern, members in groups:
            if pattern.search(metric):
                members.append((metric, unit, ratio, best, mine, theirs))
                break
    groups = [(name, members) for name, _, members in groups if members]
    drawn = sum(len(m) for _, m in groups)
    if drawn == 0:
        raise ValueError("no row has both a libcpuexec median and a peer's")

    width, left, plot_w = 1060, 250, 470
    row_h, group_h, top = 17, 26, 116
    x_one = left + plot_w / 2
    span = math.log2(LIMIT)

    def x_of(ratio):
        r = min(max(ratio, 1 / LIMIT), LIMIT)
        return x_one + math.log2(r) / span * (plot_w / 2)

    height = top + drawn * row_h + len(groups) * group_h + 30 + (18 if no_peer else 0) + 30
    out = []
    add = out.append
    add('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
        'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">' % (width, height, width, height))
    add('<title>libcpuexec against the best peer, per row of make bench</title>')
    add('<rect width="100%" height="100%" fill="#ffffff"/>')
    add('<text x="16" y="24" font-size="16" font-weight="bold">libcpuexec against the best peer, per row of '
        '<tspan font-family="DejaVu Sans Mono, monospace">make bench</tspan></text>')
    add('<text x="16" y="44" fill="#333333">Times better than the best peer: peer / libcpuexec where lower is '
        'better (times, CPU burn), libcpuexec / peer where higher is (throughputs, ratios).</text>')
    add('<text x="16" y="60" fill="#333333">Right of 1: libcpuexec is ahead; left: the best peer is. Log scale, '
        'clipped at %sx (the label gives the value).</text>' % value(LIMIT))
    machine = next((h for h in header if h.startswith("libcpuexec bench:")), "")
    machine = machine.replace("libcpuexec bench: ", "")
    machine = re.sub(r", EPCC delay.*", "", machine)
    load = next((h for h in header if h.startswith("load average")), "")
    add('<text x="16" y="76" fill="#666666" font-size="11">%s</text>' % escape(machine))
    add('<text x="16" y="90" fill="#666666" font-size="11">%s</text>' % escape(load))

    plot_top, plot_bottom = top - 8, height - 30 - (18 if no_peer else 0) - 22
    # Grid and axis: one line per power of two, 1.0 in bold.
    k = -int(span)
    while k <= int(span):
        r = 2.0 ** k
        x = x_of(r)
        add('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="%s"/>'
            % (x, plot_top, x, plot_bottom, "#222222" if k == 0 else "#dddddd", "1.5" if k == 0 else "1"))
        add('<text x="%.1f" y="%d" text-anchor="middle" fill="#444444">%s</text>'
            % (x, plot_bottom + 15, "1" if k == 0 else value(r)))
        k += 1
    add('<text x="%.1f" y="%d" text-anchor="middle" font-size="11" fill="#444444">&#8592; best peer ahead</text>'
        % (x_one - plot_w / 4, plot_top - 4))
    add('<text x="%.1f" y="%d" text-anchor="middle" font-size="11" fill="#444444">libcpuexec ahead &#8594;</text>'
        % (x_one + plot_w / 4, plot_top - 4))

    y = top
    for name, members in groups:
        add('<text x="16" y="%d" font-weight="bold" font-size="13">%s</text>' % (y + 17, escape(name)))
        y += group_h
        for metric, unit, ratio, best, mine, theirs in members:
            x = x_of(ratio)
            color = "#2e7d32" if ratio >= 1 else "#d84315"
            add('<text x="%d" y="%d" text-anchor="end">%s <tspan fill="#777777">%s</tspan></text>'
                % (left - 10, y + 12, escape(metric), escape(unit)))
            x0, x1 = min(x, x_one), max(x, x_one)
            add('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>'
                % (x0, y + 3, max(x1 - x0, 1.0), row_h - 5, color))
            if ratio > LIMIT or ratio < 1 / LIMIT:
                tip = x1 if ratio > LIMIT else x0
                d = 6 if ratio > LIMIT else -6
                add('<path d="M%.1f %d L%.1f %.1f L%.1f %d Z" fill="%s"/>'
                    % (tip, y + 2, tip + d, y + row_h / 2, tip, y + row_h - 2, color))
            add('<text x="%d" y="%d">%s <tspan fill="#777777">vs %s (%s against %s)</tspan></text>'
                % (left + plot_w + 14, y + 12, label(ratio), escape(best), value(mine), value(theirs)))
            y += row_h
    if no_peer:
        add('<text x="16" y="%d" font-size="11" fill="#666666">No peer to compare with (in the table, not drawn): %s'
            '</text>' % (height - 22, escape(", ".join(no_peer))))
    add('</svg>')
    return "\n".join(out) + "\n", drawn, len(groups)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: chart.py TABLE SVG\n")
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            header, rows = parse(f)
        svg, drawn, kinds = chart(header, rows)
    except (OSError, ValueError) as e:
        sys.stderr.write("chart.py: %s: %s\n" % (argv[1], e))
        return 1
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(svg)
    print("chart: %s (%d rows in %d kinds, against the best peer)" % (argv[2], drawn, kinds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

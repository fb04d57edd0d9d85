#!/usr/bin/python3
"""Turns the JSON of one scripts/bench.sh run into the results table, the issue-5 target check and the plot.

Usage: report.py RESULTS_DIR [--build BUILD_DIR] [--markdown FILE] [--plot FILE.png]

RESULTS_DIR holds one Google Benchmark JSON file per bench binary (bench_*.json) and compile.json (the dplc process
and C++ compile times scripts/bench.sh measured). The table goes to stdout; --markdown also writes it, with the
machine and the targets, as Markdown (what docs/performance.md quotes); --plot draws ns per visited node against
graph size with matplotlib, or gnuplot when matplotlib is missing.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

TIME_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def load_runs(results_dir):
    """Every benchmark run of every bench_*.json, keyed by name (without the /manual_time suffix)."""
    runs = {}
    context = {}
    for path in sorted(glob.glob(os.path.join(results_dir, "bench_*.json"))):
        with open(path) as f:
            data = json.load(f)
        context = context or data.get("context", {})
        for run in data.get("benchmarks", []):
            if run.get("run_type", "iteration") != "iteration":
                continue
            name = re.sub(r"/iterations:\d+", "", re.sub(r"/manual_time$", "", run["name"]))
            # Manually timed benchmarks report thread CPU time as their real time; the others' CPU time is
            # the comparable figure on a shared machine.
            manual = run["name"].endswith("/manual_time")
            seconds = (run["real_time"] if manual else run["cpu_time"]) * TIME_UNIT_SECONDS[run["time_unit"]]
            run["seconds"] = seconds
            run["error"] = run.get("error_message") if run.get("error_occurred") else None
            runs[name] = run
    return runs, context


def load_compile(results_dir):
    path = os.path.join(results_dir, "compile.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def fmt_time(seconds):
    if seconds is None:
        return ""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def fmt_num(value, digits=1):
    if value is None:
        return ""
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def fmt_ratio(value):
    return "" if value is None else f"{value:.2f}x" if value < 10 else f"{value:,.0f}x"


def size_of(name):
    last = name.rsplit("/", 1)[-1]
    return int(last) if last.isdigit() else None


class Table:
    """Rows of (workload, size, time, ns/visited, ns/node, ratio, note)."""

    HEADER = ("workload", "size", "time", "ns/visited", "ns/node", "ratio", "note")

    def __init__(self):
        self.rows = []

    def add(self, workload, size, seconds=None, ns_visited=None, ns_node=None, ratio=None, note=""):
        self.rows.append((workload, "" if size is None else f"{size:,}", fmt_time(seconds), fmt_num(ns_visited),
                          fmt_num(ns_node), fmt_ratio(ratio), note))

    def text(self):
        widths = [max(len(str(row[i])) for row in [self.HEADER] + self.rows) for i in range(len(self.HEADER))]
        lines = []
        for k, row in enumerate([self.HEADER] + self.rows):
            cells = [str(c).ljust(w) if i in (0, 6) else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
            lines.append("  ".join(cells).rstrip())
            if k == 0:
                lines.append("  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def markdown(self):
        lines = ["| " + " | ".join(self.HEADER) + " |", "|" + "|".join(["---", "--:", "--:", "--:", "--:", "--:", "---"]) + "|"]
        for row in self.rows:
            lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
        return "\n".join(lines)


def counter(run, key):
    return run.get(key) if run is not None else None


def allocations_note(run):
    """'; N allocations per rewrite' from the allocs_per_rewrite counter (operator new calls in the timed runs)."""
    value = counter(run, "allocs_per_rewrite")
    return "" if value is None else f"; {value:.2f} allocations per rewrite" if value < 10 else f"; {value:.1f} allocations per rewrite"


def swept(run):
    """False for a pass the driver did not sweep: each of its rules needs an op the graph has no call of."""
    return run.get("visited", 1) > 0


def build_table(runs, compile_info):
    table = Table()
    errors = [f"{name}: {run['error']}" for name, run in runs.items() if run["error"]]

    def series(prefix):
        items = [(size_of(n), n, r) for n, r in runs.items() if re.fullmatch(re.escape(prefix) + r"\d+", n)]
        return [(s, n, r) for s, n, r in sorted(items) if not r["error"]]

    # 1. chain and 2. transformer: ratio = ns per visited node relative to the smallest size (flatness).
    for workload, note in (("chain", "add(x, x) => multiply(x, 2); ratio: ns/visited vs. 10^3"),
                           ("transformer", "8 simplification rules; ratio: ns/visited vs. 10^3")):
        points = series(workload + "/")
        base = counter(points[0][2], "ns_per_visited") if points else None
        for size, name, run in points:
            table.add(workload, size, run["seconds"], run.get("ns_per_visited"), run.get("ns_per_node"),
                      run.get("ns_per_visited") / base if base else None,
                      f"{int(run['rewrites']):,} rewrites" + allocations_note(run) + "; " + note
                      if size == points[0][0] else f"{int(run['rewrites']):,} rewrites" + allocations_note(run))
    # 5. the floor: ratio = the transformer pass's time over the floor's on the same graph.
    for size, name, run in series("floor/"):
        pass_run = runs.get(f"transformer/{size}")
        sweep_seconds = run["ns_per_node"] * run["nodes"] * 1e-9  # an iteration is several sweeps
        ratio = pass_run["seconds"] / sweep_seconds if pass_run and not pass_run["error"] else None
        table.add("floor (read each op id)", size, sweep_seconds, None, run.get("ns_per_node"), ratio,
                  "ratio: transformer pass / floor")
    # 3. rules on one root op (sharing their structure, or only the root): ratio = time over the 1-rule pass's.
    one_rule = runs.get("rules/1")
    for prefix, label in (("rules/", "same root op"), ("rules_diverse/", "same root op, diverse operands"),
                          ("rules_mixed/", "14 root ops, none matching")):
        points = series(prefix)
        base = points[0][2]["seconds"] if points else None
        note = "ratio: time vs. 1 rule"
        if prefix == "rules_mixed/":
            base = one_rule["seconds"] if one_rule and not one_rule["error"] else None
            note = "ratio: time vs. rules/1 (1 rule)"
        for count, name, run in points:
            table.add(f"{count} rules, {label}", int(run["nodes"]), run["seconds"], run.get("ns_per_visited"),
                      run.get("ns_per_node"), run["seconds"] / base if base else None,
                      note if count == points[0][0] else "")
    # 4. cascade: the worklist and the re-scan baseline; ratio = re-scan time / worklist time.
    for name in sorted((n for n in runs if n.startswith("cascade/worklist/")), key=lambda n: (n.split("/")[2], size_of(n))):
        run = runs[name]
        if run["error"]:
            continue
        depth = name.split("/")[2].replace("depth_", "depth ")
        size = size_of(name)
        table.add(f"cascade {depth}: worklist", size, run["seconds"], run.get("ns_per_visited"),
                  run.get("ns_per_node"), None, f"{int(run['rewrites']):,} rewrites" + allocations_note(run))
        rescan = runs.get(name.replace("/worklist/", "/rescan/"))
        if rescan and not rescan["error"]:
            table.add(f"cascade {depth}: re-scan", size, rescan["seconds"], rescan.get("ns_per_visited"),
                      rescan.get("ns_per_node"), rescan["seconds"] / run["seconds"],
                      f"{int(rescan['scans']):,} scans; ratio: re-scan / worklist")
    # 9 and 11. Sites in a row: QKV groups combined by a multi-root rule, blocks partitioned into composite
    # functions; ratio = time per site over that of the fewest sites (linear: 1x).
    for prefix, label, site in (("qkv/", "QKV groups, multi-root rule", "group"),
                                ("partition/", "conv blocks, partitioned", "block"),
                                ("partition/shared/", "conv blocks sharing parameters, partitioned", "block"),
                                ("partition/again/", "partitioned conv blocks, the pass again", "block"),
                                ("partition/then/", "partitioned conv blocks, a rewrite pass", "block")):
        points = series(prefix)
        base = points[0][2]["seconds"] / points[0][0] if points else None
        for sites, name, run in points:
            per_site = run["seconds"] / sites
            note = f"{per_site * 1e6:.2f} us per {site}" + allocations_note(run)
            if sites == points[0][0]:
                note += (f"; size = {site}s ({int(run['nodes']):,} nodes); ratio: time per {site} vs. {sites:,} "
                         f"{site}s")
            table.add(label, sites, run["seconds"], run.get("ns_per_visited"), run.get("ns_per_node"),
                      per_site / base, note)
    # 10. interpreted mode: ratio = the interpreter's time over the compiled pass's, same rules and graph.
    for name, run in sorted(runs.items()):
        if not name.startswith("interpreted/") or run["error"]:
            continue
        compiled = compiled_run(runs, name)
        ratio = run["seconds"] / compiled["seconds"] if compiled and not compiled["error"] else None
        table.add(f"{interpreted_label(name)}: interpreted", int(run["nodes"]), run["seconds"],
                  run.get("ns_per_visited"), run.get("ns_per_node"), ratio,
                  "same rules and graph; ratio: interpreted / compiled")
    # 8. real models: one row per pass that rewrote something, one row for all the passes that found nothing.
    models = {}
    for name, run in sorted(runs.items()):
        if name.startswith("model/") and not run["error"]:
            _, model, pass_name = name.split("/")
            models.setdefault(model, []).append((pass_name, run))
    for model, passes in models.items():
        idle = [run for _, run in passes if run["rewrites"] == 0 and swept(run)]
        skipped = [run for _, run in passes if not swept(run)]
        for pass_name, run in passes:
            if run["rewrites"] != 0:
                table.add(f"{model}: {pass_name}", int(run["nodes"]), run["seconds"], run.get("ns_per_visited"),
                          run.get("ns_per_node"), None, f"{int(run['rewrites'])} rewrites")
                interpreted = runs.get(f"model-interpreted/{model}/{pass_name}")
                if interpreted and not interpreted["error"]:
                    table.add(f"{model}: {pass_name}, interpreted", int(interpreted["nodes"]),
                              interpreted["seconds"], interpreted.get("ns_per_visited"),
                              interpreted.get("ns_per_node"), interpreted["seconds"] / run["seconds"],
                              "same rules and graph; ratio: interpreted / compiled")
        if idle:
            median = sorted(idle, key=lambda r: r["seconds"])[len(idle) // 2]
            table.add(f"{model}: {len(idle)} passes that match nothing", int(median["nodes"]), median["seconds"],
                      median.get("ns_per_visited"), median.get("ns_per_node"), None, "median of the passes: a sweep")
        if skipped:
            median = sorted(skipped, key=lambda r: r["seconds"])[len(skipped) // 2]
            table.add(f"{model}: {len(skipped)} passes no rule of which can match in it", int(median["nodes"]),
                      median["seconds"], None, None, None, "median of the passes: not swept")
        # The interpreted passes of examples/models that find nothing here: matching alone, both ways.
        idle_pairs = [(run, runs[f"model-interpreted/{model}/{pass_name}"]) for pass_name, run in passes
                      if run["rewrites"] == 0 and swept(run) and not runs.get(f"model-interpreted/{model}/{pass_name}",
                                                                {"error": True})["error"]]
        if idle_pairs:
            compiled = sum(run["seconds"] for run, _ in idle_pairs)
            interpreted = sum(other["seconds"] for _, other in idle_pairs)
            table.add(f"{model}: {len(idle_pairs)} model passes that match nothing, interpreted",
                      int(idle_pairs[0][1]["nodes"]), interpreted / len(idle_pairs), None, None,
                      interpreted / compiled, "mean per pass; ratio: interpreted / compiled, summed over them")
    # 6. dplc.
    for name, run in sorted(runs.items()):
        if name.startswith("dplc/") and not run["error"]:
            what = {"check": "dplc check", "check_emit": "dplc check + emit C++"}.get(name.split("/")[1], name)
            table.add(what, size_of(name), run["seconds"], None, None, None,
                      f"{run['seconds'] * 1e6 / size_of(name):.0f} us per rule (in-process)")
    if compile_info:
        table.add("dplc process (1,000 rules)", 1000, compile_info.get("dplc_seconds"), None, None, None,
                  f"{compile_info.get('cpp_lines', 0):,} lines of C++")
        table.add("C++ compile of that output", 1000, compile_info.get("cxx_seconds"), None, None, None,
                  compile_info.get("cxx", ""))
        if compile_info.get("cxx_parts_seconds") is not None:
            parts_seconds = compile_info["cxx_parts_seconds"]
            one_file = compile_info.get("cxx_seconds")
            table.add("... in 2 parts compiled at once", 1000, parts_seconds, None, None,
                      one_file / parts_seconds if one_file and parts_seconds else None,
                      "dplc --parts 2; wall time of both compiles; ratio: one file / two parts")
    # 7. text.
    for what in ("read", "print"):
        for size, name, run in series(f"text/{what}/"):
            mb_per_s = run.get("bytes_per_second", 0) / 1e6
            table.add(f"text {what}", int(run["bindings"]), run["seconds"], None, run.get("ns_per_binding"), None,
                      f"ns/node = per binding; {mb_per_s:.0f} MB/s")
    return table, errors


def target_lines(runs, compile_info):
    """The targets of issue 5 / design brief §5, each with the measured value and whether it is met."""
    lines = []

    def verdict(ok):
        return "met" if ok else "NOT met"

    big = runs.get("transformer/1000000")
    if big and not big["error"]:
        v = big["ns_per_visited"]
        lines.append(f"- <= 100 ns per visited node, 10^6-node transformer: {v:.0f} ns -> {verdict(v <= 100)}")
    flat = [runs[n]["ns_per_visited"] for n in runs if re.fullmatch(r"transformer/\d+", n) and not runs[n]["error"]]
    if len(flat) >= 2:
        spread = max(flat) / min(flat)
        lines.append(f"- per-node cost flat 10^3..10^6 (within 1.5x): {spread:.2f}x -> {verdict(spread <= 1.5)}")
    for prefix, what in (("rules/", ""), ("rules_diverse/", ", operands diverse")):
        one, many = runs.get(prefix + "1"), runs.get(prefix + "256")
        if one and many and not one["error"] and not many["error"]:
            r = many["seconds"] / one["seconds"]
            lines.append(f"- 1 -> 256 rules on one root op{what} <= 1.5x: {r:.2f}x -> {verdict(r <= 1.5)}")
    for name in sorted(n for n in runs if n.startswith("cascade/rescan/") and n.endswith("/100000")):
        worklist = runs.get(name.replace("/rescan/", "/worklist/"))
        if worklist and not worklist["error"] and not runs[name]["error"]:
            r = runs[name]["seconds"] / worklist["seconds"]
            depth = name.split("/")[2].replace("depth_", "depth ")
            lines.append(f"- >= 100x faster than re-scan at 10^5 nodes ({depth}): {r:,.0f}x -> {verdict(r >= 100)}")
    emit = runs.get("dplc/check_emit/1000")
    if emit and not emit["error"]:
        lines.append(f"- dplc checks and emits 1,000 rules in <= 1 s: {fmt_time(emit['seconds'])} in-process"
                     + (f", {fmt_time(compile_info['dplc_seconds'])} as a process" if compile_info else "")
                     + f" -> {verdict(emit['seconds'] <= 1.0)}")
    ratios = []
    for name, run in sorted(runs.items()):
        compiled = compiled_run(runs, name) if name.startswith("interpreted/") else None
        if compiled and not run["error"] and not compiled["error"]:
            ratios.append((run["seconds"] / compiled["seconds"], interpreted_label(name)))
    for name, run in sorted(runs.items()):
        compiled = runs.get(name.replace("model-interpreted/", "model/", 1))
        # A pass neither mode sweeps (no rule can match in the model) has no ratio to speak of.
        if (name.startswith("model-interpreted/") and compiled and not run["error"] and not compiled["error"]
                and swept(compiled)):
            label = "/".join(name.split("/")[1:]) + ("" if compiled["rewrites"] != 0 else " (matches nothing)")
            ratios.append((run["seconds"] / compiled["seconds"], label))
    if ratios:
        worst = min(ratios)
        lines.append(f"- >= 5x faster than interpreting the same rules: "
                     + ", ".join(f"{r:.1f}x ({w})" for r, w in ratios) + f" -> {verdict(worst[0] >= 5)}")
    else:
        lines.append("- >= 5x faster than interpreting the same rules: not measured")
    for prefix, what, site in (("qkv", "QKV groups", "group"), ("partition", "Partitioned conv blocks", "block"),
                               ("partition/shared", "Partitioned conv blocks sharing parameters", "block"),
                               ("partition/again", "Partition passes over partitioned conv blocks", "block"),
                               ("partition/then", "Rewrite passes over partitioned conv blocks", "block")):
        points = [(size_of(n), r["seconds"] / size_of(n)) for n, r in runs.items()
                  if re.fullmatch(prefix + r"/\d+", n) and not r["error"]]
        if len(points) >= 2:
            points.sort()
            growth = points[-1][1] / points[0][1]
            lines.append(f"- {what} stay linear ({points[0][0]:,} -> {points[-1][0]:,} {site}s): time per {site} "
                         f"{growth:.2f}x -> {verdict(growth <= 1.5)} (1.5x taken as linear)")
    return lines


def compiled_run(runs, name):
    """The compiled pass's run on the workload of interpreted/<workload>: the name without the prefix."""
    return runs.get(name.removeprefix("interpreted/"))


def interpreted_label(name):
    """interpreted/chain/100000 -> chain; interpreted/rules/256 -> 256 rules, same root op;
    interpreted/cascade/worklist/depth_1000/100000 -> cascade, depth 1000."""
    workload = name.split("/")[1]
    if workload == "rules":
        return f"{size_of(name)} rules, same root op"
    if workload == "rules_diverse":
        return f"{size_of(name)} rules, same root op, diverse operands"
    if workload == "rules_mixed":
        return f"{size_of(name)} rules, 14 root ops, none matching"
    if workload == "cascade":
        return "cascade, " + name.split("/")[3].replace("_", " ")
    return workload


def machine_lines(context, build_dir):
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    compiler = "unknown compiler"
    flags = ""
    cache = os.path.join(build_dir, "CMakeCache.txt") if build_dir else None
    if cache and os.path.exists(cache):
        values = {}
        with open(cache) as f:
            for line in f:
                m = re.match(r"(CMAKE_CXX_COMPILER|CMAKE_CXX_FLAGS_RELEASE|CMAKE_BUILD_TYPE):\w+=(.*)", line)
                if m:
                    values[m.group(1)] = m.group(2).strip()
        if "CMAKE_CXX_COMPILER" in values:
            try:
                out = subprocess.run([values["CMAKE_CXX_COMPILER"], "--version"], capture_output=True, text=True)
                compiler = out.stdout.splitlines()[0]
            except (OSError, IndexError):
                compiler = values["CMAKE_CXX_COMPILER"]
        flags = f"{values.get('CMAKE_BUILD_TYPE', '')} ({values.get('CMAKE_CXX_FLAGS_RELEASE', '')})"
    return [f"- CPU: {cpu}, {context.get('num_cpus', os.cpu_count())} cores at {context.get('mhz_per_cpu', '?')} MHz; "
            f"load average at the start: {', '.join(f'{x:.2f}' for x in context.get('load_avg', []))}",
            f"- compiler: {compiler}, {flags}",
            f"- run: {context.get('date', '')}; times are thread CPU time (the machine is shared); Debian's Google "
            f"Benchmark (its library reports build type '{context.get('library_build_type', '?')}', which affects "
            f"only the framework's own checks)"]


def plot(runs, path):
    series = {}
    for workload, label in (("chain", "add chain (x+x => 2x)"), ("transformer", "transformer, 8 rules"),
                            ("cascade/worklist/depth_all", "distribute cascade (worklist)"),
                            ("floor", "floor: read each op id")):
        key = "ns_per_node" if workload == "floor" else "ns_per_visited"
        points = sorted((size_of(n), r[key]) for n, r in runs.items()
                        if n.startswith(workload + "/") and size_of(n) and not r["error"] and key in r)
        if points:
            series[label] = points
    if not series:
        print("report: nothing to plot", file=sys.stderr)
        return False
    title = "dpl compiled passes: ns per visited node vs. graph size"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
    if plt is not None:
        fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
        for label, points in series.items():
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("nodes in the graph")
        ax.set_ylabel("ns per visited node (floor: per node)")
        ax.axhline(100, color="grey", linestyle="--", linewidth=1, label="target: 100 ns")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path)
        return True
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        print("report: neither matplotlib nor gnuplot is installed; no plot", file=sys.stderr)
        return False
    script = [f"set terminal pngcairo size 840,540", f"set output '{path}'", f"set title '{title}'",
              "set logscale xy", "set xlabel 'nodes in the graph'", "set ylabel 'ns per visited node (floor: per node)'",
              "set grid", "set key top left"]
    plots = [f"'-' with linespoints title '{label}'" for label in series]
    script.append("plot " + ", ".join(plots) + ", 100 with lines dashtype 2 title 'target: 100 ns'")
    for points in series.values():
        script.extend(f"{x} {y}" for x, y in points)
        script.append("e")
    subprocess.run([gnuplot], input="\n".join(script) + "\n", text=True, check=True)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--build")
    parser.add_argument("--markdown")
    parser.add_argument("--plot")
    args = parser.parse_args()

    runs, context = load_runs(args.results)
    if not runs:
        print(f"report: no bench_*.json in {args.results}", file=sys.stderr)
        return 1
    compile_info = load_compile(args.results)
    table, errors = build_table(runs, compile_info)
    targets = target_lines(runs, compile_info)
    machine = machine_lines(context, args.build)

    print(table.text())
    print("\nTargets (issue 5):")
    print("\n".join(targets))
    print("\nMachine:")
    print("\n".join(machine))
    for error in errors:
        print(f"FAILED: {error}", file=sys.stderr)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("### Results\n\n" + table.markdown() + "\n\n### Targets\n\n" + "\n".join(targets) +
                    "\n\n### Machine\n\n" + "\n".join(machine) + "\n")
    if args.plot and plot(runs, args.plot):
        print(f"\nplot: {args.plot}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

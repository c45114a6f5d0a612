"""The same run read back from its Paraver trace and its OTF2 archive
equals pj_dump's reading of its Pajé trace (tests/viewers.rs).

    viewers_same.py DUMP [--prv FILE.prv] [--otf2 ANCHOR] [--profile PROFILE]

DUMP is `pj_dump` of the Pajé trace. Every form is brought to the same
rows, per container name:
  S  state type, value, depth, start, end   (a push to its pop)
  E  event type, value, time
  V  variable, value, start                 (each value set)
  LS from, to, start / LE from, to, end     (each message's two ends)
Times are seconds from T0 printed as pj_dump prints them (%f).

--profile is paramedir's state profile of the .prv (time per Paraver state
and thread): each thread's row must be the time on top of the stack of
one of its container's state rows, from pj_dump's intervals.

Exit 0 when every form given is the same; else the first differences.
"""
import re
import sys
from collections import Counter, defaultdict


def name_of(path):
    return path.rsplit("/", 1)[-1]


def secs(ns):
    return "%f" % (ns / 1e9)


def from_dump(path):
    rows = Counter()
    states = defaultdict(list)
    names = Counter()
    for line in open(path, encoding="utf-8", errors="replace"):
        f = [x.strip() for x in line.rstrip("\n").split(",")]
        kind = f[0]
        if kind == "Container":
            names[name_of(", ".join(f[6:]))] += 1
        elif kind == "State":
            c, ty, start, end, depth, value = f[1], f[2], f[3], f[4], f[6], ", ".join(f[7:])
            rows[("S", name_of(c), ty, value, int(float(depth)), start, end)] += 1
            states[(name_of(c), ty)].append((float(start), float(end), int(float(depth)), value))
        elif kind == "Event":
            rows[("E", name_of(f[1]), f[2], ", ".join(f[4:]), f[3])] += 1
        elif kind == "Variable":
            rows[("V", name_of(f[1]), f[2], float(f[6]), f[3])] += 1
        elif kind == "Link":
            src, dst = name_of(f[7]), name_of(f[8])
            rows[("LS", src, dst, f[3])] += 1
            rows[("LE", src, dst, f[4])] += 1
    # pj_dump names a container by its name alone: the rows of two of
    # the same name cannot be told apart there.
    shared = {n for n, k in names.items() if k > 1}
    return rows, (states, shared)


def read_pcf(path):
    """Event types (code -> label, values) and states of a .pcf."""
    types, states, section, cur = {}, {}, None, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line in ("STATES", "STATES_COLOR", "EVENT_TYPE", "VALUES", "DEFAULT_OPTIONS", "DEFAULT_SEMANTIC"):
            section = line
            if line == "EVENT_TYPE":
                cur = None
            continue
        if not line.strip():
            continue
        if section == "STATES":
            n, name = line.split(None, 1)
            states[int(n)] = name
        elif section == "EVENT_TYPE":
            _, code, label = line.split(None, 2)
            cur = int(code)
            types[cur] = (label, {})
        elif section == "VALUES":
            n, name = line.split(None, 1)
            types[cur][1][int(n)] = name
    return types, states


def read_row(path):
    levels, cur = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("LEVEL "):
            cur = line.split()[1]
            levels[cur] = []
        elif line and cur:
            levels[cur].append(line)
    return levels


def from_prv(prv):
    """The rows of a Paraver trace; first, every rule BSC's reader
    (paraver-kernel: traceheader.h, tracebodyio_v1.cpp, rowfileparser.cpp)
    applies to a header and a record, and Paraver's order (by time)."""
    base = prv[: -len(".prv")]
    types, state_names = read_pcf(base + ".pcf")
    levels = read_row(base + ".row")
    lines = open(prv, encoding="utf-8")
    header = next(lines).rstrip("\n")
    m = re.fullmatch(r"#Paraver \((\d\d/\d\d/\d{4} at \d\d:\d\d)\):(\d+)_ns:(\d+)\(([\d,]*)\):(\d+):(.*)", header)
    if not m:
        raise SystemExit("%s:1: not a Paraver header: %s" % (prv, header))
    ftime, nodes = int(m.group(2)), int(m.group(3))
    cpus = [int(c) for c in m.group(4).split(",")] if m.group(4) else []
    if len(cpus) != nodes:
        raise SystemExit("%s:1: %d nodes, %d CPU counts" % (prv, nodes, len(cpus)))
    # Global CPU n is on node node_of_cpu[n].
    node_of_cpu = {0: None}
    for node, k in enumerate(cpus, 1):
        for _ in range(k):
            node_of_cpu[len(node_of_cpu)] = node
    # ftime:nodes(cpus):nAppl:app:app..., an app being nTasks(threads:node,...)
    apps = re.findall(r"(\d+)\(([^)]*)\)", m.group(6))
    if len(apps) != int(m.group(5)):
        raise SystemExit("%s:1: %s applications announced, %d listed" % (prv, m.group(5), len(apps)))
    threads = levels["THREAD"]
    glob, node_of, n = {}, {}, 0
    for a, (ntasks, app) in enumerate(apps, 1):
        tasks = app.split(",")
        if len(tasks) != int(ntasks):
            raise SystemExit("%s:1: application %d: %s tasks announced, %d listed" % (prv, a, ntasks, len(tasks)))
        for t, task in enumerate(tasks, 1):
            nthreads, node = (int(x) for x in task.split(":"))
            if not 1 <= node <= nodes:
                raise SystemExit("%s:1: task %d.%d on node %d of %d" % (prv, a, t, node, nodes))
            for th in range(1, nthreads + 1):
                glob[(a, t, th)] = name_of(threads[n])
                node_of[(a, t, th)] = node
                n += 1
    if (len(threads), len(levels["NODE"]), len(levels["CPU"])) != (n, nodes, sum(cpus)):
        raise SystemExit("%s.row: %d threads, %d nodes, %d CPUs where the header has %d, %d, %d"
                         % (base, len(threads), len(levels["NODE"]), len(levels["CPU"]), n, nodes, sum(cpus)))

    def where(number, cpu, thread):
        # validRecordLocation: a known CPU and thread, the thread on the
        # CPU's node.
        if thread not in glob or cpu not in node_of_cpu:
            raise SystemExit("%s:%d: no CPU %d or thread %s" % (prv, number, cpu, thread))
        if cpu and node_of_cpu[cpu] != node_of[thread]:
            raise SystemExit("%s:%d: thread %s is not on CPU %d's node" % (prv, number, thread, cpu))
        return glob[thread]

    rows, stacks, last = Counter(), defaultdict(list), 0
    for number, line in enumerate(lines, 2):
        # TraceBodyIO_v1::read skips an empty line: the header's padding.
        if line == "\n":
            continue
        f = line.rstrip("\n").split(":")
        if f[0] not in "123" or not all(x.lstrip("-").isdigit() for x in f):
            raise SystemExit("%s:%d: not a record: %s" % (prv, number, line))
        thread = (int(f[2]), int(f[3]), int(f[4]))
        who = where(number, int(f[1]), thread)
        # A .prv's records are sorted by time (a state's begin, a
        # message's logical send), inside the trace.
        if not last <= int(f[5]) <= ftime:
            raise SystemExit("%s:%d: a record at %s after one at %d (end %d)" % (prv, number, f[5], last, ftime))
        last = int(f[5])
        if f[0] == "1":
            if len(f) != 8 or int(f[6]) < int(f[5]) or int(f[7]) not in state_names:
                raise SystemExit("%s:%d: not a state record of a known state: %s" % (prv, number, line))
        elif f[0] == "2":
            if len(f) < 8 or len(f) % 2:
                raise SystemExit("%s:%d: an event record has type:value pairs: %s" % (prv, number, line))
            t = int(f[5])
            for i in range(6, len(f), 2):
                if int(f[i]) not in types:
                    raise SystemExit("%s:%d: event type %s is not in the .pcf" % (prv, number, f[i]))
                label, values = types[int(f[i])]
                v = int(f[i + 1])
                if " (x1000" in label:
                    rows[("V", who, label.split(" (x1000")[0], v, secs(t))] += 1
                elif values.get(0) == "End":
                    # Two containers may share a name: a stack is a thread's.
                    st = stacks[(thread, label)]
                    if v == 0:
                        value, start = st.pop()
                        rows[("S", who, label, value, len(st), secs(start), secs(t))] += 1
                    else:
                        st.append((values[v], t))
                else:
                    rows[("E", who, label, values[v], secs(t))] += 1
        else:
            if len(f) != 15 or int(f[11]) < 0 or int(f[13]) < 0:
                raise SystemExit("%s:%d: not a communication record: %s" % (prv, number, line))
            dst = where(number, int(f[7]), (int(f[8]), int(f[9]), int(f[10])))
            rows[("LS", who, dst, secs(int(f[5])))] += 1
            rows[("LE", who, dst, secs(int(f[11])))] += 1
    return rows


def from_otf2(anchor):
    import otf2

    rows, stacks = Counter(), defaultdict(list)
    with otf2.reader.open(anchor) as trace:
        offset = trace.definitions.clock_properties.global_offset
        rel = lambda t: secs(t - offset)
        for loc, ev in trace.events:
            path = loc.name
            if isinstance(ev, (otf2.events.Enter, otf2.events.Leave)):
                ty = ev.region.description
                if path.endswith(" (%s)" % ty):
                    path = path[: -len(ty) - 3]
                st = stacks[(id(loc), ty)]
                if isinstance(ev, otf2.events.Enter):
                    st.append((ev.region.name, ev.time))
                else:
                    value, start = st.pop()
                    rows[("S", name_of(path), ty, value, len(st), rel(start), rel(ev.time))] += 1
            elif isinstance(ev, otf2.events.Metric):
                member = ev.metric.members[0]
                rows[("V", name_of(path), member.name, ev.values[0], rel(ev.time))] += 1
            elif isinstance(ev, otf2.events.ParameterString):
                rows[("E", name_of(path), ev.parameter.name, str(ev.string), rel(ev.time))] += 1
            elif isinstance(ev, otf2.events.MpiSend):
                dst = ev.communicator.group.members[ev.receiver].name
                rows[("LS", name_of(path), name_of(dst), rel(ev.time))] += 1
            elif isinstance(ev, otf2.events.MpiRecv):
                src = ev.communicator.group.members[ev.sender].name
                rows[("LE", name_of(src), name_of(path), rel(ev.time))] += 1
    return rows


def same(what, want, got, value_close):
    """Equal multisets; a variable's value compared by `value_close`."""
    def key(r):
        return r[:3] + r[4:] if r[0] == "V" else r

    vw, vg = defaultdict(list), defaultdict(list)
    for rows, by in ((want, vw), (got, vg)):
        for r, n in rows.items():
            if r[0] == "V":
                by[key(r)].extend([r[3]] * n)
    bad = []
    for k in set(vw) | set(vg):
        a, b = sorted(vw[k]), sorted(vg[k])
        if len(a) != len(b) or not all(value_close(x, y) for x, y in zip(a, b)):
            bad.append("variable %s: pj_dump %s, %s %s" % (k, a[:5], what, b[:5]))
    rest_w = Counter({r: n for r, n in want.items() if r[0] != "V"})
    rest_g = Counter({r: n for r, n in got.items() if r[0] != "V"})
    for r in list((rest_w - rest_g).elements())[:10]:
        bad.append("only in pj_dump: %s" % (r,))
    for r in list((rest_g - rest_w).elements())[:10]:
        bad.append("only in the %s: %s" % (what, r))
    if bad:
        print("%s differs from pj_dump:" % what)
        for b in bad[:20]:
            print("  " + b)
        return False
    kinds = Counter(r[0] for r in got.elements())
    print("%s: same as pj_dump (%s)" % (what, ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))
    return True


def top_times(intervals):
    """Seconds on top of the stack, per value, of one state row: each
    interval's time less its direct children's (a child is one level
    deeper and starts inside it; pj_dump's intervals nest)."""
    out, stack = Counter(), []

    def close(entry):
        start, end, _, value, inner = entry
        out[value] += end - start - inner

    for start, end, depth, value in sorted(intervals, key=lambda x: (x[0], x[2], x[1])):
        while stack and stack[-1][2] >= depth:
            close(stack.pop())
        if stack:
            stack[-1][4] += end - start
        stack.append([start, end, depth, value, 0.0])
    while stack:
        close(stack.pop())
    return out


def profile_same(path, dumped):
    states, shared = dumped
    lines = [l.rstrip("\n").split("\t") for l in open(path, encoding="utf-8")]
    head = lines[0]
    rows = {}
    for f in lines[1:]:
        if not f or not f[0] or f[0] == "":
            break
        got = Counter()
        for col, cell in zip(head[1:], f[1:]):
            # State 0 is where a thread is while no record says a state.
            if col and col != "(no state)" and cell and float(cell) > 0:
                got[col] += float(cell) / 1e9
        rows[name_of(f[0])] = got
    bad, skipped = [], 0
    for who, got in rows.items():
        if who in shared:
            skipped += 1
            continue
        if not got:
            continue
        # pj_dump prints times to the microsecond: a row's sum may be off
        # by a microsecond an interval.
        options = [
            ({k: v for k, v in top_times(iv).items() if v > 0}, 1e-6 * (len(iv) + 1))
            for (c, _), iv in states.items()
            if c == who
        ]
        # (A state shorter than that may print as none.)
        fits = lambda o, tol: all(abs(o.get(k, 0) - got.get(k, 0)) <= tol for k in set(o) | set(got))
        if not any(fits(o, tol) for o, tol in options):
            bad.append("%s: paramedir %s, pj_dump's rows %s" % (who, dict(got), [o for o, _ in options]))
    if bad:
        print("paramedir's state profile differs:")
        for b in bad[:10]:
            print("  " + b)
        return False
    print("paramedir's state profile: %d threads, each the time on top of one of its rows (%d of a name pj_dump shares, not compared)" % (len(rows) - skipped, skipped))
    return True


def close(dumped, value, quantum):
    """pj_dump keeps a variable in single precision (24 bits: 6e-8 of
    the value) and prints it with %f; the Paraver trace keeps thousandths."""
    return abs(dumped - value) <= 1.2e-7 * abs(value) + quantum


def main():
    args = sys.argv[1:]
    dump = args.pop(0)
    want, states = from_dump(dump)
    ok = True
    while args:
        opt, path = args.pop(0), args.pop(0)
        if opt == "--prv":
            ok &= same("Paraver trace", want, from_prv(path), lambda a, b: close(a, b / 1000, 0.0006))
        elif opt == "--otf2":
            ok &= same("OTF2 archive", want, from_otf2(path), lambda a, b: close(a, b, 1e-6))
        elif opt == "--profile":
            ok &= profile_same(path, states)
    sys.exit(0 if ok else 1)


main()

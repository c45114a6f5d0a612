# The synthetic grid of the benchmarks, as a Ganglia .traced recording
# (conventions.md §2): 64 hosts (node00..node63.cluster.example) x 16
# metrics sampled every second, values a deterministic pseudo-random walk,
# decimal times with milliseconds; about 44 bytes a line.
#
#   awk -v lines=N -f benches/grid.awk > g.traced
BEGIN {
    split("cpu_user cpu_system cpu_idle cpu_wio load_one load_five load_fifteen mem_free mem_cached bytes_in bytes_out pkts_in pkts_out proc_run proc_total disk_free", m, " ");
    t = 1795264448; n = 0; v = 1.0;
    print "# collector node00.cluster.example";
    print "# cluster cluster.example";
    while (n < lines) {
        for (h = 0; h < 64 && n < lines; h++)
            for (k = 1; k <= 16 && n < lines; k++) {
                v = (v * 1103515245 + 12345) % 2147483648;
                printf "%d.%03d %s node%02d.cluster.example %.2f\n", t, (h * 13) % 1000, m[k], h, v / 21474836.48;
                n++;
            }
        t++;
    }
}

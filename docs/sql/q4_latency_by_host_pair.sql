-- Message latency percentiles per pair of hosts.
SELECT f.host AS from_host, t.host AS to_host, COUNT(*) AS messages,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY l.end_ns - l.start_ns) AS p50_ns,
       percentile_cont(0.9) WITHIN GROUP (ORDER BY l.end_ns - l.start_ns) AS p90_ns,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY l.end_ns - l.start_ns) AS p99_ns
FROM links l
JOIN containers f ON f.container_id = l.from_container_id
JOIN containers t ON t.container_id = l.to_container_id
GROUP BY f.host, t.host
ORDER BY from_host, to_host

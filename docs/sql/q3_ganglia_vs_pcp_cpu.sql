-- Do Ganglia and PCP agree on CPU? Per host, each one's user CPU as a
-- time-weighted average in percent (the units say how: Ganglia's `%`,
-- PCP's `utilisation`, a fraction).
WITH params AS (
  SELECT 'cpu_user' AS ganglia_type, 'kernel.all.cpu.user (utilisation)' AS pcp_type
),
weighted AS (
  SELECT m.host, v.type, t.unit,
         SUM(v.value * (v.end_ns - v.start_ns)) / SUM(v.end_ns - v.start_ns) AS mean
  FROM variables v
  JOIN containers m ON m.container_id = v.container_id
  JOIN types t ON t.type_id = v.type_id
  GROUP BY m.host, v.type, t.unit
),
percent AS (
  SELECT host, type, CASE WHEN unit = 'utilisation' THEN mean * 100 ELSE mean END AS pct
  FROM weighted
)
SELECT g.host, g.pct AS ganglia_percent, c.pct AS pcp_percent, g.pct - c.pct AS difference
FROM percent g
JOIN percent c ON c.host = g.host
CROSS JOIN params p
WHERE g.type = p.ganglia_type AND c.type = p.pcp_type
ORDER BY g.host

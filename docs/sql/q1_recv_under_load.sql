-- How long did each rank wait in MPI_Recv while its host's load was
-- above a threshold? The overlap of every MPI_Recv with every interval of
-- its host's load_one above it.
WITH params AS (SELECT 2.0 AS load_above, 'load_one' AS load_type),
recv AS (
  SELECT c.path, c.host, s.start_ns, s.end_ns
  FROM states s JOIN containers c ON c.container_id = s.container_id
  WHERE s.value = 'MPI_Recv'
),
loaded AS (
  SELECT m.host, v.start_ns, v.end_ns
  FROM variables v
  JOIN containers m ON m.container_id = v.container_id
  CROSS JOIN params p
  WHERE m.role = 'machine' AND v.type = p.load_type AND v.value > p.load_above
)
SELECT r.path AS rank,
       SUM(GREATEST(0, LEAST(r.end_ns, l.end_ns) - GREATEST(r.start_ns, l.start_ns))) / 1e9 AS seconds
FROM recv r
JOIN loaded l ON l.host = r.host AND l.start_ns < r.end_ns AND r.start_ns < l.end_ns
GROUP BY r.path
ORDER BY rank

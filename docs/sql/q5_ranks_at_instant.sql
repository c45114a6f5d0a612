-- What was every rank (every process) doing at an instant? Each open
-- state of each of its rows, innermost last.
WITH params AS (SELECT (SELECT t0_ns FROM run) + 14000000000 AS at_ns)
SELECT c.path, s.type, s.depth, s.value
FROM states s
JOIN containers c ON c.container_id = s.container_id
CROSS JOIN params p
WHERE c.role = 'process' AND s.start_ns <= p.at_ns AND p.at_ns < s.end_ns
ORDER BY c.path, s.type, s.depth

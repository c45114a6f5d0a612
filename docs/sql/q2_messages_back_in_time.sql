-- Which messages arrive before they leave by more than the clock band
-- (what a clock correction left wrong)?
WITH params AS (SELECT 1000 AS band_ns)
SELECT f.path AS sender, t.path AS receiver, l.start_ns, l.end_ns,
       l.start_ns - l.end_ns AS early_ns
FROM links l
JOIN containers f ON f.container_id = l.from_container_id
JOIN containers t ON t.container_id = l.to_container_id
CROSS JOIN params p
WHERE l.end_ns + p.band_ns < l.start_ns
ORDER BY early_ns DESC, sender, receiver, l.start_ns

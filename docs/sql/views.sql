-- pj_dump-shaped views of the entity tables: seconds since T0, names
-- joined, one view per kind of pj_dump line (docs/tables.md). Runs in
-- DuckDB and Spark SQL as it is, once the tables are views of their own
-- names (states, variables, events, links, containers, run).
CREATE OR REPLACE TEMPORARY VIEW pj_states AS
SELECT 'State' AS kind, c.name AS container, c.path, s.type,
       (s.start_ns - r.t0_ns) / 1e9 AS start_s,
       (s.end_ns - r.t0_ns) / 1e9 AS end_s,
       (s.end_ns - s.start_ns) / 1e9 AS duration_s,
       s.depth AS imbrication, s.value
FROM states s JOIN containers c ON c.container_id = s.container_id CROSS JOIN run r;

CREATE OR REPLACE TEMPORARY VIEW pj_variables AS
SELECT 'Variable' AS kind, c.name AS container, c.path, v.type,
       (v.start_ns - r.t0_ns) / 1e9 AS start_s,
       (v.end_ns - r.t0_ns) / 1e9 AS end_s,
       (v.end_ns - v.start_ns) / 1e9 AS duration_s, v.value
FROM variables v JOIN containers c ON c.container_id = v.container_id CROSS JOIN run r;

CREATE OR REPLACE TEMPORARY VIEW pj_events AS
SELECT 'Event' AS kind, c.name AS container, c.path, e.type,
       (e.time_ns - r.t0_ns) / 1e9 AS time_s, e.value
FROM events e JOIN containers c ON c.container_id = e.container_id CROSS JOIN run r;

CREATE OR REPLACE TEMPORARY VIEW pj_links AS
SELECT 'Link' AS kind, c.name AS container, c.path, l.type,
       (l.start_ns - r.t0_ns) / 1e9 AS start_s,
       (l.end_ns - r.t0_ns) / 1e9 AS end_s,
       (l.end_ns - l.start_ns) / 1e9 AS duration_s, l.value,
       f.name AS start_container, f.path AS start_path,
       t.name AS end_container, t.path AS end_path, l.key
FROM links l
JOIN containers c ON c.container_id = l.container_id
JOIN containers f ON f.container_id = l.from_container_id
JOIN containers t ON t.container_id = l.to_container_id
CROSS JOIN run r;

CREATE OR REPLACE TEMPORARY VIEW pj_containers AS
SELECT 'Container' AS kind, p.name AS parent, c.type,
       (c.create_ns - r.t0_ns) / 1e9 AS start_s,
       (c.destroy_ns - r.t0_ns) / 1e9 AS end_s,
       (c.destroy_ns - c.create_ns) / 1e9 AS duration_s, c.name, c.path
FROM containers c LEFT JOIN containers p ON p.container_id = c.parent_id CROSS JOIN run r;

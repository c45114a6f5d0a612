-- What did the kernel say of a rank while it waited in MPI_Recv? The
-- scheduler's states of the same process (the rank and its OS process
-- are one container), summed over the waits.
SELECT c.path AS rank, k.value AS kernel_state,
       SUM(GREATEST(0, LEAST(w.end_ns, k.end_ns) - GREATEST(w.start_ns, k.start_ns))) / 1e9 AS seconds
FROM states w
JOIN states k ON k.container_id = w.container_id AND k.type = 'OS state'
             AND k.start_ns < w.end_ns AND w.start_ns < k.end_ns
JOIN containers c ON c.container_id = w.container_id
WHERE w.value = 'MPI_Recv'
GROUP BY c.path, k.value
ORDER BY rank, kernel_state

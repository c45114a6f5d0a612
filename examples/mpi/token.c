/*
 * token.c: a token goes around the ranks; each holder works a little
 * (user state "work") before passing it on. Small enough to read in
 * integrador's output: per rank, MPI_Recv / work / MPI_Send on the
 * "MPI state" row, "executing" in between, and one arrow per hop.
 *
 *   mpecc -mpilog -O2 -o token token.c
 *   mpiexec -n 4 ./token 5          # writes token.clog2
 */
#include <mpi.h>
#include "integrador_anchor.h"
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, laps, token = 0, work_start, work_end;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    laps = argc > 1 ? atoi(argv[1]) : 3;

    MPE_Log_get_state_eventIDs(&work_start, &work_end);
    if (rank == 0)
        MPE_Describe_state(work_start, work_end, "work", "orange");

    for (int lap = 0; lap < laps; lap++) {
        if (size > 1 && (rank != 0 || lap > 0))
            MPI_Recv(&token, 1, MPI_INT, (rank + size - 1) % size, 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPE_Log_event(work_start, 0, NULL);
        usleep(2000 * (rank + 1));
        token++;
        MPE_Log_event(work_end, 0, NULL);
        if (size > 1 && (rank != size - 1 || lap < laps - 1))
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

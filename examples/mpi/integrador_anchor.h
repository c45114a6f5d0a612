/*
 * integrador_anchor.h: the MPI start anchor of integrador's conventions.md
 * section 5, for programs logged with MPE (`mpecc -mpilog`).
 *
 * MPE stamps events with seconds since the run started, per rank, and knows
 * nothing of OS processes. Include this header after <mpi.h>: right after
 * MPI_Init (MPE's logging wrapper, which opens the log) returns, every rank
 * logs one event named `integrador_anchor` whose cargo is the text
 *
 *     <epoch_seconds>.<microseconds> <pid>
 *
 * read from gettimeofday() and getpid(). integrador then places the rank on
 * its host's wall clock (offset = epoch - MPE time of the event) and draws
 * its MPI states on the same Process as the kernel's view of that pid.
 *
 * The text is packed with MPE's 's' token (a 2-byte big-endian length and
 * the characters), the encoding MPE's own tools decode for "%s" events.
 * Helper calls go through PMPI_ so they stay out of the log.
 */
#ifndef INTEGRADOR_ANCHOR_H
#define INTEGRADOR_ANCHOR_H

#include <mpi.h>
#include <mpe.h>
#include <stdio.h>
#include <sys/time.h>
#include <unistd.h>

static void integrador_log_anchor(void)
{
    int rank = 0, event = 0, len, pos = 0;
    struct timeval now;
    char text[64];
    MPE_LOG_BYTES cargo = {0};

    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* Every rank asks in the same order, so every rank gets the same id;
       one description (rank 0's) is enough for the merged log. */
    MPE_Log_get_solo_eventID(&event);
    if (rank == 0)
        MPE_Describe_info_event(event, "integrador_anchor", "white", "%s");

    gettimeofday(&now, NULL);
    len = snprintf(text, sizeof text, "%lld.%06ld %ld",
                   (long long) now.tv_sec, (long) now.tv_usec, (long) getpid());
    if (len > (int) sizeof cargo - 2) /* the length takes 2 of the 32 bytes */
        len = (int) sizeof cargo - 2;
    MPE_Log_pack(cargo, &pos, 's', len, text);
    MPE_Log_event(event, 0, cargo);
}

static int integrador_MPI_Init(int *argc, char ***argv)
{
    int rc = MPI_Init(argc, argv); /* not yet the macro below */
    if (rc == MPI_SUCCESS)
        integrador_log_anchor();
    return rc;
}

static int integrador_MPI_Init_thread(int *argc, char ***argv, int wanted,
                                      int *provided)
{
    int rc = MPI_Init_thread(argc, argv, wanted, provided);
    if (rc == MPI_SUCCESS)
        integrador_log_anchor();
    return rc;
}

#define MPI_Init(argc, argv) integrador_MPI_Init((argc), (argv))
#define MPI_Init_thread(argc, argv, wanted, provided) \
    integrador_MPI_Init_thread((argc), (argv), (wanted), (provided))

#endif

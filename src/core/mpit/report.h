/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The job report (WEFT_REPORT, WEFT_REPORT_FILE; schema in docs/job-report.md).
 */
#ifndef WEFT_CORE_MPIT_REPORT_H
#define WEFT_CORE_MPIT_REPORT_H

/* End of MPI_Init: allocate the traffic row, remember the counters (the
 * report covers MPI_Init's end to MPI_Finalize's start). */
void weft_report_start(void);

/* Start of MPI_Finalize, on every rank (collective over MPI_COMM_WORLD):
 * gather to rank 0 and print / write the report if WEFT_REPORT or
 * WEFT_REPORT_FILE asks for it on any rank (they should be the same on every
 * rank, scope ALL_EQ; when they differ rank 0 warns and the largest level is
 * used, so nobody hangs). */
void weft_report_finish(void);

#endif

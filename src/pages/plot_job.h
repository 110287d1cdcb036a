/* plot_job: one gnuplot chart in the making — a private temporary directory ($TMPDIR, else
 * /tmp) holding the script and its data files, gnuplot run there with its exit status checked,
 * the chart delivered to a file or as SVG text, the directory removed. The charts (plot.c,
 * plot_load.c) write their script into gp. */
#ifndef NETRIG_PLOT_JOB_H
#define NETRIG_PLOT_JOB_H

#include <stddef.h>
#include <stdio.h>

#include "plot.h"

struct plot_job {
    char dir[512];
    char out[600]; /* the chart gnuplot writes */
    FILE *gp;      /* the script */
};

/* Creates the directory and the script with the terminal (900 x height) set. 0 or -errno. */
int plot_job_open(struct plot_job *j, enum plot_format f, int height, char *err, size_t errlen);
/* A data file name in the job's directory, opened for writing (path gets its full name). */
FILE *plot_job_data(struct plot_job *j, const char *name, char *path, size_t len);
/* Runs gnuplot and delivers the chart to o; always closes the job. 0, or -1 with err. */
int plot_job_finish(struct plot_job *j, struct plot_out *o, char *err, size_t errlen);
/* Removes the directory and what it holds. */
void plot_job_close(struct plot_job *j);
/* A gnuplot single-quoted string: ' is doubled. */
void plot_gp_str(FILE *f, const char *s);
/* A rate axis in round units: the divisor, *unit "Gbit/s", "Mbit/s" or "kbit/s". */
double plot_bps_scale(double max, const char **unit);

#endif

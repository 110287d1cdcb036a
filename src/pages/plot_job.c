/* plot_job: a gnuplot run in a temporary directory. */
#include "plot_job.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A gnuplot single-quoted string: ' is doubled. */
void plot_gp_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        if (*s != '\n')
            fputc(*s, f);
    }
    fputc('\'', f);
}

static void plot_job_path(const struct plot_job *j, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", j->dir, name);
}

int plot_job_open(struct plot_job *j, enum plot_format f, int height, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    char script[600];

    memset(j, 0, sizeof(*j));
    snprintf(j->dir, sizeof(j->dir), "%s/netrig-plot.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
    if (!mkdtemp(j->dir)) {
        snprintf(err, errlen, "cannot create a temporary directory for gnuplot in '%s': %s",
                 tmp && *tmp == '/' ? tmp : "/tmp", strerror(errno));
        return -errno;
    }
    plot_job_path(j, "plot.gp", script, sizeof(script));
    plot_job_path(j, f == PLOT_SVG ? "out.svg" : "out.png", j->out, sizeof(j->out));
    j->gp = fopen(script, "w");
    if (!j->gp) {
        snprintf(err, errlen, "cannot write '%s': %s", script, strerror(errno));
        rmdir(j->dir);
        return -EIO;
    }
    if (f == PLOT_SVG)
        fprintf(j->gp,
                "set terminal svg size 900,%d noenhanced font 'sans,11' "
                "background rgb 'white'\n",
                height);
    else
        fprintf(j->gp, "set terminal pngcairo size 900,%d noenhanced font 'sans,10'\n", height);
    fputs("set output ", j->gp);
    plot_gp_str(j->gp, j->out);
    fputs("\nset grid\nset key below\nset border 3\nset tics nomirror\n", j->gp);
    return 0;
}

static int rm_entry(const char *name, void *arg)
{
    char p[700];

    snprintf(p, sizeof(p), "%s/%s", ((struct plot_job *)arg)->dir, name);
    unlink(p);
    return 0;
}

void plot_job_close(struct plot_job *j)
{
    DIR *d;
    struct dirent *e;

    if (j->gp)
        fclose(j->gp);
    j->gp = NULL;
    if (!j->dir[0] || !(d = opendir(j->dir)))
        return;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rm_entry(e->d_name, j);
    closedir(d);
    rmdir(j->dir);
    j->dir[0] = '\0';
}

FILE *plot_job_data(struct plot_job *j, const char *name, char *path, size_t len)
{
    plot_job_path(j, name, path, len);
    return fopen(path, "w");
}

static int read_file(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 65536, n = 0, got;
    char *b = malloc(cap + 1);

    if (!f || !b) {
        if (f)
            fclose(f);
        free(b);
        return -EIO;
    }
    while ((got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(b, 2 * cap + 1);
            if (!nb) {
                free(b);
                fclose(f);
                return -ENOMEM;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

static void first_line(const char *path, char *buf, size_t len)
{
    char *text = NULL, *p;
    size_t n;

    buf[0] = '\0';
    if (read_file(path, &text, &n))
        return;
    for (p = text; *p == '\n' || *p == ' '; p++)
        ;
    p[strcspn(p, "\n")] = '\0';
    snprintf(buf, len, "%s", p);
    free(text);
}

/* Runs gnuplot on the script; 0, or -1 with err. */
static int plot_job_gnuplot(struct plot_job *j, char *err, size_t errlen)
{
    char script[600], errpath[600], line[256];
    int status = 0;
    pid_t pid;

    fclose(j->gp);
    j->gp = NULL;
    plot_job_path(j, "plot.gp", script, sizeof(script));
    plot_job_path(j, "gnuplot.err", errpath, sizeof(errpath));
    pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot start gnuplot: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) {
            dup2(fd, 2);
            dup2(fd, 1);
        }
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        snprintf(err, errlen,
                 "gnuplot is not installed: install it (Debian: apt-get install "
                 "gnuplot-nox) to draw charts");
        return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || access(j->out, R_OK)) {
        first_line(errpath, line, sizeof(line));
        snprintf(
            err, errlen, "gnuplot failed (%s %d)%s%s", WIFEXITED(status) ? "exit status" : "signal",
            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), line[0] ? ": " : "", line);
        return -1;
    }
    return 0;
}

static int copy_out(const struct plot_job *j, const char *dst, char *err, size_t errlen)
{
    char *buf;
    size_t n;
    FILE *f;

    if (read_file(j->out, &buf, &n)) {
        snprintf(err, errlen, "cannot read gnuplot's output");
        return -1;
    }
    f = fopen(dst, "wb");
    if (!f || fwrite(buf, 1, n, f) != n || fclose(f)) {
        snprintf(err, errlen, "cannot write '%s': %s", dst, strerror(errno));
        if (f)
            unlink(dst);
        free(buf);
        return -1;
    }
    free(buf);
    return 0;
}

/* Runs the finished script and delivers the chart; always closes the job. */
int plot_job_finish(struct plot_job *j, struct plot_out *o, char *err, size_t errlen)
{
    size_t n;
    int rc = plot_job_gnuplot(j, err, errlen);

    if (!rc && o->path)
        rc = copy_out(j, o->path, err, errlen);
    else if (!rc && read_file(j->out, &o->svg, &n)) {
        snprintf(err, errlen, "cannot read gnuplot's output");
        rc = -1;
    }
    plot_job_close(j);
    return rc;
}

/* A rate axis in round units. */
double plot_bps_scale(double max, const char **unit)
{
    if (max >= 1e9) {
        *unit = "Gbit/s";
        return 1e9;
    }
    if (max >= 1e6) {
        *unit = "Mbit/s";
        return 1e6;
    }
    *unit = "Kbit/s"; /* the unit names of units_format_rate */
    return 1e3;
}

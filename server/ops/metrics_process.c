/* process_* families, named and typed as the Prometheus client libraries'
 * process collector (see metrics_process.h). */
#include "ops/metrics_process.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

typedef struct proc_stat {
    double utime_ticks, stime_ticks, start_ticks;
    double vsize_bytes, rss_pages;
} proc_stat;

/* /proc/self/stat: the fields after the command name, which may itself
 * hold spaces and parentheses, so parsing starts after its last ')'. */
static int read_self_stat(proc_stat *out)
{
    char buf[2048];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    /* field 3 (state) is the first after ") "; fields are 1-based */
    double v[25] = {0};
    char *save = NULL;
    int field = 3;
    for (char *tok = strtok_r(p + 1, " ", &save); tok && field <= 24;
         tok = strtok_r(NULL, " ", &save), field++)
        v[field] = strtod(tok, NULL);
    if (field <= 24)
        return -1;
    out->utime_ticks = v[14];
    out->stime_ticks = v[15];
    out->start_ticks = v[22];
    out->vsize_bytes = v[23];
    out->rss_pages = v[24];
    return 0;
}

/* Seconds since the epoch when the machine booted (/proc/stat btime). */
static double boot_time_seconds(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return 0;
    char line[256];
    double btime = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "btime ", 6) == 0) {
            btime = strtod(line + 6, NULL);
            break;
        }
    fclose(f);
    return btime;
}

static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory stream's own descriptor */
}

void rd_metrics_render_process_collector(strbuf *sb)
{
    proc_stat st;
    long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    if (read_self_stat(&st) == 0 && ticks > 0 && page > 0) {
        sb_family(sb, "process_cpu_seconds_total", "counter",
                  "Total user and system CPU time spent in seconds.");
        sb_printf(sb, "process_cpu_seconds_total %.2f\n",
                  (st.utime_ticks + st.stime_ticks) / (double)ticks);
        sb_family(sb, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
        sb_printf(sb, "process_resident_memory_bytes %.0f\n", st.rss_pages * (double)page);
        sb_family(sb, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
        sb_printf(sb, "process_virtual_memory_bytes %.0f\n", st.vsize_bytes);
        double btime = boot_time_seconds();
        if (btime > 0) {
            sb_family(sb, "process_start_time_seconds", "gauge",
                      "Start time of the process since unix epoch in seconds.");
            sb_printf(sb, "process_start_time_seconds %.2f\n",
                      btime + st.start_ticks / (double)ticks);
        }
    }
    long fds = open_fds();
    if (fds >= 0) {
        sb_family(sb, "process_open_fds", "gauge", "Number of open file descriptors.");
        sb_printf(sb, "process_open_fds %ld\n", fds);
    }
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
        sb_family(sb, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
        sb_printf(sb, "process_max_fds %" PRIu64 "\n", (uint64_t)lim.rlim_cur);
    }
}

/* Redis's clock between readings: a TIME reply read on a connection, and
 * the local monotonic clock around its round trip, tell the server's time
 * during a later round trip on the same connection within a window as
 * wide as the two round trips plus the drift the two clocks may have
 * had since. A round trip that needs Redis's time (an answer given
 * without a script, redis_in_place.c) so sends TIME only when the
 * connection's reading is older than RD_CLOCK_READING_MAX_US; TIME is a
 * quarter of such a round trip's work in redis-server. The window is
 * Redis's own clock, as a script's TIME is: this replica's clock plays no
 * part. No I/O here. */
#ifndef RD_STORE_REDIS_CLOCK_H
#define RD_STORE_REDIS_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* How long a reading stands for the server's clock. It bounds how long a
 * step of that clock (an operator or NTP setting it) goes unseen: a second,
 * within the smallest slack the record's last_seen is refreshed by. */
#define RD_CLOCK_READING_MAX_US 1000000
/* How fast the two clocks may drift apart: 1000 ppm, twice the most NTP
 * slews a clock by. */
#define RD_CLOCK_DRIFT_PPM 1000

typedef struct rd_clock_reading {
    const void *conn;      /* the connection it was read on; NULL = none */
    int64_t server_us;     /* TIME's reply */
    int64_t sent_us;       /* the local monotonic clock when TIME was sent */
    int64_t answered_us;   /* ... and when its reply came */
} rd_clock_reading;

/* Whether the reading answers for round trips on conn sent at now_us. */
static inline bool rd_clock_reading_fresh(const rd_clock_reading *c, const void *conn,
                                          int64_t now_us)
{
    return c->conn != NULL && c->conn == conn && now_us >= c->answered_us &&
           now_us - c->answered_us < RD_CLOCK_READING_MAX_US;
}

/* The server's time, in ms, while it ran a round trip sent at sent_us and
 * answered at answered_us: in [*lo_ms, *hi_ms]. TIME ran at some instant
 * of its own round trip, the commands at some instant of theirs. */
static inline void rd_clock_window(const rd_clock_reading *c, int64_t sent_us,
                                   int64_t answered_us, int64_t *lo_ms, int64_t *hi_ms)
{
    int64_t drift = (answered_us - c->sent_us) / (1000000 / RD_CLOCK_DRIFT_PPM) + 1;
    int64_t lo = c->server_us + (sent_us - c->answered_us) - drift;
    int64_t hi = c->server_us + (answered_us - c->sent_us) + drift;
    *lo_ms = lo < 0 ? 0 : lo / 1000;
    *hi_ms = hi < 0 ? 0 : hi / 1000;
}

#endif

/* The subscriber thread (redis_subscriber.c): breaker events from Redis
 * drop cache entries and reach the change listener. */
#ifndef RD_STORE_REDIS_SUBSCRIBER_H
#define RD_STORE_REDIS_SUBSCRIBER_H

#include "store/redis_conn.h"

/* Passes a published breaker change on to the registered listener. */
void rd_redis_notify_listener(redis_store *r, const char *tool_id);

int rd_redis_subscriber_start(redis_store *r, rd_status *st);
void rd_redis_subscriber_stop(redis_store *r);

#endif

/* The key-to-slot function of Redis Cluster: CRC16 (XMODEM) of the key's
 * hash tag, modulo 16384, as the Redis Cluster specification gives it.
 * The table is computed once from the polynomial rather than written out. */
#include <pthread.h>

#include "store/redis_crc16.h"

static uint16_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void fill_table(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint16_t crc = (uint16_t)(i << 8);
        for (int bit = 0; bit < 8; bit++)
            crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
        table[i] = crc;
    }
}

uint16_t rd_redis_crc16(const char *buf, size_t len)
{
    pthread_once(&table_once, fill_table);
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++)
        crc = (uint16_t)((crc << 8) ^ table[((crc >> 8) ^ (uint8_t)buf[i]) & 0xff]);
    return crc;
}

unsigned rd_redis_key_slot(const char *key, size_t len)
{
    size_t open = 0;
    while (open < len && key[open] != '{')
        open++;
    if (open < len) {
        size_t close = open + 1;
        while (close < len && key[close] != '}')
            close++;
        if (close < len && close > open + 1)
            return rd_redis_crc16(key + open + 1, close - open - 1) & (RD_CLUSTER_SLOTS - 1);
    }
    return rd_redis_crc16(key, len) & (RD_CLUSTER_SLOTS - 1);
}

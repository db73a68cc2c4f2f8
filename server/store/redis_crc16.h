/* Redis Cluster key slots (redis_crc16.c). */
#ifndef RD_STORE_REDIS_CRC16_H
#define RD_STORE_REDIS_CRC16_H

#include <stddef.h>
#include <stdint.h>

#define RD_CLUSTER_SLOTS 16384

/* CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, no reflection,
 * the checksum Redis Cluster hashes keys with. crc16("123456789") = 0x31C3. */
uint16_t rd_redis_crc16(const char *buf, size_t len);

/* The cluster slot of a key: of the text between the first '{' and the
 * next '}' when that is not empty (the hash tag), else of the whole key. */
unsigned rd_redis_key_slot(const char *key, size_t len);

#endif

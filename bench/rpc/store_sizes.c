/* The memory store's own estimate of the bytes one tracked breaker costs,
 * from its private structs (store/memory_internal.h):
 *   the node allocation (struct tool_node + the tool id + NUL), rounded the
 *   way glibc's malloc rounds a chunk (8 bytes of header, 16-byte steps,
 *   32 at least), plus the bucket pointers, between 1 and 2 per entry since
 *   a shard's table doubles when its count reaches its bucket count.
 *
 *   store_sizes [TOOL_ID]   prints one JSON object. */
#include "store/memory_internal.h"

#include <stdio.h>

static size_t glibc_chunk(size_t request)
{
    size_t chunk = (request + 8 + 15) & ~(size_t)15;
    return chunk < 32 ? 32 : chunk;
}

int main(int argc, char **argv)
{
    const char *tool_id = argc > 1 ? argv[1] : "tool-12345";
    size_t request = sizeof(tool_node) + strlen(tool_id) + 1;
    size_t chunk = glibc_chunk(request);
    printf("{\"tool_node\": %zu, \"rd_breaker\": %zu, \"tool_id\": \"%s\", \"allocation\": %zu, "
           "\"malloc_chunk\": %zu, \"buckets_low\": %zu, \"buckets_high\": %zu, "
           "\"summary\": \"node %zu B (rd_breaker %zu B) + id %zu B = malloc chunk %zu B, "
           "+ 8..16 B of bucket pointers = %zu..%zu B per breaker\"}\n",
           sizeof(tool_node), sizeof(rd_breaker), tool_id, request, chunk, sizeof(node *),
           2 * sizeof(node *), sizeof(tool_node), sizeof(rd_breaker), strlen(tool_id) + 1, chunk,
           chunk + sizeof(node *), chunk + 2 * sizeof(node *));
    return 0;
}

/* The hot requests read straight from their bytes into the engine's structs.
 *
 * The generic path decodes a request into protobuf-c's structs (pbread.c,
 * else protobuf-c), then converts and checks them (codec.c), naming the
 * field of any error. For a Decide that is two passes over every field,
 * with each string measured again on the way. A reader here makes one
 * pass and checks each string where its length is at hand.
 *
 * Field numbers and wire types come from the descriptors
 * (gen/rd_pbfields.h), and each field is checked by its rule in codec.h,
 * the rule codec.c applies on the generic path. A reader accepts only a
 * request the generic path accepts, and then fills the same structs with
 * the same values. Everything else is declined: an
 * error to report, a field sent twice, an unknown field, a Decide's plan,
 * malformed bytes. The caller then hands the same bytes to the generic
 * path, whose answer stands. fuzz_requests checks this promise on
 * arbitrary bytes. */
#ifndef RD_TRANSPORT_REQUESTS_H
#define RD_TRANSPORT_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain/arena.h"
#include "engine/decide.h"

/* A DecideRequest from data[0, len). True: *in is filled, in->error points
 * to err when the request carries an error, and every string is a copy in
 * the arena (valid UTF-8, within its field's limit). False: declined; *in
 * and *err hold nothing of use. data is only read. */
bool rd_request_decide(const uint8_t *data, size_t len, rd_arena *a, rd_decide_input *in,
                       rd_tool_error *err);

/* A ClassifyRequest from data[0, len). True: *tool_id and *err are filled
 * (both fields are required), every string a copy in the arena as above.
 * False: declined; *tool_id and *err hold nothing of use. data is only
 * read. */
bool rd_request_classify(const uint8_t *data, size_t len, rd_arena *a, const char **tool_id,
                         rd_tool_error *err);

/* A RecordOutcomeRequest from data[0, len). True: *in is filled, in->error
 * points to err when the request carries an error (never with success),
 * and every string is a copy in the arena as above. False: declined; *in
 * and *err hold nothing of use. data is only read. */
bool rd_request_outcome(const uint8_t *data, size_t len, rd_arena *a, rd_outcome_input *in,
                        rd_tool_error *err);

#endif

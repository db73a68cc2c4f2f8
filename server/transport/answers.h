/* The answers of the four hot RPCs (Classify, Decide, RecordOutcome,
 * GetBreakerState) written as protobuf bytes straight from the decision
 * engine's structs.
 *
 * codec.c can build the same answers as protobuf-c messages, which the
 * generic packer (pbpack.c) then walks field descriptor by field
 * descriptor; for a Decide answer with an error those two steps cost more
 * than the decision itself. Here each message is one function that writes
 * its fields backwards (pbwire.h) in field-number order, so nothing is
 * allocated and nothing is looked up.
 *
 * Field numbers come from the descriptors (gen/rd_pbfields.h). The bytes
 * equal protobuf_c_message_pack() of the protobuf-c message holding the
 * same struct's values: tests/unit/test_answers.c checks that over many
 * generated structs against its own reference builder
 * (tests/unit/answer_reference.h), and the fuzz targets check that every
 * answer the handlers give decodes and re-encodes to the same bytes.
 *
 * Each function writes into the end of buf[0, cap) and returns the length n
 * (the answer is buf[cap - n, cap)), or SIZE_MAX when cap is too small.
 * Nothing is allocated; the structs are only read.
 *
 * Room is checked once per message, for the most its fields can take, so a
 * buffer of exactly the answer's size may be refused; one of the answer's
 * size plus RD_ANSWER_SLACK bytes never is. */
#ifndef RD_TRANSPORT_ANSWERS_H
#define RD_TRANSPORT_ANSWERS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/decide.h"

/* The most a message's reservation can ask beyond its bytes: a 15-byte
 * head for each of a breaker's 17 fields (the most of any message), rounded
 * up. */
#define RD_ANSWER_SLACK 256

size_t rd_answer_classify(uint8_t *buf, size_t cap, const rd_classify_result *r);
/* turn_id: the request's, written into every trace event ("" or NULL: none). */
size_t rd_answer_decide(uint8_t *buf, size_t cap, const char *turn_id, const rd_decision *d);
size_t rd_answer_outcome(uint8_t *buf, size_t cap, const rd_outcome_result *r);
size_t rd_answer_breakers(uint8_t *buf, size_t cap, const rd_breaker_view *v, size_t n);

#endif

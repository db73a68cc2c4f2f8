/* Internal to server/config: the rules file's `words:` section
 * (docs/CLASSIFICATION.md, "The words tier") and its `word_weights:`
 * section ("Word weights"). */
#ifndef RD_CONFIG_WORDS_PARSE_H
#define RD_CONFIG_WORDS_PARSE_H

#include "config/yaml_util.h"
#include "domain/word_weights.h"
#include "domain/words.h"

/* The `words:` mapping of root into a new model in *out (owned by the
 * caller, freed with rd_word_model_free); *out stays NULL when the file
 * has no such section. */
int rd_words_parse(const rd_yctx *c, const rd_ynode *root, rd_word_model **out);

/* The `word_weights:` mapping of root into a new model in *out (owned
 * by the caller, freed with rd_word_weights_free); *out stays NULL when
 * the file has no such section. */
int rd_word_weights_parse(const rd_yctx *c, const rd_ynode *root, rd_word_weights **out);

#endif

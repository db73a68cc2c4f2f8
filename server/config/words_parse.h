/* Internal to server/config: the rules file's `words:` section
 * (docs/CLASSIFICATION.md, "The words tier") and its `category_words:`
 * section ("Categories from words"). */
#ifndef RD_CONFIG_WORDS_PARSE_H
#define RD_CONFIG_WORDS_PARSE_H

#include "config/yaml_util.h"
#include "domain/category_words.h"
#include "domain/words.h"

/* The `words:` mapping of root into a new model in *out (owned by the
 * caller, freed with rd_word_model_free); *out stays NULL when the file
 * has no such section. */
int rd_words_parse(const rd_yctx *c, const rd_ynode *root, rd_word_model **out);

/* The `category_words:` mapping of root into a new model in *out (owned
 * by the caller, freed with rd_category_words_free); *out stays NULL when
 * the file has no such section. */
int rd_category_words_parse(const rd_yctx *c, const rd_ynode *root, rd_category_words **out);

#endif

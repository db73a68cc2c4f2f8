/* The corpus files of real error messages (tests/corpus), for the tests
 * that read them all: test_corpus.c (accuracy) and test_words.c (the
 * words tier's counts). */
#ifndef RD_TEST_CORPUS_FILES_H
#define RD_TEST_CORPUS_FILES_H

#ifndef RD_SOURCE_DIR
#define RD_SOURCE_DIR "."
#endif

/* The files: issue 4's corpus, then issue 34's vendor corpus and its
 * eighth to forty-sixth batches (files of their own, same families and split
 * rule); the vendor files alone have a held-out split and are measured as
 * one. */
enum {
    CORPUS_ISSUE4,
    CORPUS_VENDORS,
    CORPUS_BATCH8,
    CORPUS_BATCH9,
    CORPUS_BATCH10,
    CORPUS_BATCH11,
    CORPUS_BATCH12,
    CORPUS_BATCH13,
    CORPUS_BATCH14,
    CORPUS_BATCH15,
    CORPUS_BATCH16,
    CORPUS_BATCH17,
    CORPUS_BATCH18,
    CORPUS_BATCH19,
    CORPUS_BATCH20,
    CORPUS_BATCH21,
    CORPUS_BATCH22,
    CORPUS_BATCH23,
    CORPUS_BATCH24,
    CORPUS_BATCH25,
    CORPUS_BATCH26,
    CORPUS_BATCH27,
    CORPUS_BATCH28,
    CORPUS_BATCH29,
    CORPUS_BATCH30,
    CORPUS_BATCH31,
    CORPUS_BATCH32,
    CORPUS_BATCH33,
    CORPUS_BATCH34,
    CORPUS_BATCH35,
    CORPUS_BATCH36,
    CORPUS_BATCH37,
    CORPUS_BATCH38,
    CORPUS_BATCH39,
    CORPUS_BATCH40,
    CORPUS_BATCH41,
    CORPUS_BATCH42,
    CORPUS_BATCH43,
    CORPUS_BATCH44,
    CORPUS_BATCH45,
    CORPUS_BATCH46,
    N_CORPORA
};
static const char *const CORPUS_PATHS[N_CORPORA] = {
    RD_SOURCE_DIR "/tests/corpus/errors.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-vendors.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch8.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch9.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch10.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch11.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch12.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch13.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch14.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch15.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch16.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch17.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch18.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch19.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch20.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch21.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch22.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch23.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch24.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch25.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch26.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch27.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch28.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch29.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch30.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch31.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch32.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch33.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch34.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch35.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch36.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch37.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch38.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch39.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch40.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch41.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch42.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch43.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch44.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch45.yaml",
    RD_SOURCE_DIR "/tests/corpus/errors-batch46.yaml",
};

#endif
